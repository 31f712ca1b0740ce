package engine

import (
	"context"

	"turnstone/internal/llm"
)

// Call runs one tool call through prepare and execute as if a person had
// approved it, outside the conversation: the history is not touched. It is
// what `turnstone tools run` uses, so the result is exactly what a model
// would receive.
func (s *Session) Call(ctx context.Context, name, rawArgs string) ToolResultEvent {
	items := s.prepare(ctx, []llm.ToolCall{{ID: "call_cli", Name: name, Arguments: rawArgs}})
	items[0].needsApproval = false
	s.execute(ctx, items)
	r := items[0].result
	return ToolResultEvent{CallID: "call_cli", Name: name, Output: modelText(r), IsError: r.IsError, Summary: r.Summary}
}
