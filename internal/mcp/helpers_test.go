package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"turnstone/internal/tool"
)

// testServerBin is the testdata MCP server, built once by TestMain.
var testServerBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcp-testserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testServerBin = filepath.Join(dir, "testserver")
	cmd := exec.Command("go", "build", "-o", testServerBin, "./testdata/testserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build testserver: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// stdioServer is a config for the testdata server with extra flags.
func stdioServer(name string, flags ...string) ServerConfig {
	return ServerConfig{Name: name, Command: testServerBin, Args: flags}
}

// testOptions are fast defaults for tests (no periodic refresh).
func testOptions() Options {
	return Options{
		StartupTimeout: 20 * time.Second,
		CallTimeout:    20 * time.Second,
		Debounce:       10 * time.Millisecond,
		ReconnectMin:   20 * time.Millisecond,
		ReconnectMax:   200 * time.Millisecond,
	}
}

// startManager starts a manager and closes it when the test ends.
func startManager(t *testing.T, servers []ServerConfig, opts Options) (*Manager, []*ServerError) {
	t.Helper()
	m := NewManager(servers, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	problems := m.Start(context.Background())
	return m, problems
}

// eventually polls cond until it holds; the deadline is generous because
// it only bounds a hang, it does not assert speed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// call runs a tool through Prepare and Run as the engine would.
func call(t *testing.T, m *Manager, name string, args tool.Args) tool.Result {
	t.Helper()
	return callCtx(t, context.Background(), m, name, args)
}

func callCtx(t *testing.T, ctx context.Context, m *Manager, name string, args tool.Args) tool.Result {
	t.Helper()
	tl, ok := m.Lookup(name)
	if !ok {
		t.Fatalf("tool %s not found; have %v", name, toolNames(m.Tools()))
	}
	p := tl.Prepare(ctx, tool.Call{ID: "c1", Name: name, Args: args})
	if p.Err != "" {
		t.Fatalf("prepare %s: %s", name, p.Err)
	}
	return p.Run(ctx, func(string) {})
}

func toolNames(tools []tool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Spec().Name
	}
	return out
}

func hasTool(m *Manager, name string) bool {
	for _, t := range m.Tools() {
		if t.Spec().Name == name {
			return true
		}
	}
	return false
}

func problemText(ps []*ServerError) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Error() + "\n")
	}
	return b.String()
}
