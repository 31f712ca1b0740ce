package mcp

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// These tests run the reference server @modelcontextprotocol/server-everything
// (npm). Set TURNSTONE_TEST_MCP_EVERYTHING to its dist/index.js, e.g. after
//
//	mkdir -p /tmp/mcpnpm && cd /tmp/mcpnpm && npm install --no-audit --no-fund @modelcontextprotocol/server-everything
//	export TURNSTONE_TEST_MCP_EVERYTHING=/tmp/mcpnpm/node_modules/@modelcontextprotocol/server-everything/dist/index.js
const everythingEnv = "TURNSTONE_TEST_MCP_EVERYTHING"

func everythingPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv(everythingEnv)
	if p == "" {
		t.Skipf("%s is not set: install @modelcontextprotocol/server-everything from npm and point the variable at its dist/index.js to run the real-peer tests", everythingEnv)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", everythingEnv, p, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	return p
}

func TestEverythingStdio(t *testing.T) {
	path := everythingPath(t)
	m, problems := startManager(t, []ServerConfig{{Name: "everything", Command: "node", Args: []string{path, "stdio"}}}, testOptions())
	if len(problems) != 0 {
		t.Fatalf("problems: %s", problemText(problems))
	}
	checkEverything(t, m)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	path := everythingPath(t)
	port := freePort(t)
	cmd := exec.Command("node", path, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	eventually(t, "server-everything to listen on "+addr, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	cfg := ServerConfig{Name: "everything", Type: "http", URL: "http://" + addr + "/mcp", Headers: map[string]string{"X-Test": "1"}}
	m, problems := startManager(t, []ServerConfig{cfg}, testOptions())
	if len(problems) != 0 {
		t.Fatalf("problems: %s\nserver output:\n%s", problemText(problems), out.String())
	}
	if st := m.Servers()[0]; st.Transport != TransportHTTP || !st.ListChanged {
		t.Errorf("status = %+v", st)
	}
	checkEverything(t, m)
}

// TestEverythingHTTPReconnect stops the HTTP server under a connected
// client and starts it again on the same port: the call in between fails
// clearly, the server shows as disconnected, and its tools come back.
func TestEverythingHTTPReconnect(t *testing.T) {
	path := everythingPath(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	start := func() *exec.Cmd {
		cmd := exec.Command("node", path, "streamableHttp")
		cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		eventually(t, "server-everything to listen on "+addr, func() bool {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		return cmd
	}
	first := start()
	m, problems := startManager(t, []ServerConfig{{Name: "e", URL: "http://" + addr + "/mcp"}}, testOptions())
	if len(problems) != 0 {
		t.Fatal(problemText(problems))
	}
	_ = first.Process.Kill()
	_ = first.Wait()
	res := call(t, m, "mcp__e__echo", tool.Args{"message": "x"})
	if !res.IsError || !strings.Contains(res.Output, "MCP server e") {
		t.Errorf("call to a stopped server = %+v", res)
	}
	eventually(t, "the disconnect", func() bool { return m.Servers()[0].State != StateConnected })
	start()
	eventually(t, "the reconnect", func() bool { return hasTool(m, "mcp__e__echo") })
	if res := call(t, m, "mcp__e__echo", tool.Args{"message": "back"}); res.Output != "Echo: back" {
		t.Errorf("echo after reconnect = %+v", res)
	}
}

func checkEverything(t *testing.T, m *Manager) {
	t.Helper()
	names := toolNames(m.Tools())
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-tiny-image", "mcp__everything__get-sum"} {
		if !slices.Contains(names, want) {
			t.Errorf("missing %s in %v", want, names)
		}
	}
	for _, n := range names {
		if !safeName(n) {
			t.Errorf("unsafe name %q", n)
		}
	}
	echo, _ := m.Lookup("mcp__everything__echo")
	if d := echo.Spec().Description; d != "[MCP: everything] Echoes back the input string" {
		t.Errorf("description = %q", d)
	}
	if res := call(t, m, "mcp__everything__echo", tool.Args{"message": "hello from turnstone"}); res.IsError || res.Output != "Echo: hello from turnstone" {
		t.Errorf("echo = %+v", res)
	}
	// Missing required argument: the server answers with an error result.
	if res := call(t, m, "mcp__everything__echo", tool.Args{}); !res.IsError || !strings.HasPrefix(res.Output, "Error: ") {
		t.Errorf("echo without message = %+v", res)
	}
	res := call(t, m, "mcp__everything__get-tiny-image", nil)
	if res.IsError || !strings.Contains(res.Output, "[image: image/png, ") || !strings.Contains(res.Output, "MCP logo") {
		t.Errorf("image without vision = %+v", res)
	}
	m.opts.Vision = func() bool { return true }
	defer func() { m.opts.Vision = nil }()
	res = call(t, m, "mcp__everything__get-tiny-image", nil)
	var img *llm.Part
	for i := range res.Parts {
		if res.Parts[i].Type == llm.PartImage {
			img = &res.Parts[i]
		}
	}
	if img == nil || img.MediaType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG") {
		t.Errorf("image with vision = %+v", res.Parts)
	}
	if res := call(t, m, "mcp__everything__get-structured-content", tool.Args{"location": "New York"}); res.IsError || !strings.Contains(res.Output, "temperature") {
		t.Errorf("structured = %+v", res)
	}
	if res := call(t, m, "mcp__everything__get-resource-links", tool.Args{"count": 2}); res.IsError || !strings.Contains(res.Output, "[resource link: ") {
		t.Errorf("resource links = %+v", res)
	}
	// The server sends tools/list_changed right after initialize, racing
	// the first list; whichever landed, a refresh now settles it and the
	// next one has nothing to report.
	if _, err := m.Refresh(context.Background(), "everything"); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Refresh(context.Background(), "everything")
	if err != nil || rep.Format() != "MCP refresh complete:\n  everything: no changes" {
		t.Errorf("refresh = %q, %v", rep.Format(), err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
