package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"turnstone/internal/llm"
)

// DefaultChunkSize is the number of runes per streamed text or arguments
// piece when Reply.ChunkSize is 0: small, so clients must merge pieces.
const DefaultChunkSize = 4

// Reply is one scripted model answer, independent of the wire format.
type Reply struct {
	Content   string
	Reasoning string
	// ToolCalls are the calls the model makes; an empty ID is filled with
	// "call_<exchange>_<i>".
	ToolCalls []llm.ToolCall
	// Finish defaults to tool_calls when ToolCalls is set, else stop.
	Finish llm.FinishReason
	// Usage defaults to an estimate (request bytes / 4, output bytes / 4,
	// at least 1 each) when zero.
	Usage llm.Usage

	// Status, when not 0 or 200, makes this an HTTP error reply carrying
	// ErrorMessage in the format's error shape, with a Retry-After header
	// when RetryAfter is set (e.g. "0", "2").
	Status       int
	ErrorMessage string
	RetryAfter   string
	// With Status 0 or 200, a non-empty ErrorMessage is sent as an error
	// object inside the stream after Content and Reasoning (mid-stream
	// failure); a non-streamed request gets it as a 500 error reply.

	// ThinkTags sends Reasoning inline as "<think>…</think>" before the
	// content instead of in the format's reasoning field.
	ThinkTags bool
	// ChunkSize is the number of runes per streamed piece of text and
	// arguments; 0 means DefaultChunkSize, negative means one piece.
	ChunkSize int
	// OmitToolIndex leaves "index" out of streamed tool-call deltas, as some
	// OpenAI-compatible servers do (the id is sent on a call's first delta).
	OmitToolIndex bool
	// RawSSE is written verbatim as the response body (status Status or
	// 200), for malformed-stream tests; all other fields are ignored.
	RawSSE string
	// Delay waits before the first byte.
	Delay time.Duration
	// Hang blocks until the client goes away or the server closes: for a
	// stream after sending Content and Reasoning, otherwise before any byte.
	Hang bool
}

// IsError reports whether the reply is an HTTP error answer.
func (r Reply) IsError() bool { return r.Status != 0 && r.Status != http.StatusOK }

// FinishReason returns Finish or its default.
func (r Reply) FinishReason() llm.FinishReason {
	switch {
	case r.Finish != "":
		return r.Finish
	case len(r.ToolCalls) > 0:
		return llm.FinishToolCalls
	default:
		return llm.FinishStop
	}
}

// Chunks splits s into pieces of the reply's chunk size, on rune
// boundaries. An empty s yields no pieces.
func (r Reply) Chunks(s string) []string {
	size := r.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	if s == "" {
		return nil
	}
	if size < 0 {
		return []string{s}
	}
	var out []string
	runes := []rune(s)
	for len(runes) > 0 {
		n := min(size, len(runes))
		out = append(out, string(runes[:n]))
		runes = runes[n:]
	}
	return out
}

// Calls returns the tool calls with empty IDs filled in for exchange ex.
func (ex Exchange) Calls() []llm.ToolCall {
	out := make([]llm.ToolCall, len(ex.Reply.ToolCalls))
	for i, c := range ex.Reply.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%s_%d", ex.ID, i)
		}
		out[i] = c
	}
	return out
}

// Usage returns the reply's usage or an estimate from the request size and
// the output (content, reasoning and tool calls).
func (ex Exchange) Usage() llm.Usage {
	if ex.Reply.Usage != (llm.Usage{}) {
		u := ex.Reply.Usage
		if u.TotalTokens == 0 {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
		return u
	}
	out := len(ex.Reply.Content) + len(ex.Reply.Reasoning)
	for _, c := range ex.Reply.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	u := llm.Usage{PromptTokens: max(1, len(ex.Request.Body)/4), CompletionTokens: max(1, out/4)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// Text returns what the reply sends as content: with ThinkTags, the
// reasoning in <think> tags followed by the content.
func (r Reply) Text() string {
	if r.ThinkTags && r.Reasoning != "" {
		return "<think>" + r.Reasoning + "</think>" + r.Content
	}
	return r.Content
}

// SSE writes server-sent events and flushes each one.
type SSE struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// NewSSE sends the 200 event-stream headers and returns a writer.
func NewSSE(w http.ResponseWriter) *SSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &SSE{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// Data sends one "data:" event holding v as JSON.
func (s *SSE) Data(v any) error { return s.Event("", v) }

// Event sends one event with an optional name and v as JSON data.
func (s *SSE) Event(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode sse event: %w", err)
	}
	msg := "data: " + string(b) + "\n\n"
	if name != "" {
		msg = "event: " + name + "\n" + msg
	}
	return s.Raw(msg)
}

// Raw writes s verbatim and flushes.
func (s *SSE) Raw(text string) error {
	if _, err := s.w.Write([]byte(text)); err != nil {
		return err
	}
	return s.rc.Flush()
}
