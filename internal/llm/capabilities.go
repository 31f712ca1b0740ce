package llm

import (
	"net/url"
	"strings"
)

// Capabilities says what a model can do beyond plain chat with function
// tools. Tools and adapters consult it: read_file sends images only with
// SupportsVision, adapters swap the web_search function for the provider's
// server-side search with NativeWebSearch, and the engine defers MCP tools
// to the provider with NativeToolSearch.
type Capabilities struct {
	SupportsVision bool `json:"supports_vision"`
	// NativeWebSearch: the provider runs web_search itself (Anthropic's
	// web_search_20250305 server tool, OpenAI's web_search_options).
	NativeWebSearch bool `json:"supports_web_search"`
	// NativeToolSearch: the provider searches deferred tools itself.
	NativeToolSearch bool `json:"supports_tool_search"`
	// SupportsTemperature is false for models that reject a temperature.
	SupportsTemperature bool `json:"supports_temperature"`
	// ContextWindow and MaxOutput are in tokens; 0 means unknown.
	ContextWindow int `json:"context_window"`
	MaxOutput     int `json:"max_output"`
}

// CapabilityOverride is the `[models.NAME.capabilities]` table of
// config.toml. Only the keys that are set override the table's values.
type CapabilityOverride struct {
	SupportsVision      *bool `toml:"supports_vision" json:"supports_vision,omitempty"`
	SupportsWebSearch   *bool `toml:"supports_web_search" json:"supports_web_search,omitempty"`
	SupportsToolSearch  *bool `toml:"supports_tool_search" json:"supports_tool_search,omitempty"`
	SupportsTemperature *bool `toml:"supports_temperature" json:"supports_temperature,omitempty"`
	ContextWindow       *int  `toml:"context_window" json:"context_window,omitempty"`
	MaxOutput           *int  `toml:"max_output" json:"max_output,omitempty"`
}

// Apply returns c with the set fields of o written over it.
func (o CapabilityOverride) Apply(c Capabilities) Capabilities {
	if o.SupportsVision != nil {
		c.SupportsVision = *o.SupportsVision
	}
	if o.SupportsWebSearch != nil {
		c.NativeWebSearch = *o.SupportsWebSearch
	}
	if o.SupportsToolSearch != nil {
		c.NativeToolSearch = *o.SupportsToolSearch
	}
	if o.SupportsTemperature != nil {
		c.SupportsTemperature = *o.SupportsTemperature
	}
	if o.ContextWindow != nil {
		c.ContextWindow = *o.ContextWindow
	}
	if o.MaxOutput != nil {
		c.MaxOutput = *o.MaxOutput
	}
	return c
}

// capabilityRule maps a model name pattern to its capabilities. A pattern
// matches the name itself or the name followed by a separator ("-", ".",
// ":", "@"), so "gpt-4o" covers "gpt-4o-mini" but not "gpt-4o1"; an exact
// rule matches only the name or a dated snapshot of it ("-20250514",
// "-2025-10-14"). The longest matching pattern wins.
type capabilityRule struct {
	pattern string
	exact   bool
	caps    Capabilities
}

