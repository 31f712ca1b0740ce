// Package headless is the non-interactive frontend: it approves every tool
// call (as the reference's headless mode does), never reads stdin, and
// writes text, one JSON object, or a JSON-lines event stream. The wire
// shapes are documented in docs/headless.md; changing them breaks scripts.
package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"turnstone/internal/engine"
	"turnstone/internal/llm"
)

// Format is an output format.
type Format string

const (
	FormatText       Format = "text"
	FormatJSON       Format = "json"
	FormatStreamJSON Format = "stream-json"
)

// ParseFormat validates an --output-format value.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case FormatText, FormatJSON, FormatStreamJSON:
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown output format %q: use text, json or stream-json", s)
}

// ToolCall is one call in the json format's tool_calls list.
type ToolCall struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Output    string `json:"output"`
	IsError   bool   `json:"is_error"`
}

// UI implements engine.UI for scripts.
type UI struct {
	format Format
	out    io.Writer

	mu    sync.Mutex
	calls []*ToolCall
	index map[string]*ToolCall
	err   error // first write error; reported by Finish
}

var _ engine.UI = (*UI)(nil)

// New writes to out in the given format.
func New(format Format, out io.Writer) *UI {
	return &UI{format: format, out: out, index: map[string]*ToolCall{}}
}

// ApproveTools approves everything: headless runs are unattended.
func (u *UI) ApproveTools(context.Context, []engine.ApprovalItem) engine.Decision {
	return engine.Decision{Approved: true}
}

// Init announces the session (stream-json only).
func (u *UI) Init(wsID, model string, tools []string) {
	if tools == nil {
		tools = []string{}
	}
	u.line(map[string]any{"type": "init", "ws_id": wsID, "model": model, "tools": tools})
}

// Emit records tool calls and, for stream-json, writes the event.
func (u *UI) Emit(e engine.Event) {
	switch ev := e.(type) {
	case engine.StateEvent:
		u.line(map[string]any{"type": "state", "state": string(ev.State)})
	case engine.ContentEvent:
		u.line(map[string]any{"type": "content", "text": ev.Text})
	case engine.ReasoningEvent:
		u.line(map[string]any{"type": "reasoning", "text": ev.Text})
	case engine.InfoEvent:
		u.line(map[string]any{"type": "info", "message": ev.Message})
	case engine.ErrorEvent:
		u.line(map[string]any{"type": "error", "message": ev.Message})
	case engine.ToolCallEvent:
		u.mu.Lock()
		tc := &ToolCall{CallID: ev.CallID, Name: ev.Name, Arguments: ev.Arguments}
		u.calls = append(u.calls, tc)
		u.index[ev.CallID] = tc
		u.mu.Unlock()
		u.line(map[string]any{"type": "tool_call", "call_id": ev.CallID, "name": ev.Name, "arguments": ev.Arguments,
			"header": ev.Header, "needs_approval": ev.NeedsApproval, "error": ev.Error})
	case engine.ToolOutputChunkEvent:
		u.line(map[string]any{"type": "tool_output_chunk", "call_id": ev.CallID, "chunk": ev.Chunk})
	case engine.ToolResultEvent:
		u.mu.Lock()
		if tc := u.index[ev.CallID]; tc != nil {
			tc.Output, tc.IsError = ev.Output, ev.IsError
		}
		u.mu.Unlock()
		u.line(map[string]any{"type": "tool_result", "call_id": ev.CallID, "name": ev.Name, "output": ev.Output, "is_error": ev.IsError})
	}
}

// Fail reports a failed turn (stream-json: an error event).
func (u *UI) Fail(err error) {
	u.line(map[string]any{"type": "error", "message": err.Error()})
}

// Finish writes the final answer in the chosen format.
func (u *UI) Finish(wsID string, turn engine.Turn) error {
	switch u.format {
	case FormatText:
		u.write([]byte(turn.Text))
		if len(turn.Text) > 0 && turn.Text[len(turn.Text)-1] != '\n' {
			u.write([]byte("\n"))
		}
	case FormatJSON:
		u.mu.Lock()
		calls := make([]ToolCall, len(u.calls))
		for i, c := range u.calls {
			calls[i] = *c
		}
		u.mu.Unlock()
		b, err := json.MarshalIndent(map[string]any{"ws_id": wsID, "result": turn.Text, "tool_calls": calls, "usage": usage(turn.Usage)}, "", "  ")
		if err != nil {
			return fmt.Errorf("encode json result: %w", err)
		}
		u.write(append(b, '\n'))
	case FormatStreamJSON:
		u.line(map[string]any{"type": "result", "text": turn.Text, "ws_id": wsID, "usage": usage(turn.Usage)})
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return fmt.Errorf("write output: %w", u.err)
	}
	return nil
}

func usage(u llm.Usage) map[string]int {
	return map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
}

// line writes one stream-json object; other formats ignore events.
func (u *UI) line(v map[string]any) {
	if u.format != FormatStreamJSON {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return // values are strings, bools and ints: cannot fail
	}
	u.write(append(b, '\n'))
}

func (u *UI) write(b []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return
	}
	if _, err := u.out.Write(b); err != nil {
		u.err = err
	}
}
