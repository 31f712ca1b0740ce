package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/llmtest"
)

// web_fetch through the real binary: blocked by default on loopback,
// allowed with web_fetch_allow_private, and the extraction is one
// non-streaming call to the session's own endpoint.
func TestWebFetchEndToEnd(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><script>evil()</script></head><body><nav>menu</nav><p>The answer is 42.</p></body></html>`)
	}))
	defer page.Close()
	args := fmt.Sprintf(`{"url":%q,"question":"what is the answer?"}`, page.URL)

	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "web_fetch", Arguments: args}}}, llmtest.Reply{Content: "blocked, fine"})
	out, errOut, code := run(t, t.TempDir(), "", "--base-url", srv.URL(), "-p", "fetch", "--output-format", "json")
	if code != 0 {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, "blocked") || !strings.Contains(out, `"is_error": true`) {
		t.Fatalf("loopback fetch not blocked: %s", out)
	}

	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("[tools]\nweb_fetch_allow_private = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv2 := llmtest.NewServer()
	defer srv2.Close()
	srv2.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "web_fetch", Arguments: args}}},
		llmtest.Reply{Content: "42"}, // the extraction call
		llmtest.Reply{Content: "The page says 42."},
	)
	out, errOut, code = run(t, t.TempDir(), "", "--config", cfg, "--base-url", srv2.URL(), "-p", "fetch", "--output-format", "json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var res struct {
		ToolCalls []struct {
			Output  string `json:"output"`
			IsError bool   `json:"is_error"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != "42" {
		t.Fatalf("fetch result: %v %s", err, out)
	}
	reqs := srv2.ChatRequests()
	extract := reqs[1]
	if extract.Stream() {
		t.Fatal("extraction call must not stream")
	}
	body := string(extract.Body)
	if !strings.Contains(body, "The answer is 42.") || strings.Contains(body, "evil()") || !strings.Contains(body, "Question: what is the answer?") {
		t.Fatalf("extraction request: %s", body)
	}
}

// web_search against a local Tavily stand-in configured by base URL.
func TestWebSearchEndToEnd(t *testing.T) {
	var auth string
	tavily := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		fmt.Fprint(w, `{"answer":"Go 1.26","results":[{"title":"Go","url":"https://go.dev","content":"The Go language"}]}`)
	}))
	defer tavily.Close()
	cfg := filepath.Join(t.TempDir(), "c.toml")
	data := fmt.Sprintf("[api]\ntavily_key = \"tv-secret\"\ntavily_base_url = %q\n", tavily.URL)
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, t.TempDir(), "", "--config", cfg, "tools", "run", "web_search", `{"query":"latest go"}`)
	if code != 0 || !strings.Contains(out, "Answer: Go 1.26") || !strings.Contains(out, "1. [Go](https://go.dev)") || strings.Contains(out, "tv-secret") {
		t.Fatalf("web_search: %d %q", code, out)
	}
	if auth != "Bearer tv-secret" {
		t.Fatalf("auth header %q", auth)
	}
	out, _, code = run(t, t.TempDir(), "", "tools", "run", "web_search", `{"query":"x"}`)
	if code != 1 || !strings.Contains(out, "TAVILY_API_KEY") || !strings.Contains(out, "tavily_key") {
		t.Fatalf("missing key: %d %q", code, out)
	}
}
