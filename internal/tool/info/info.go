// Package info holds the built-in tools that look information up: man (local
// manual pages), web_fetch (a page, read by the session's model to answer a
// question) and web_search (Tavily).
package info

import (
	"fmt"
	"unicode/utf8"

	"turnstone/internal/tool"
)

// cut returns the first n runes of s and whether anything was dropped.
func cut(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}

// cutDots is cut with "..." appended when something was dropped.
func cutDots(s string, n int) string {
	if c, dropped := cut(s, n); dropped {
		return c + "..."
	}
	return s
}

func header(name, detail string) string { return "⚙ " + name + ": " + detail }

// failed is a validation failure: "✗ {tool}: {reason}" plus the model text.
func failed(name, reason, msg string, preview ...tool.Line) *tool.Prepared {
	p := tool.Fail("✗ "+name+": "+reason, msg)
	p.Preview = preview
	return p
}

// chars formats a character count for summaries.
func chars(n int) string { return fmt.Sprintf("%d chars", n) }
