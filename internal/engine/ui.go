package engine

import (
	"context"

	"turnstone/internal/tool"
)

// EventSink receives everything the session wants shown.
type EventSink interface {
	Emit(Event)
}

// ApprovalItem is one call awaiting a decision.
type ApprovalItem struct {
	CallID  string
	Name    string
	Label   string // "bash", "overwrite_file", "mcp_tool"
	Header  string
	Preview tool.Preview
}

// Decision is a person's answer to one approval prompt.
type Decision struct {
	Approved bool
	// Feedback always reaches the model: inside the denial text when
	// denied, as a user message after the results when approved.
	Feedback string
	// Always approves these tools (by name) for the rest of the session.
	Always bool
}

// Approver decides on a batch of calls that need approval. It is called
// only when at least one call needs it; the calls were already announced by
// ToolCallEvents. A cancelled ctx (Ctrl-C) must make it return promptly.
type Approver interface {
	ApproveTools(ctx context.Context, items []ApprovalItem) Decision
}

// UI is what a frontend implements: an event sink and an approver.
type UI interface {
	EventSink
	Approver
}

// NullUI drops events and approves everything; for sub-agents and tests.
type NullUI struct{}

func (NullUI) Emit(Event) {}
func (NullUI) ApproveTools(context.Context, []ApprovalItem) Decision {
	return Decision{Approved: true}
}
