package engine

import (
	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// State is the session's coarse activity, shown by frontends.
type State string

const (
	StateIdle      State = "idle"      // waiting for the user
	StateThinking  State = "thinking"  // the model is streaming
	StateRunning   State = "running"   // tools are executing
	StateAttention State = "attention" // blocked on a person (approval)
	StateError     State = "error"     // the last turn failed
)

// Event is something a frontend may show. Concrete types are below; a
// frontend type-switches and ignores what it does not render.
//
// Delivery: Content, Reasoning and ToolOutputChunk events are deltas that a
// frontend may coalesce or drop under load; every other event must be
// delivered. The engine calls Emit synchronously from the session goroutine
// or, for ToolOutputChunk, from the tool's worker goroutine, so Emit must be
// safe for concurrent use.
type Event interface{ isEvent() }

// StateEvent reports a state change.
type StateEvent struct{ State State }

// ContentEvent is a piece of the assistant's answer.
type ContentEvent struct{ Text string }

// ReasoningEvent is a piece of the model's reasoning (never stored).
type ReasoningEvent struct{ Text string }

// InfoEvent is a progress or notice line that is not part of the answer.
type InfoEvent struct{ Message string }

// ErrorEvent is a failure or warning line shown to the user.
type ErrorEvent struct{ Message string }

// ToolCallEvent announces one prepared call, before approval.
type ToolCallEvent struct {
	CallID        string
	Name          string
	Arguments     string // raw, as the model sent it
	Header        string
	Preview       tool.Preview
	NeedsApproval bool
	// Error is the validation failure (the model text), empty when valid.
	Error string
}

// ToolOutputChunkEvent is one line of streamed tool output.
type ToolOutputChunkEvent struct {
	CallID string
	Chunk  string
}

// ToolResultEvent is the outcome of one call. Output is exactly the text
// the model receives (after truncation); every call gets exactly one.
type ToolResultEvent struct {
	CallID  string
	Name    string
	Output  string
	IsError bool
	Summary string
}

// UsageEvent reports token usage after each model response.
type UsageEvent struct {
	Usage         llm.Usage
	ContextWindow int
}

func (StateEvent) isEvent()           {}
func (ContentEvent) isEvent()         {}
func (ReasoningEvent) isEvent()       {}
func (InfoEvent) isEvent()            {}
func (ErrorEvent) isEvent()           {}
func (ToolCallEvent) isEvent()        {}
func (ToolOutputChunkEvent) isEvent() {}
func (ToolResultEvent) isEvent()      {}
func (UsageEvent) isEvent()           {}
