// Package llm is the provider-neutral contract between the engine and model
// endpoints: messages, tool definitions, stream deltas and the Provider
// interface. Adapters live in subpackages (llm/openai, llm/anthropic) and
// import only this package and their wire format.
package llm

import (
	"context"
	"encoding/json"
)

// Role is the author of a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType says what a Part holds.
type PartType string

const (
	PartText  PartType = "text"
	PartImage PartType = "image"
)

// Part is one piece of multi-part content (a tool result with an image, for
// example). Images carry raw bytes; each adapter encodes them for its wire
// format (data URL for OpenAI, base64 source block for Anthropic).
type Part struct {
	Type      PartType `json:"type"`
	Text      string   `json:"text,omitempty"`
	MediaType string   `json:"media_type,omitempty"`
	Data      []byte   `json:"data,omitempty"`
}

// ToolCall is one function call requested by the model. Arguments is the raw
// text the model produced; it may be malformed and is parsed by the engine.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one entry of the conversation history.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// Parts, when set, replaces Content (tool results with images).
	Parts     []Part     `json:"parts,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	// ProviderBlocks holds a provider's raw content blocks for an assistant
	// message (Anthropic thinking blocks with signatures, server tool
	// results). The adapter named by Provider replays them verbatim; other
	// adapters ignore them and rebuild from Content and ToolCalls.
	ProviderBlocks json.RawMessage `json:"provider_blocks,omitempty"`
	Provider       string          `json:"provider,omitempty"`
}

// Text returns the message text: Content, or the text parts joined by a space.
func (m Message) Text() string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	s := ""
	for _, p := range m.Parts {
		if p.Type == PartText {
			if s != "" {
				s += " "
			}
			s += p.Text
		}
	}
	return s
}

// ToolDef is a function tool offered to the model (metadata keys stripped).
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// DeferLoading marks a tool for native (provider-side) tool search.
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// Request is one model call.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolDef
	// MaxTokens bounds the completion; 0 means the adapter's default.
	MaxTokens int
	// Temperature is omitted from the request when nil.
	Temperature     *float64
	ReasoningEffort string
}

// Native tool search: when any ToolDef carries DeferLoading, an adapter whose
// provider supports server-side tool search adds that search tool (Anthropic:
// tool_search_tool_bm25_20251119); OpenAI-compatible adapters send the flag
// as a top-level "defer_loading" on the function tool.

// FinishReason is the normalized reason a response ended.
type FinishReason string

const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
)

// Usage counts tokens of one response.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Delta is one piece of a streamed response as the user should see it.
// Exactly one field is set. Tool-call assembly happens inside the adapter;
// the assembled calls come back in Response.
type Delta struct {
	Content   string
	Reasoning string
	// Info is a progress line that is never part of the content
	// ("[Retrying in 2s: HTTP 503]", "[Searching: q]", a Sources list).
	Info string
}

// Response is the assembled result of one model call.
type Response struct {
	// Message is the assistant message to append to the history.
	Message      Message
	FinishReason FinishReason
	Usage        Usage
}

// Provider is a model endpoint speaking one wire protocol.
type Provider interface {
	// Name is the adapter name ("openai", "anthropic").
	Name() string
	// Stream performs a streaming call. onDelta receives display deltas in
	// order from the calling goroutine. Retryable failures before the first
	// delta are retried inside the adapter; a failure after it ends the call.
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
	// Complete performs a non-streaming call (web_fetch extraction, titles).
	Complete(ctx context.Context, req Request) (Response, error)
}
