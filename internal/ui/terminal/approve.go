package terminal

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"turnstone/internal/engine"
	"turnstone/internal/tool"
)

const approvalChoices = "[y/n/a(lways), optional message] "

// approvalPrompt is the question of behavior.md §6 for the pending calls.
func approvalPrompt(items []engine.ApprovalItem) string {
	if len(items) == 1 {
		return fmt.Sprintf("    Allow %s? %s", label(items[0]), approvalChoices)
	}
	labels := make([]string, len(items))
	for i, it := range items {
		labels[i] = label(it)
	}
	return fmt.Sprintf("    Allow %d tools (%s)? %s", len(items), strings.Join(labels, ", "), approvalChoices)
}

func label(it engine.ApprovalItem) string {
	if it.Label != "" {
		return it.Label
	}
	return it.Name
}

// ApproveTools asks once for the whole batch. The calls were already shown
// by their ToolCallEvents. EOF, Ctrl-C or a cancelled ctx deny.
func (u *UI) ApproveTools(ctx context.Context, items []engine.ApprovalItem) engine.Decision {
	if len(items) == 0 {
		return engine.Decision{Approved: true}
	}
	if ctx.Err() != nil {
		return engine.Decision{}
	}
	u.input().discardTypeahead()
	text, err := u.readLine(ctx, approvalPrompt(items))
	if err != nil {
		return engine.Decision{}
	}
	d := ParseApproval(text)
	if d.Always {
		names := make([]string, 0, len(items))
		seen := map[string]bool{}
		for _, it := range items {
			if !seen[it.Name] {
				seen[it.Name] = true
				names = append(names, it.Name)
			}
		}
		u.mu.Lock()
		u.line(tool.StyleDim, "    Allowing "+strings.Join(names, ", ")+" for the rest of the session.")
		u.mu.Unlock()
	}
	return d
}

// ParseApproval turns an answer to the approval prompt into a Decision.
//
// The decision is the first word, ending at the first comma or whitespace;
// the rest, trimmed (a leading comma too), is feedback for the model:
//
//	y, yes          approve             "y, use the full path"
//	a, always       approve and remember the tools for the session
//	n, no           deny                "n wrong file"
//	(empty)         deny
//	anything else   deny, and the whole answer is the feedback, so nothing
//	                the person typed is lost ("use rg instead")
//
// The word is case-insensitive and may end in "." or "!". This fixes the
// original's quirk where "y please, hurry" (split at the comma) denied.
func ParseApproval(text string) engine.Decision {
	text = strings.TrimSpace(text)
	if text == "" {
		return engine.Decision{}
	}
	word, rest := text, ""
	if i := strings.IndexFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }); i >= 0 {
		word = text[:i]
		rest = strings.TrimSpace(strings.TrimLeft(text[i:], ", \t\r\n"))
	}
	switch strings.TrimRight(strings.ToLower(word), ".!") {
	case "y", "yes":
		return engine.Decision{Approved: true, Feedback: rest}
	case "a", "always":
		return engine.Decision{Approved: true, Always: true, Feedback: rest}
	case "n", "no":
		return engine.Decision{Feedback: rest}
	default:
		return engine.Decision{Feedback: text}
	}
}
