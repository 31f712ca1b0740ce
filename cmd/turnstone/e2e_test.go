package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/llmtest"
)

// binPath is the real turnstone binary, built once for the end-to-end tests.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "turnstone-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "turnstone")
	if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build turnstone: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run executes the binary in dir with an isolated config home.
func run(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	return runEnv(t, nil, dir, stdin, args...)
}

// runEnv is run with extra environment variables (they win over the defaults).
func runEnv(t *testing.T, env []string, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(),
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "NO_COLOR=1")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stream-json line is not JSON: %q", sc.Text())
		}
		evs = append(evs, m)
	}
	return evs
}

func tc(name, args string) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: args} }

// The core scenario: write_file → read_file → edit_file → bash, headless
// stream-json, ending with the right file content.
func TestHeadlessFileWorkflow(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{tc("write_file", `{"path":"notes.txt","content":"alpha\nbeta\n"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{tc("read_file", `{"path":"notes.txt"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{tc("edit_file", `{"path":"notes.txt","old_string":"beta","new_string":"gamma"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{tc("bash", `{"command":"cat notes.txt; exit 3"}`)}},
		llmtest.Reply{Content: "All done."},
	)
	out, errOut, code := run(t, dir, "", "--base-url", srv.URL(), "-p", "make notes", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if err != nil || string(b) != "alpha\ngamma\n" {
		t.Fatalf("file = %q, %v", b, err)
	}
	evs := events(t, out)
	if evs[0]["type"] != "init" || evs[0]["model"] != "fake-model" || evs[len(evs)-1]["type"] != "result" || evs[len(evs)-1]["text"] != "All done." {
		t.Fatalf("first/last events: %v / %v", evs[0], evs[len(evs)-1])
	}
	var results []map[string]any
	calls := 0
	for _, e := range evs {
		switch e["type"] {
		case "tool_result":
			results = append(results, e)
		case "tool_call":
			calls++
		}
	}
	if calls != 4 || len(results) != 4 {
		t.Fatalf("%d calls, %d results", calls, len(results))
	}
	if got := results[3]["output"]; got != "alpha\ngamma\n[exit code: 3]" || results[3]["is_error"] != false {
		t.Fatalf("bash result = %v", results[3])
	}
	// The model received exactly the tool_result outputs.
	reqs := srv.ChatRequests()
	last := reqs[len(reqs)-1].JSON["messages"].([]any)
	toolMsg := last[len(last)-1].(map[string]any)
	if toolMsg["role"] != "tool" || toolMsg["content"] != results[3]["output"] {
		t.Fatalf("model saw %v", toolMsg)
	}
}

// Error paths answer the model and the run goes on.
func TestHeadlessErrorPathsReachModel(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			tc("bash", `echo bare`),
			tc("bash", `[1,2]`),
			tc("no_such_tool", `{}`),
			tc("bash", `{"command":"rm -rf /"}`),
			tc("read_file", `{"path":"missing.txt"}`),
		}},
		llmtest.Reply{Content: "ok"},
	)
	out, errOut, code := run(t, t.TempDir(), "", "--base-url", srv.URL(), "-p", "go", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Result    string `json:"result"`
		ToolCalls []struct {
			Output  string `json:"output"`
			IsError bool   `json:"is_error"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	want := []struct {
		sub   string
		isErr bool
	}{
		{"bare", false},
		{"must be a JSON object", true},
		{`unknown tool "no_such_tool"`, true},
		{"Blocked", true},
		{"not found", true},
	}
	if res.Result != "ok" || len(res.ToolCalls) != len(want) {
		t.Fatalf("result %+v", res)
	}
	for i, w := range want {
		if !strings.Contains(res.ToolCalls[i].Output, w.sub) || res.ToolCalls[i].IsError != w.isErr {
			t.Errorf("call %d: %+v, want %q isErr=%v", i, res.ToolCalls[i], w.sub, w.isErr)
		}
	}
}

func TestHeadlessEndpointFailures(t *testing.T) {
	_, errOut, code := run(t, t.TempDir(), "", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "-p", "hi")
	if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "unreachable") {
		t.Fatalf("unreachable endpoint: code %d stderr %q", code, errOut)
	}
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Status: 400, ErrorMessage: "model does not exist"})
	out, errOut, code := run(t, t.TempDir(), "", "--base-url", srv.URL(), "--model", "m", "-p", "hi", "--output-format", "stream-json")
	if code == 0 || !strings.Contains(errOut, "HTTP 400") || !strings.Contains(errOut, "model does not exist") || strings.Contains(errOut, "goroutine") {
		t.Fatalf("HTTP error: code %d stderr %q", code, errOut)
	}
	evs := events(t, out)
	if evs[len(evs)-1]["type"] != "error" {
		t.Fatalf("last event %v", evs[len(evs)-1])
	}
	srv.Enqueue(llmtest.Reply{Content: "partial", RawSSE: "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {not json\n\n"})
	_, errOut, code = run(t, t.TempDir(), "", "--base-url", srv.URL(), "--model", "m", "-p", "hi")
	if code == 0 || errOut == "" {
		t.Fatalf("broken stream: code %d stderr %q", code, errOut)
	}
}

func TestHeadlessPromptFromStdin(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Content: "echoed"})
	out, errOut, code := run(t, t.TempDir(), "from stdin\n", "--base-url", srv.URL(), "-p", "-")
	if code != 0 || out != "echoed\n" {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	msgs := srv.ChatRequests()[0].JSON["messages"].([]any)
	if msgs[len(msgs)-1].(map[string]any)["content"] != "from stdin\n" {
		t.Fatalf("prompt not taken from stdin: %v", msgs)
	}
}

func TestToolsCommands(t *testing.T) {
	dir := t.TempDir()
	out, _, code := run(t, dir, "", "tools")
	if code != 0 || !strings.Contains(out, "read_file") || !strings.Contains(out, "AUTO_APPROVE") {
		t.Fatalf("tools: %d %s", code, out)
	}
	out, _, code = run(t, dir, "", "tools", "run", "bash", `{"command":"echo hi"}`)
	if code != 0 || out != "hi\n" {
		t.Fatalf("tools run bash: %d %q", code, out)
	}
	out, _, code = run(t, dir, "", "tools", "run", "bash", `{"command":"exit 2"}`)
	if code != 0 || !strings.Contains(out, "[exit code: 2]") {
		t.Fatalf("non-zero exit is not an error: %d %q", code, out)
	}
	out, _, code = run(t, dir, "", "--base-url", "http://x/v1", "tools", "run", "read_file", "nope.txt")
	if code != 1 || !strings.Contains(out, "not found") {
		t.Fatalf("error result must exit 1: %d %q", code, out)
	}
	if out, _, code = run(t, dir, "", "--version"); code != 0 || !strings.HasPrefix(out, "turnstone ") {
		t.Fatalf("--version: %d %q", code, out)
	}
}

func TestConfigPrecedence(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "c.toml")
	data := fmt.Sprintf("[api]\nbase_url = %q\n[model]\nname = \"file-model\"\nmax_tokens = 111\n", srv.URL())
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Reply{Content: "a"}, llmtest.Reply{Content: "b"}, llmtest.Reply{Content: "c"}, llmtest.Reply{Content: "d"})
	if _, e, code := run(t, t.TempDir(), "", "--config", cfg, "-p", "x"); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := run(t, t.TempDir(), "", "--config", cfg, "-p", "x", "--model", "flag-model", "--max-tokens", "222"); code != 0 {
		t.Fatal(e)
	}
	env := []string{"TURNSTONE_MODEL=env-model"}
	if _, e, code := runEnv(t, env, t.TempDir(), "", "--config", cfg, "-p", "x"); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := runEnv(t, env, t.TempDir(), "", "--config", cfg, "-p", "x", "--model", "flag-model"); code != 0 {
		t.Fatal(e)
	}
	reqs := srv.ChatRequests()
	got := []any{reqs[0].JSON["model"], reqs[1].JSON["model"], reqs[2].JSON["model"], reqs[3].JSON["model"]}
	if fmt.Sprint(got) != "[file-model flag-model env-model flag-model]" {
		t.Fatalf("flag > env > file > default violated: %v", got)
	}
	if reqs[0].JSON["max_completion_tokens"] != 111.0 || reqs[1].JSON["max_completion_tokens"] != 222.0 {
		t.Fatalf("max tokens: %v %v", reqs[0].JSON["max_completion_tokens"], reqs[1].JSON["max_completion_tokens"])
	}
}

// The API key is neither inherited by bash nor echoed back to the model.
func TestSecretsStayOutOfToolOutput(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "leak.txt"), []byte("key: sk-test-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			tc("bash", `{"command":"echo env=$OPENAI_API_KEY"}`),
			tc("read_file", `{"path":"leak.txt"}`),
		}},
		llmtest.Reply{Content: "ok"},
	)
	out, errOut, code := runEnv(t, []string{"OPENAI_API_KEY=sk-test-0123456789"}, dir, "", "--base-url", srv.URL(), "-p", "go", "--output-format", "stream-json")
	if code != 0 {
		t.Fatal(errOut)
	}
	if strings.Contains(out, "sk-test-0123456789") {
		t.Fatalf("secret in output: %s", out)
	}
	if !strings.Contains(out, `"env="`) || !strings.Contains(out, "[redacted]") {
		t.Fatalf("expected the bash output and a redaction: %s", out)
	}
	for _, r := range srv.ChatRequests()[1:] {
		if strings.Contains(string(r.Body), "sk-test-0123456789") {
			t.Fatal("secret reached the model")
		}
	}
}
