package terminal

import (
	"io"
	"testing"

	"turnstone/internal/engine"
	"turnstone/internal/llm"
)

func TestStatusLineNamesNonDefaultEffort(t *testing.T) {
	cases := []struct{ effort, want string }{
		{"", "  [1,500 / 10,000 tokens (15%)]"},
		{"medium", "  [1,500 / 10,000 tokens (15%)]"},
		{"high", "  [1,500 / 10,000 tokens (15%) · reasoning: high]"},
	}
	for _, c := range cases {
		u := New(Options{Out: io.Discard, Err: io.Discard, Effort: c.effort})
		u.Emit(engine.UsageEvent{Usage: llm.Usage{TotalTokens: 1500}, ContextWindow: 10000})
		if got := u.statusLine(); got != c.want {
			t.Errorf("effort %q: %q, want %q", c.effort, got, c.want)
		}
	}
}
