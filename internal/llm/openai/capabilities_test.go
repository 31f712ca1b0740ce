package openai

import (
	"encoding/json"
	"testing"

	"turnstone/internal/llm"
)

func TestApplyCapabilities(t *testing.T) {
	temp := 0.5
	search := llm.ToolDef{Name: "web_search", Description: "search", Parameters: json.RawMessage(`{"type":"object"}`)}
	bash := llm.ToolDef{Name: "bash", Description: "run", Parameters: json.RawMessage(`{"type":"object"}`)}
	tests := []struct {
		name  string
		opts  Options
		req   llm.Request
		tools []string // function names sent; nil means no "tools" key
		web   bool     // web_search_options present
		temp  bool     // temperature present
	}{
		{name: "search model swaps the function", req: llm.Request{Model: "gpt-5-search-api", Tools: []llm.ToolDef{bash, search}, Temperature: &temp},
			tools: []string{"bash"}, web: true},
		{name: "only web_search leaves no tools", req: llm.Request{Model: "gpt-5-search-api-2025-10-14", Tools: []llm.ToolDef{search}},
			web: true},
		{name: "search model without the tool", req: llm.Request{Model: "gpt-5-search-api", Tools: []llm.ToolDef{bash}},
			tools: []string{"bash"}},
		{name: "local model keeps everything", req: llm.Request{Model: "qwen3", Tools: []llm.ToolDef{bash, search}, Temperature: &temp},
			tools: []string{"bash", "web_search"}, temp: true},
		{name: "gpt-4o keeps temperature", req: llm.Request{Model: "gpt-4o", Temperature: &temp}, temp: true},
		{name: "gpt-5 drops temperature", req: llm.Request{Model: "gpt-5-mini", Temperature: &temp}},
		{name: "configured capabilities win",
			opts:  Options{Capabilities: func(string) llm.Capabilities { return llm.Capabilities{NativeWebSearch: true} }},
			req:   llm.Request{Model: "my-search-proxy", Tools: []llm.ToolDef{search, bash}, Temperature: &temp},
			tools: []string{"bash"}, web: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := New(tt.opts).body(tt.req, true)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Tools []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"tools"`
				WebSearchOptions map[string]any `json:"web_search_options"`
				Temperature      *float64       `json:"temperature"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range got.Tools {
				names = append(names, tl.Function.Name)
			}
			if len(names) != len(tt.tools) || (len(names) > 0 && !sameNames(names, tt.tools)) {
				t.Errorf("tools = %v, want %v (%s)", names, tt.tools, raw)
			}
			if (got.WebSearchOptions != nil) != tt.web {
				t.Errorf("web_search_options = %v, want present=%v", got.WebSearchOptions, tt.web)
			}
			if (got.Temperature != nil) != tt.temp {
				t.Errorf("temperature = %v, want present=%v", got.Temperature, tt.temp)
			}
		})
	}
}

func sameNames(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
