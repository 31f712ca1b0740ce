package llm

import (
	"testing"

	"github.com/BurntSushi/toml"
)

func TestLookupCapabilities(t *testing.T) {
	tests := []struct {
		model                         string
		vision, webSearch, toolSearch bool
		temperature                   bool
		maxOutput                     int
	}{
		{"claude-opus-4-6", true, true, true, true, 128000},
		{"claude-sonnet-4-6", true, true, true, true, 64000},
		{"claude-opus-4-20250514", true, true, true, true, 32000},
		{"claude-opus-4-1-20250805", true, true, true, true, 32000},
		{"claude-sonnet-4-20250514", true, true, true, true, 64000},
		{"claude-opus-4-5-20251101", true, true, false, true, 64000},
		{"claude-sonnet-4-5", true, true, false, true, 64000},
		{"claude-haiku-4-5-20251001", true, true, false, true, 64000},
		{"claude-3-5-haiku-20241022", true, true, false, true, 8192},
		{"Anthropic/Claude-Sonnet-4-6", true, true, true, true, 64000},
		{"gpt-4o", true, false, false, true, 16384},
		{"gpt-4o-mini", true, false, false, true, 16384},
		{"gpt-4.1-nano", true, false, false, true, 32768},
		{"gpt-5", true, false, false, false, 128000},
		{"gpt-5-mini", true, false, false, false, 128000},
		{"gpt-5.4", true, false, true, false, 128000},
		{"gpt-5.4-2026-03-05", true, false, true, false, 128000},
		{"gpt-5.4-pro", true, false, true, false, 128000},
		{"gpt-5.4-mini", true, false, false, false, 128000},
		{"gpt-5-search-api", true, true, false, false, 16384},
		{"gpt-5-search-api-2025-10-14", true, true, false, false, 16384},
		{"gpt-4o1", false, false, false, true, 0},
		{"Qwen/Qwen3-32B", false, false, false, true, 0},
		{"llama-3.1-8b", false, false, false, true, 0},
		{"", false, false, false, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			c := LookupCapabilities(tt.model, nil)
			if c.SupportsVision != tt.vision || c.NativeWebSearch != tt.webSearch ||
				c.NativeToolSearch != tt.toolSearch || c.SupportsTemperature != tt.temperature || c.MaxOutput != tt.maxOutput {
				t.Errorf("LookupCapabilities(%q) = %+v", tt.model, c)
			}
		})
	}
}

func TestCapabilityOverridesFromTOML(t *testing.T) {
	var cfg struct {
		Models map[string]struct {
			Model        string             `toml:"model"`
			Capabilities CapabilityOverride `toml:"capabilities"`
		} `toml:"models"`
	}
	const doc = `
[models.local]
model = "qwen3-vl"
[models.local.capabilities]
supports_vision = true
supports_tool_search = true
context_window = 65536

[models.strict]
model = "claude-opus-4-6"
[models.strict.capabilities]
supports_web_search = false
supports_temperature = false
max_output = 4096
`
	if _, err := toml.Decode(doc, &cfg); err != nil {
		t.Fatal(err)
	}
	overrides := map[string]CapabilityOverride{}
	for _, m := range cfg.Models {
		overrides[m.Model] = m.Capabilities
	}
	local := LookupCapabilities("qwen3-vl", overrides)
	want := Capabilities{SupportsVision: true, NativeToolSearch: true, SupportsTemperature: true, ContextWindow: 65536}
	if local != want {
		t.Errorf("local = %+v, want %+v", local, want)
	}
	strict := LookupCapabilities("claude-opus-4-6", overrides)
	want = Capabilities{SupportsVision: true, NativeToolSearch: true, ContextWindow: 200000, MaxOutput: 4096}
	if strict != want {
		t.Errorf("strict = %+v, want %+v", strict, want)
	}
	// Unset keys leave the table alone; other models are unaffected.
	if c := LookupCapabilities("claude-sonnet-4-6", overrides); !c.NativeWebSearch {
		t.Errorf("override leaked to another model: %+v", c)
	}
}

func TestDetectProvider(t *testing.T) {
	tests := map[string]string{
		"https://api.anthropic.com":        ProviderAnthropic,
		"https://api.anthropic.com/v1":     ProviderAnthropic,
		"HTTPS://API.ANTHROPIC.COM/":       ProviderAnthropic,
		"https://anthropic.com":            ProviderAnthropic,
		"https://api.openai.com/v1":        ProviderOpenAI,
		"http://localhost:8000/v1":         ProviderOpenAI,
		"https://anthropic.com.evil.io/v1": ProviderOpenAI,
		"https://notanthropic.com":         ProviderOpenAI,
		"":                                 ProviderOpenAI,
		"::not a url":                      ProviderOpenAI,
	}
	for in, want := range tests {
		if got := DetectProvider(in); got != want {
			t.Errorf("DetectProvider(%q) = %q, want %q", in, got, want)
		}
	}
}
