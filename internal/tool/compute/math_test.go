package compute

import (
	"context"
	"strings"
	"testing"
	"time"

	"turnstone/internal/tool"
)

func newTestMath(t *testing.T, opts MathOptions) *Math {
	t.Helper()
	return NewMath(tool.MustLoadSchemas().MustSpec("math"), opts)
}

// runCode prepares and runs code through the tool, as the engine would.
func runCode(t *testing.T, m *Math, code string) tool.Result {
	t.Helper()
	p := m.Prepare(context.Background(), tool.Call{ID: "c1", Name: "math", Args: tool.Args{"code": code}})
	if p.Err != "" {
		t.Fatalf("prepare failed: %s", p.Err)
	}
	return p.Run(context.Background(), func(string) {})
}

// sharedMath is one tool instance per test binary run, so the sandbox and
// interpreter probes happen once, as in a session.
func sharedMath(t *testing.T) *Math {
	t.Helper()
	m := newTestMath(t, MathOptions{Timeout: 60 * time.Second})
	if _, err := m.Isolation(context.Background()); err != nil {
		t.Skipf("math tool unavailable here: %v", err)
	}
	return m
}

func TestSmoke(t *testing.T) {
	m := sharedMath(t)
	iso, _ := m.Isolation(context.Background())
	t.Log(iso)
	for _, c := range []string{"print(1+1)", "x = symbols('x'); solve(x**2-4, x)", "np.arange(3).sum()", "import os", "1/0", "result = 5", "special.gamma(5)"} {
		r := runCode(t, m, c)
		t.Logf("%q -> err=%v %q", c, r.IsError, r.Output)
	}
	_ = strings.TrimSpace
}
