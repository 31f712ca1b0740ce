package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"turnstone/internal/llm"
)

// Wire types of the chat-completions request. Only what we send is modelled.

type wireMessage struct {
	Role string `json:"role"`
	// Content is a string, a []wirePart, or nil (JSON null) for an assistant
	// message that only carries tool calls.
	Content    any            `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// wirePart is {"type":"text","text":…} or {"type":"image_url","image_url":{"url":…}}.
type wirePart map[string]any

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type         string          `json:"type"`
	Function     wireFunctionDef `json:"function"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is sent for a tool without a parameter schema; servers reject
// a missing or null "parameters" more often than an empty object schema.
const emptySchema = `{"type":"object","properties":{}}`

// body builds the JSON request body for req. Extra fields from the options
// are merged in last, so configuration can override anything we set.
func (p *Provider) body(req llm.Request, stream bool) ([]byte, error) {
	msgs := make([]wireMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, wireMessage{Role: string(llm.RoleSystem), Content: req.System})
	}
	for _, m := range req.Messages {
		msgs = append(msgs, encodeMessage(m))
	}
	b := map[string]any{
		"model":    req.Model,
		"messages": msgs,
		"stream":   stream,
	}
	if stream {
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	if len(req.Tools) > 0 {
		tools := make([]wireTool, len(req.Tools))
		for i, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 || string(params) == "null" {
				params = json.RawMessage(emptySchema)
			}
			tools[i] = wireTool{
				Type:         "function",
				Function:     wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: params},
				DeferLoading: t.DeferLoading,
			}
		}
		b["tools"] = tools
	}
	if req.MaxTokens > 0 {
		b["max_completion_tokens"] = req.MaxTokens
		if !p.official {
			// llama.cpp and older vLLM builds read only max_tokens; OpenAI
			// rejects it for reasoning models, so it goes elsewhere only.
			b["max_tokens"] = req.MaxTokens
		}
	}
	if req.Temperature != nil {
		b["temperature"] = *req.Temperature
	}
	if req.ReasoningEffort != "" {
		switch p.effortParam {
		case EffortTemplateKwargs:
			b["chat_template_kwargs"] = map[string]any{"reasoning_effort": req.ReasoningEffort}
		case EffortTopLevel:
			b["reasoning_effort"] = req.ReasoningEffort
		}
	}
	p.applyCapabilities(b, req)
	for k, v := range p.opts.ExtraBody {
		b[k] = v
	}
	out, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode chat request: %w", err)
	}
	return out, nil
}

func encodeMessage(m llm.Message) wireMessage {
	w := wireMessage{Role: string(m.Role)}
	if m.Role == llm.RoleTool {
		w.ToolCallID = m.ToolCallID
	}
	for _, tc := range m.ToolCalls {
		w.ToolCalls = append(w.ToolCalls, wireToolCall{
			ID:       tc.ID,
			Type:     "function",
			Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
		})
	}
	switch {
	case len(m.Parts) > 0:
		w.Content = encodeParts(m.Parts)
	case m.Content == "" && len(m.ToolCalls) > 0:
		w.Content = nil // OpenAI's shape for a tool-call-only assistant message
	default:
		w.Content = m.Content
	}
	return w
}

func encodeParts(parts []llm.Part) []wirePart {
	out := make([]wirePart, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case llm.PartImage:
			url := "data:" + p.MediaType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
			out = append(out, wirePart{"type": "image_url", "image_url": map[string]string{"url": url}})
		default:
			out = append(out, wirePart{"type": "text", "text": p.Text})
		}
	}
	return out
}
