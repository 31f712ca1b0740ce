package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/llmtest"
)

// The same scripted conversation must give the same tool results and final
// answer through both wire protocols.
func TestSameConversationThroughBothProviders(t *testing.T) {
	type outcome struct {
		Result    string `json:"result"`
		ToolCalls []struct {
			Name    string `json:"name"`
			Output  string `json:"output"`
			IsError bool   `json:"is_error"`
		} `json:"tool_calls"`
	}
	script := []llmtest.Reply{
		{Reasoning: "thinking about files", ToolCalls: []llm.ToolCall{
			{Name: "write_file", Arguments: `{"path":"a.txt","content":"one\n"}`},
			{Name: "search", Arguments: `{"query":"zzz-none"}`},
		}},
		{ToolCalls: []llm.ToolCall{{Name: "bash", Arguments: `{"command":"echo two >> a.txt; cat a.txt"}`}}},
		{ToolCalls: []llm.ToolCall{{Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		{Content: "Finished: two lines."},
	}
	runWith := func(provider string) (outcome, []llmtest.Recorded) {
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Enqueue(script...)
		dir := t.TempDir()
		base := srv.URL()
		if provider == "anthropic" {
			base = srv.RootURL()
		}
		out, errOut, code := run(t, dir, "", "--provider", provider, "--base-url", base, "--model", "claude-sonnet-4-5",
			"--api-key", "k", "-p", "go", "--output-format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", provider, code, errOut)
		}
		var o outcome
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatalf("%s: %v\n%s", provider, err, out)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
		if string(b) != "one\ntwo\n" {
			t.Fatalf("%s: file = %q", provider, b)
		}
		return o, srv.ChatRequests()
	}
	oa, reqA := runWith("openai")
	an, reqB := runWith("anthropic")
	if oa.Result != an.Result || len(oa.ToolCalls) != len(an.ToolCalls) {
		t.Fatalf("openai %+v\nanthropic %+v", oa, an)
	}
	for i := range oa.ToolCalls {
		if oa.ToolCalls[i] != an.ToolCalls[i] {
			t.Fatalf("call %d differs:\nopenai    %+v\nanthropic %+v", i, oa.ToolCalls[i], an.ToolCalls[i])
		}
	}
	if reqA[0].Path != "/v1/chat/completions" || reqB[0].Path != "/v1/messages" {
		t.Fatalf("paths %s %s", reqA[0].Path, reqB[0].Path)
	}
	if reqB[0].Header.Get("x-api-key") != "k" || reqB[0].JSON["system"] == nil {
		t.Fatalf("anthropic request lacks key or system: %v", reqB[0].JSON)
	}
}