// capabilityTable is the single source of model capabilities (documented
// in docs/providers.md).
func capabilityTable() []capabilityRule {
	// Claude models: vision and server-side web search everywhere; native
	// tool search on the 4 and 4.6 lines but not on 4.5 (behavior.md §3).
	claude := Capabilities{SupportsVision: true, NativeWebSearch: true, SupportsTemperature: true, ContextWindow: 200000, MaxOutput: 8192}
	claude4 := claude
	claude4.MaxOutput = 64000
	claudeSearch := claude4
	claudeSearch.NativeToolSearch = true
	opus := claudeSearch
	opus.MaxOutput = 32000
	opus46 := claudeSearch
	opus46.MaxOutput = 128000
	return []capabilityRule{
		{pattern: "claude", caps: claude},
		{pattern: "claude-3-7-sonnet", caps: claude4},
		{pattern: "claude-sonnet-4", caps: claudeSearch},
		{pattern: "claude-opus-4", caps: opus},
		{pattern: "claude-sonnet-4-5", caps: claude4},
		{pattern: "claude-opus-4-5", caps: claude4},
		{pattern: "claude-haiku-4-5", caps: claude4},
		{pattern: "claude-sonnet-4-6", caps: claudeSearch},
		{pattern: "claude-opus-4-6", caps: opus46},

		{pattern: "gpt-4o", caps: Capabilities{SupportsVision: true, SupportsTemperature: true, ContextWindow: 128000, MaxOutput: 16384}},
		{pattern: "gpt-4-turbo", caps: Capabilities{SupportsVision: true, SupportsTemperature: true, ContextWindow: 128000, MaxOutput: 4096}},
		{pattern: "gpt-4.1", caps: Capabilities{SupportsVision: true, SupportsTemperature: true, ContextWindow: 1047576, MaxOutput: 32768}},
		{pattern: "o1", caps: Capabilities{SupportsVision: true, ContextWindow: 200000, MaxOutput: 100000}},
		{pattern: "o3", caps: Capabilities{SupportsVision: true, ContextWindow: 200000, MaxOutput: 100000}},
		{pattern: "o4-mini", caps: Capabilities{SupportsVision: true, ContextWindow: 200000, MaxOutput: 100000}},
		{pattern: "gpt-5", caps: Capabilities{SupportsVision: true, ContextWindow: 400000, MaxOutput: 128000}},
		{pattern: "gpt-5-search-api", caps: Capabilities{SupportsVision: true, NativeWebSearch: true, ContextWindow: 128000, MaxOutput: 16384}},
		{pattern: "gpt-5.4", exact: true, caps: Capabilities{SupportsVision: true, NativeToolSearch: true, ContextWindow: 1050000, MaxOutput: 128000}},
		{pattern: "gpt-5.4-pro", exact: true, caps: Capabilities{SupportsVision: true, NativeToolSearch: true, ContextWindow: 1050000, MaxOutput: 128000}},
	}
}

// LookupCapabilities returns the capabilities of model from the built-in
// table, with overrides[model] applied when present. The match ignores case
// and a routing prefix such as "anthropic/" or "openai/"; the override key
// is tried as given and then lower-cased.
func LookupCapabilities(model string, overrides map[string]CapabilityOverride) Capabilities {
	// Local and unlisted models: nothing native, no vision (enable it with
	// supports_vision = true), size unknown.
	caps := Capabilities{SupportsTemperature: true}
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	best := -1
	for _, r := range capabilityTable() {
		if len(r.pattern) > best && r.matches(name) {
			best, caps = len(r.pattern), r.caps
		}
	}
	if o, ok := overrides[model]; ok {
		return o.Apply(caps)
	}
	if o, ok := overrides[strings.ToLower(model)]; ok {
		return o.Apply(caps)
	}
	return caps
}

func (r capabilityRule) matches(name string) bool {
	rest, ok := strings.CutPrefix(name, r.pattern)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	if r.exact {
		return isDateSuffix(rest)
	}
	return strings.ContainsRune("-.:@", rune(rest[0]))
}

// isDateSuffix reports whether s is "-" followed by digits and dashes only
// (a snapshot date such as "-20250514" or "-2025-10-14").
func isDateSuffix(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, c := range s[1:] {
		if c != '-' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Provider names returned by DetectProvider.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// DetectProvider guesses the wire protocol from an endpoint URL when
// --provider is not given: a host under anthropic.com speaks the Anthropic
// Messages API, anything else (vLLM, llama.cpp, OpenAI, proxies) is treated
// as OpenAI-compatible.
func DetectProvider(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return ProviderOpenAI
	}
	host := strings.ToLower(u.Hostname())
	if host == "anthropic.com" || strings.HasSuffix(host, ".anthropic.com") {
		return ProviderAnthropic
	}
	return ProviderOpenAI
}
