package anthropic

import (
	"encoding/json"
	"strings"

	"turnstone/internal/llm"
)

// defaultMaxTokens is used when the request leaves MaxTokens at 0; the
// Messages API requires max_tokens on every call.
const defaultMaxTokens = 32768

// Server tools added at the API boundary (tools.md web_search, behavior.md §3).
const (
	webSearchTool  = "web_search_20250305"
	toolSearchTool = "tool_search_tool_bm25_20251119"
)

// wireRequest is the body of POST /v1/messages.
type wireRequest struct {
	Model       string        `json:"model"`
	MaxTokens   int           `json:"max_tokens"`
	System      string        `json:"system,omitempty"`
	Messages    []wireMessage `json:"messages"`
	Tools       []any         `json:"tools,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	Thinking    *wireThinking `json:"thinking,omitempty"`
	Stream      bool          `json:"stream,omitempty"`
}

type wireMessage struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type functionTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

type serverTool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoding/json writes []byte as base64
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string            `json:"type"`
	ToolUseID string            `json:"tool_use_id"`
	Content   []json.RawMessage `json:"content,omitempty"`
	IsError   bool              `json:"is_error,omitempty"`
}

// buildRequest converts a provider-neutral request into the wire shape.
func buildRequest(req llm.Request, caps llm.Capabilities) wireRequest {
	system, msgs := convertMessages(req.System, req.Messages)
	w := wireRequest{
		Model:     req.Model,
		MaxTokens: maxTokens(req.MaxTokens, caps),
		System:    system,
		Messages:  msgs,
		Tools:     convertTools(req.Tools, caps),
	}
	if budget := thinkingBudget(req.ReasoningEffort, w.MaxTokens); budget > 0 && thinkingAllowed(msgs) {
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
	}
	// With thinking on the API accepts only temperature 1, so none is sent.
	if w.Thinking == nil && req.Temperature != nil && caps.SupportsTemperature {
		t := min(max(*req.Temperature, 0), 1)
		w.Temperature = &t
	}
	return w
}

// maxTokens returns the request's limit, or the default, capped at the
// model's maximum output when that is known.
func maxTokens(n int, caps llm.Capabilities) int {
	if n <= 0 {
		n = defaultMaxTokens
	}
	if caps.MaxOutput > 0 && n > caps.MaxOutput {
		n = caps.MaxOutput
	}
	return n
}

// thinkingBudget maps a reasoning effort to budget_tokens: low 1024,
// medium 4096, high 16384 (xhigh 32768, max 65536). The budget leaves at
// least 1024 tokens of max_tokens for the answer; when that leaves less
// than the API's minimum of 1024, thinking is off. "none", "minimal" and
// "" mean no thinking.
func thinkingBudget(effort string, maxTokens int) int {
	var b int
	switch strings.ToLower(strings.TrimSpace(effort)) {
	case "low":
		b = 1024
	case "medium":
		b = 4096
	case "high":
		b = 16384
	case "xhigh":
		b = 32768
	case "max":
		b = 65536
	default:
		return 0
	}
	b = min(b, maxTokens-1024)
	if b < 1024 {
		return 0
	}
	return b
}

// thinkingAllowed reports whether extended thinking may be switched on:
// when the request continues a tool loop, the API demands that the
// assistant message holding the tool_use blocks starts with a thinking
// block. History from another provider (or a turn that ran without
// thinking) has none, so thinking stays off until the loop ends.
func thinkingAllowed(msgs []wireMessage) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != "user" || msgs[n-2].Role != "assistant" {
		return true
	}
	if !hasBlock(msgs[n-1].Content, "tool_result") || !hasBlock(msgs[n-2].Content, "tool_use") {
		return true
	}
	first := blockType(msgs[n-2].Content[0])
	return first == "thinking" || first == "redacted_thinking"
}

func hasBlock(blocks []json.RawMessage, typ string) bool {
	for _, b := range blocks {
		if blockType(b) == typ {
			return true
		}
	}
	return false
}

// blockType reads the "type" of a raw content block.
func blockType(b json.RawMessage) string {
	var v struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b, &v)
	return v.Type
}

// convertTools turns function tools into Anthropic tools, swapping
// web_search for the server tool when the model searches natively and
// adding the server-side tool search when any tool is deferred.
func convertTools(defs []llm.ToolDef, caps llm.Capabilities) []any {
	var out []any
	webSearch, deferred := false, false
	for _, d := range defs {
		if d.Name == "web_search" && caps.NativeWebSearch {
			webSearch = true
			continue
		}
		out = append(out, functionTool{
			Name:         d.Name,
			Description:  d.Description,
			InputSchema:  inputSchema(d.Parameters),
			DeferLoading: d.DeferLoading,
		})
		deferred = deferred || d.DeferLoading
	}
	if webSearch {
		out = append(out, serverTool{Type: webSearchTool, Name: "web_search"})
	}
	if deferred {
		// The API names this server tool tool_search_tool_bm25; the
		// original sent "tool_search", which the schema does not allow.
		out = append(out, serverTool{Type: toolSearchTool, Name: "tool_search_tool_bm25"})
	}
	return out
}

// inputSchema returns params, or an empty object schema when params is
// missing or not valid JSON (the API requires an object schema).
func inputSchema(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || !json.Valid(params) || strings.TrimSpace(string(params)) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return params
}

// convertMessages joins system text into one string (behavior.md §1.2) and
// converts the history into Messages API turns: tool results become
// tool_result blocks in a user turn, consecutive same-role turns are merged
// and turns left without content are dropped.
func convertMessages(system string, history []llm.Message) (string, []wireMessage) {
	var sys []string
	if strings.TrimSpace(system) != "" {
		sys = append(sys, system)
	}
	var out []wireMessage
	add := func(role string, blocks []json.RawMessage) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	for _, m := range history {
		switch m.Role {
		case llm.RoleSystem:
			if t := m.Text(); strings.TrimSpace(t) != "" {
				sys = append(sys, t)
			}
		case llm.RoleUser:
			add("user", contentBlocks(m))
		case llm.RoleTool:
			add("user", []json.RawMessage{toolResult(m)})
		case llm.RoleAssistant:
			add("assistant", assistantBlocks(m))
		}
	}
	return strings.Join(sys, "\n\n"), out
}

// contentBlocks converts user content (text or parts) into blocks.
func contentBlocks(m llm.Message) []json.RawMessage {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil
		}
		return []json.RawMessage{jsonValue(textBlock{Type: "text", Text: m.Content})}
	}
	var out []json.RawMessage
	for _, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				out = append(out, jsonValue(textBlock{Type: "text", Text: p.Text}))
			}
		case llm.PartImage:
			if len(p.Data) > 0 {
				out = append(out, jsonValue(imageBlock{Type: "image", Source: imageSource{Type: "base64", MediaType: p.MediaType, Data: p.Data}}))
			}
		}
	}
	return out
}

// toolResult converts a RoleTool message into a tool_result block.
func toolResult(m llm.Message) json.RawMessage {
	return jsonValue(toolResultBlock{
		Type:      "tool_result",
		ToolUseID: toolID(m.ToolCallID),
		Content:   contentBlocks(m),
		IsError:   m.IsError,
	})
}

// assistantBlocks replays an Anthropic message's own blocks, or rebuilds
// text and tool_use blocks for history from another provider.
func assistantBlocks(m llm.Message) []json.RawMessage {
	if m.Provider == llm.ProviderAnthropic && len(m.ProviderBlocks) > 0 {
		if blocks, ok := replayBlocks(m); ok {
			return blocks
		}
	}
	var out []json.RawMessage
	if m.Content != "" {
		out = append(out, jsonValue(textBlock{Type: "text", Text: m.Content}))
	}
	for _, tc := range m.ToolCalls {
		out = append(out, jsonValue(toolUseBlock{Type: "tool_use", ID: toolID(tc.ID), Name: tc.Name, Input: objectInput(tc.Arguments)}))
	}
	return out
}

// replayBlocks returns the stored blocks verbatim, minus the ones the API
// would reject: tool_use blocks whose call is no longer in the message (the
// engine drops partial calls of a truncated answer), thinking blocks cut
// off before their signature, and empty text blocks.
func replayBlocks(m llm.Message) ([]json.RawMessage, bool) {
	var blocks []json.RawMessage
	if err := json.Unmarshal(m.ProviderBlocks, &blocks); err != nil {
		return nil, false
	}
	calls := make(map[string]bool, len(m.ToolCalls))
	for _, tc := range m.ToolCalls {
		calls[tc.ID] = true
	}
	out := blocks[:0]
	for _, b := range blocks {
		var v struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			Text      *string `json:"text"`
			Signature string  `json:"signature"`
		}
		if json.Unmarshal(b, &v) != nil {
			continue
		}
		switch {
		case v.Type == "tool_use" && !calls[v.ID]:
		case v.Type == "thinking" && v.Signature == "":
		case v.Type == "text" && (v.Text == nil || *v.Text == ""):
		default:
			out = append(out, b)
		}
	}
	return out, true
}

// objectInput returns the arguments as a JSON object, or {} when they are
// not one (tool_use input must be an object; behavior.md §7.5).
func objectInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

// toolID makes a call id acceptable to the API (^[a-zA-Z0-9_-]+$); ids
// from other providers may contain other characters. The same mapping is
// applied to tool_use and tool_result, so pairs still match.
func toolID(id string) string {
	if id == "" {
		return "call_0"
	}
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
