package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/llmtest"
)

// mcpTestServer builds internal/mcp/testdata/testserver once per test.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testserver")
	out, err := exec.Command("go", "build", "-o", bin, "../../internal/mcp/testdata/testserver").CombinedOutput()
	if err != nil {
		t.Fatalf("build MCP test server: %v\n%s", err, out)
	}
	return bin
}

func writeMCPConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func toolNames(req llmtest.Recorded) []string {
	var names []string
	tools, _ := req.JSON["tools"].([]any)
	for _, t := range tools {
		fn := t.(map[string]any)["function"].(map[string]any)
		names = append(names, fn["name"].(string))
	}
	return names
}

// An MCP tool is offered after the built-ins, called through the pipeline,
// and its result returns to the model; a server with a bad name is
// reported and the rest works.
func TestMCPToolThroughPipeline(t *testing.T) {
	bin := mcpTestServer(t)
	cfg := writeMCPConfig(t, map[string]any{
		"t":        map[string]any{"command": bin},
		"bad__srv": map[string]any{"command": bin},
	})
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			{Name: "mcp__t__echo", Arguments: `{"message":"hello mcp"}`},
			{Name: "mcp__t__fail", Arguments: `{}`},
		}},
		llmtest.Reply{Content: "done"},
	)
	out, errOut, code := run(t, t.TempDir(), "", "--mcp-config", cfg, "--tool-search", "off", "--base-url", srv.URL(),
		"-p", "use mcp", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "bad__srv") || !strings.Contains(errOut, "__") {
		t.Fatalf("bad server name not reported: %q", errOut)
	}
	var res struct {
		ToolCalls []struct {
			Output  string `json:"output"`
			IsError bool   `json:"is_error"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err, out)
	}
	if !strings.Contains(res.ToolCalls[0].Output, "hello mcp") || res.ToolCalls[0].IsError || !res.ToolCalls[1].IsError {
		t.Fatalf("results %+v", res.ToolCalls)
	}
	names := toolNames(srv.ChatRequests()[0])
	i := slices.Index(names, "mcp__t__echo")
	if i < 0 || i < slices.Index(names, "write_file") {
		t.Fatalf("MCP tools must follow the built-ins: %v", names)
	}
	out, _, code = run(t, t.TempDir(), "", "--mcp-config", cfg, "mcp", "list")
	if code != 0 || !strings.Contains(out, "mcp__t__echo") || !strings.Contains(out, "[MCP: t]") {
		t.Fatalf("mcp list: %d %s", code, out)
	}
	out, _, code = run(t, t.TempDir(), "", "--mcp-config", cfg, "tools", "run", "mcp__t__echo", `{"message":"cli"}`)
	if code != 0 || !strings.Contains(out, "cli") {
		t.Fatalf("tools run mcp: %d %q", code, out)
	}
}

// With more tools than the threshold, the first request offers only the
// built-ins and tool_search; a search finds the MCP tool, which is offered
// and callable on the next request and stays offered.
func TestToolSearchDefersAndExpands(t *testing.T) {
	bin := mcpTestServer(t)
	cfg := writeMCPConfig(t, map[string]any{"t": map[string]any{"command": bin, "args": []string{"-tools", "30"}}})
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "tool_search", Arguments: `{"query":"echo back the input message"}`}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "mcp__t__echo", Arguments: `{"message":"found you"}`}}},
		llmtest.Reply{Content: "done"},
	)
	out, errOut, code := run(t, t.TempDir(), "", "--mcp-config", cfg, "--base-url", srv.URL(), "-p", "go", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	reqs := srv.ChatRequests()
	first := toolNames(reqs[0])
	for _, n := range first {
		if strings.HasPrefix(n, "mcp__") {
			t.Fatalf("first request offered deferred %s: %v", n, first)
		}
	}
	if !slices.Contains(first, "tool_search") {
		t.Fatalf("tool_search not offered: %v", first)
	}
	sys := fmt.Sprint(reqs[0].JSON["messages"].([]any)[0])
	if !strings.Contains(sys, "tool_search") {
		t.Fatalf("system prompt lacks the tool search hint: %s", sys)
	}
	for i := 1; i < 3; i++ {
		if !slices.Contains(toolNames(reqs[i]), "mcp__t__echo") {
			t.Fatalf("request %d does not offer the found tool: %v", i, toolNames(reqs[i]))
		}
	}
	if !strings.Contains(out, "mcp__t__echo") || !strings.Contains(out, "found you") {
		t.Fatalf("search or call result missing: %s", out)
	}
	out, _, code = run(t, t.TempDir(), "", "--mcp-config", cfg, "tools", "run", "tool_search", `{"query":"echo"}`)
	if code != 0 || !strings.Contains(out, "mcp__t__echo") {
		t.Fatalf("tools run tool_search: %d %s", code, out)
	}
}
