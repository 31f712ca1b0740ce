// Package tool is the contract every tool implements (built-in and MCP), the
// registry of built-in schemas with the derived tool sets, and the argument
// parsing shared by all tools (JSON, malformed-JSON rescue, bare strings).
//
// A tool never asks for approval itself: Prepare validates and describes the
// call without side effects, the engine batches approvals, then Run executes.
package tool

import (
	"context"
	"encoding/json"

	"turnstone/internal/llm"
)

// Spec is a tool's schema plus turnstone's metadata keys (tools.md "Tool
// Schema Format"). Only Name, Description and Parameters reach a model.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Agent       bool            `json:"agent"`
	TaskAgent   bool            `json:"task_agent"`
	AutoApprove bool            `json:"auto_approve"`
	PrimaryKey  string          `json:"primary_key"`
}

// Def returns the model-facing definition, metadata stripped.
func (s Spec) Def() llm.ToolDef {
	return llm.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
}

// Tool is one callable tool.
type Tool interface {
	Spec() Spec
	// Prepare validates args and describes the call. It must not have side
	// effects beyond cheap reads (stat, resolving a path). A validation
	// failure is reported in Prepared.Err, never as a panic.
	Prepare(ctx context.Context, call Call) *Prepared
}

// Call is one tool invocation with parsed arguments.
type Call struct {
	ID   string
	Name string
	Args Args
	// Raw is the argument text exactly as the model sent it.
	Raw string
}

// Style tags a preview line so frontends can colour it; the engine and the
// tools never emit ANSI codes.
type Style string

const (
	StylePlain  Style = ""
	StyleDim    Style = "dim"
	StyleRed    Style = "red"
	StyleGreen  Style = "green"
	StyleYellow Style = "yellow"
)

// Line is one line of a call preview.
type Line struct {
	Style Style  `json:"style,omitempty"`
	Text  string `json:"text"`
}

// Preview is the multi-line description shown before approval.
type Preview []Line

// String joins the preview as plain text.
func (p Preview) String() string {
	s := ""
	for i, l := range p {
		if i > 0 {
			s += "\n"
		}
		s += l.Text
	}
	return s
}

// Emit receives streamed output (one line per call, without the newline).
type Emit func(chunk string)

// Prepared is the outcome of Prepare.
type Prepared struct {
	// Header is one line: "⚙ bash: ls -la" (or "✗ tool: reason" on error).
	Header  string
	Preview Preview
	// NeedsApproval: a person must allow this call (main session).
	NeedsApproval bool
	// ApprovalLabel names the action in the prompt ("bash", "overwrite_file").
	ApprovalLabel string
	// Err, when non-empty, is the model text of a validation failure; Run is
	// not called and the result is an error result.
	Err string
	// Run executes the call. ctx is cancelled on timeout or interrupt.
	Run func(ctx context.Context, emit Emit) Result
}

// Result is what a tool produced.
type Result struct {
	// Output is the model text. When Parts is set it replaces Output for the
	// model (images); Output is then a text summary used by frontends.
	Output string
	Parts  []llm.Part
	// IsError: the tool could not do its job (see docs/tools.md).
	IsError bool
	// Summary is a short line for frontends ("12 lines", "3 matches").
	Summary string
}

// Errorf-style helpers keep error results uniform.

// Fail returns a prepared item that reports msg to the model as an error.
func Fail(header string, msg string) *Prepared {
	return &Prepared{Header: header, Err: msg}
}

// ErrorResult is an IsError result with the given model text.
func ErrorResult(msg string) Result { return Result{Output: msg, IsError: true} }

// Catalog is the set of tools a session can offer and call. The engine asks
// it on every model request, so implementations may change over time (MCP
// refresh, tool search expansion) as long as each call is consistent.
type Catalog interface {
	// Definitions returns the tools to offer on the next request, in order.
	Definitions() []llm.ToolDef
	// Lookup finds a callable tool by the name the model used. A tool may be
	// callable without being offered (e.g. already expanded by tool search).
	Lookup(name string) (Tool, bool)
}

// Hinter is an optional Catalog extension: text appended to the system
// prompt (the tool_search hint). It is read on every request.
type Hinter interface {
	SystemHint() string
}
