package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"turnstone/internal/llm"
)

// wire encodes buildRequest's result and decodes it generically, so the
// assertions look at the JSON the endpoint would receive.
func wire(t *testing.T, req llm.Request, caps llm.Capabilities) map[string]any {
	t.Helper()
	b, err := json.Marshal(buildRequest(req, caps))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

func TestThinkingBudget(t *testing.T) {
	tests := []struct {
		effort    string
		maxTokens int
		want      int
	}{
		{"low", 32768, 1024},
		{"medium", 32768, 4096},
		{"HIGH", 32768, 16384},
		{"xhigh", 32768, 31744},
		{"high", 8192, 7168},
		{"medium", 2048, 1024},
		{"low", 2000, 0},
		{"low", 200, 0},
		{"none", 32768, 0},
		{"minimal", 32768, 0},
		{"", 32768, 0},
		{"bogus", 32768, 0},
	}
	for _, tt := range tests {
		if got := thinkingBudget(tt.effort, tt.maxTokens); got != tt.want {
			t.Errorf("thinkingBudget(%q, %d) = %d, want %d", tt.effort, tt.maxTokens, got, tt.want)
		}
	}
}

func TestBuildRequestThinkingAndTemperature(t *testing.T) {
	caps := llm.LookupCapabilities("claude-sonnet-4-6", nil)
	base := llm.Request{Model: "claude-sonnet-4-6", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Temperature: ptr(0.5)}

	req := base
	req.ReasoningEffort = "high"
	m := wire(t, req, caps)
	if th, _ := m["thinking"].(map[string]any); th["type"] != "enabled" || th["budget_tokens"] != float64(16384) {
		t.Errorf("thinking = %v", m["thinking"])
	}
	if _, ok := m["temperature"]; ok {
		t.Errorf("temperature sent with thinking on: %v", m["temperature"])
	}
	if m["max_tokens"] != float64(32768) {
		t.Errorf("max_tokens = %v, want the default 32768", m["max_tokens"])
	}

	req = base
	req.ReasoningEffort = "none"
	req.Temperature = ptr(1.7)
	m = wire(t, req, caps)
	if _, ok := m["thinking"]; ok {
		t.Errorf("thinking sent for effort none: %v", m["thinking"])
	}
	if m["temperature"] != float64(1) {
		t.Errorf("temperature = %v, want clamped to 1", m["temperature"])
	}

	noTemp := caps
	noTemp.SupportsTemperature = false
	if m := wire(t, req, noTemp); m["temperature"] != nil {
		t.Errorf("temperature sent for a model without it: %v", m["temperature"])
	}

	// The capability's max output caps max_tokens.
	req.MaxTokens = 100000
	if m := wire(t, req, llm.LookupCapabilities("claude-3-5-haiku", nil)); m["max_tokens"] != float64(8192) {
		t.Errorf("max_tokens = %v, want 8192", m["max_tokens"])
	}
}

func TestBuildRequestMessages(t *testing.T) {
	req := llm.Request{
		Model:  "claude-sonnet-4-6",
		System: "be brief",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "extra rules"},
			{Role: llm.RoleUser, Content: "list files"},
			{Role: llm.RoleUser, Content: "and be quick"},
			{Role: llm.RoleAssistant, Content: "Looking.", Provider: "openai", ProviderBlocks: json.RawMessage(`[{"type":"ignored"}]`),
				ToolCalls: []llm.ToolCall{
					{ID: "call.1", Name: "bash", Arguments: `{"command":"ls"}`},
					{ID: "call_2", Name: "read_file", Arguments: `{"path": "a.go"`},
				}},
			{Role: llm.RoleTool, ToolCallID: "call.1", ToolName: "bash", Content: "a.go\n"},
			{Role: llm.RoleTool, ToolCallID: "call_2", ToolName: "read_file", IsError: true, Content: "JSON parse error"},
			{Role: llm.RoleUser, Content: "feedback"},
			{Role: llm.RoleUser, Content: ""},
		},
	}
	m := wire(t, req, llm.Capabilities{})
	if m["system"] != "be brief\n\nextra rules" {
		t.Errorf("system = %q", m["system"])
	}
	got, _ := json.Marshal(m["messages"])
	want := `[{"content":[{"text":"list files","type":"text"},{"text":"and be quick","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Looking.","type":"text"},` +
		`{"id":"call_1","input":{"command":"ls"},"name":"bash","type":"tool_use"},` +
		`{"id":"call_2","input":{},"name":"read_file","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":[{"text":"a.go\n","type":"text"}],"tool_use_id":"call_1","type":"tool_result"},` +
		`{"content":[{"text":"JSON parse error","type":"text"}],"is_error":true,"tool_use_id":"call_2","type":"tool_result"},` +
		`{"text":"feedback","type":"text"}],"role":"user"}]`
	if string(got) != want {
		t.Errorf("messages =\n%s\nwant\n%s", got, want)
	}
}

