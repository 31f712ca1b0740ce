package engine

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// item is one tool call on its way through prepare → approve → execute.
type item struct {
	call     llm.ToolCall
	prepared *tool.Prepared
	// needsApproval is the prepared flag after --skip-permissions and
	// "always" approvals are applied.
	needsApproval bool
	// denial, when set, is the model text for a denied call.
	denial string
	result tool.Result
}

// prepare runs phase 1 for every call, serially and in call order. It
// never fails: problems become error items that answer the model.
func (s *Session) prepare(ctx context.Context, calls []llm.ToolCall) []*item {
	items := make([]*item, len(calls))
	for i, c := range calls {
		it := &item{call: c, prepared: s.prepareOne(ctx, c)}
		if it.prepared.Err != "" {
			it.prepared.NeedsApproval = false
			it.prepared.Run = nil
		}
		s.mu.Lock()
		it.needsApproval = it.prepared.NeedsApproval && !s.opts.SkipPermissions && !s.always[c.Name]
		s.mu.Unlock()
		items[i] = it
		s.emit(ToolCallEvent{
			CallID:        c.ID,
			Name:          c.Name,
			Arguments:     c.Arguments,
			Header:        it.prepared.Header,
			Preview:       it.prepared.Preview,
			NeedsApproval: it.needsApproval,
			Error:         it.prepared.Err,
		})
	}
	return items
}

func (s *Session) prepareOne(ctx context.Context, c llm.ToolCall) (p *tool.Prepared) {
	t, ok := s.opts.Catalog.Lookup(c.Name)
	if !ok {
		return tool.Fail("✗ "+c.Name+": unknown tool",
			fmt.Sprintf("Error: unknown tool %q. Use only the tools offered in this conversation.", c.Name))
	}
	spec := t.Spec()
	args, err := tool.ParseArgs(c.Arguments, spec.PrimaryKey)
	if err != nil {
		p := tool.Fail("✗ "+c.Name+": "+err.Error(),
			fmt.Sprintf("Error: invalid arguments for %s: %v\nRaw arguments: %s", c.Name, err, clip(c.Arguments, 500)))
		p.Preview = tool.Preview{{Style: tool.StyleRed, Text: clip(c.Arguments, 4000)}}
		return p
	}
	defer func() {
		if r := recover(); r != nil {
			p = tool.Fail("✗ "+c.Name+": internal error",
				fmt.Sprintf("Error: tool %s failed while checking its arguments (%v). This is a bug in turnstone; try different arguments or another tool.", c.Name, r))
		}
	}()
	p = t.Prepare(ctx, tool.Call{ID: c.ID, Name: c.Name, Args: args, Raw: c.Arguments})
	if p == nil {
		return tool.Fail("✗ "+c.Name+": internal error", "Error: tool "+c.Name+" returned nothing from prepare (a bug in turnstone).")
	}
	if p.Err == "" && p.Run == nil {
		p.Err = "Error: tool " + c.Name + " cannot run (a bug in turnstone)."
	}
	if p.Header == "" {
		p.Header = "⚙ " + c.Name
		if p.Err != "" {
			p.Header = "✗ " + c.Name
		}
	}
	if p.ApprovalLabel == "" {
		p.ApprovalLabel = c.Name
	}
	return p
}

// clip cuts s to at most n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	var b strings.Builder
	i := 0
	for _, r := range s {
		if i == n {
			break
		}
		b.WriteRune(r)
		i++
	}
	return b.String()
}