func TestBuildRequestImageToolResult(t *testing.T) {
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "look"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "read_file", Arguments: `{"path":"a.png"}`}}},
		{Role: llm.RoleTool, ToolCallID: "t1", Parts: []llm.Part{
			{Type: llm.PartText, Text: "Image: a.png"},
			{Type: llm.PartImage, MediaType: "image/png", Data: []byte("\x89PNG")},
		}},
	}}
	m := wire(t, req, llm.Capabilities{})
	msgs := m["messages"].([]any)
	res := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	got, _ := json.Marshal(res)
	want := `{"content":[{"text":"Image: a.png","type":"text"},{"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"}],"tool_use_id":"t1","type":"tool_result"}`
	if string(got) != want {
		t.Errorf("tool_result =\n%s\nwant\n%s", got, want)
	}
}

func TestReplayProviderBlocks(t *testing.T) {
	blocks := `[{"type":"thinking","thinking":"hmm","signature":"SIG=="},` +
		`{"type":"thinking","thinking":"cut","signature":""},` +
		`{"type":"redacted_thinking","data":"opaque"},` +
		`{"type":"text","text":""},` +
		`{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{"query":"go"}},` +
		`{"type":"web_search_tool_result","tool_use_id":"srv_1","content":[{"type":"web_search_result","url":"https://go.dev","title":"Go","encrypted_content":"E"}]},` +
		`{"type":"text","text":"Go is","citations":[{"type":"web_search_result_location","url":"https://go.dev"}]},` +
		`{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"}},` +
		`{"type":"tool_use","id":"toolu_cut","name":"bash","input":{}}]`
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "q"},
		{Role: llm.RoleAssistant, Content: "Go is", Provider: "anthropic", ProviderBlocks: json.RawMessage(blocks),
			ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{"command":"ls"}`}}},
		{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: "ok"},
	}, ReasoningEffort: "medium"}
	w := buildRequest(req, llm.Capabilities{})
	var types []string
	for _, b := range w.Messages[1].Content {
		types = append(types, blockType(b))
	}
	if got := strings.Join(types, ","); got != "thinking,redacted_thinking,server_tool_use,web_search_tool_result,text,tool_use" {
		t.Errorf("replayed block types = %s", got)
	}
	if string(w.Messages[1].Content[0]) != `{"type":"thinking","thinking":"hmm","signature":"SIG=="}` {
		t.Errorf("thinking block not verbatim: %s", w.Messages[1].Content[0])
	}
	if w.Thinking == nil {
		t.Error("thinking should stay on: the tool loop's assistant turn starts with a thinking block")
	}
}

func TestThinkingOffForForeignToolLoop(t *testing.T) {
	req := llm.Request{ReasoningEffort: "high", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "q"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "bash", Arguments: `{}`}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "ok"},
	}}
	if w := buildRequest(req, llm.Capabilities{}); w.Thinking != nil {
		t.Errorf("thinking on while continuing a tool loop without a thinking block: %+v", w.Thinking)
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: "done"}, llm.Message{Role: llm.RoleUser, Content: "next"})
	if w := buildRequest(req, llm.Capabilities{}); w.Thinking == nil {
		t.Error("thinking off for a fresh user turn")
	}
}

func TestConvertTools(t *testing.T) {
	defs := []llm.ToolDef{
		{Name: "bash", Description: "run", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		{Name: "web_search", Description: "search", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "mcp__gh__issue", Description: "gh", Parameters: json.RawMessage(`{"type":"object"}`), DeferLoading: true},
		{Name: "broken", Parameters: json.RawMessage(`{not json`)},
	}
	enc := func(caps llm.Capabilities) string {
		b, _ := json.Marshal(convertTools(defs, caps))
		return string(b)
	}
	native := enc(llm.Capabilities{NativeWebSearch: true})
	want := `[{"name":"bash","description":"run","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}},` +
		`{"name":"mcp__gh__issue","description":"gh","input_schema":{"type":"object"},"defer_loading":true},` +
		`{"name":"broken","input_schema":{"type":"object","properties":{}}},` +
		`{"type":"web_search_20250305","name":"web_search"},` +
		`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}]`
	if native != want {
		t.Errorf("native tools =\n%s\nwant\n%s", native, want)
	}
	plain := enc(llm.Capabilities{})
	if !strings.Contains(plain, `{"name":"web_search","description":"search"`) || strings.Contains(plain, "web_search_20250305") {
		t.Errorf("without native search the function must stay: %s", plain)
	}
}

func TestToolIDAndObjectInput(t *testing.T) {
	if got := toolID("call:a/b.1"); got != "call_a_b_1" {
		t.Errorf("toolID = %q", got)
	}
	for in, want := range map[string]string{`{"a":1}`: `{"a":1}`, `[1]`: `{}`, `"s"`: `{}`, `{"a":`: `{}`, ``: `{}`, `null`: `{}`} {
		if got := string(objectInput(in)); got != want {
			t.Errorf("objectInput(%q) = %s, want %s", in, got, want)
		}
	}
}
