package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/llm/anthropic"
	"turnstone/internal/llm/openai"
	"turnstone/internal/llmtest"
)

// anthropicEvents posts body to /v1/messages and returns the event names
// and data payloads of the SSE answer.
func anthropicEvents(t *testing.T, s *llmtest.Server, body string) ([]string, []map[string]any) {
	t.Helper()
	res, err := http.Post(s.RootURL()+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var names []string
	var datas []map[string]any
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("bad data %q: %v", data, err)
			}
			datas = append(datas, m)
		}
	}
	return names, datas
}

func TestAnthropicEventSequence(t *testing.T) {
	s := llmtest.NewServer()
	defer s.Close()
	s.Enqueue(llmtest.Reply{Reasoning: "hm", Content: "ok", ChunkSize: -1,
		ToolCalls: []llm.ToolCall{{Name: "bash", Arguments: `{"command":"ls"}`}},
		Usage:     llm.Usage{PromptTokens: 12, CompletionTokens: 5}})
	names, datas := anthropicEvents(t, s, `{"model":"claude-x","stream":true}`)
	want := "message_start content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events =\n%s\nwant\n%s", got, want)
	}
	for i, d := range datas {
		if d["type"] != names[i] {
			t.Errorf("event %d named %s carries type %v", i, names[i], d["type"])
		}
	}
	check := func(i int, path, want string) {
		t.Helper()
		var v any = datas[i]
		for _, k := range strings.Split(path, ".") {
			v = v.(map[string]any)[k]
		}
		b, _ := json.Marshal(v)
		if string(b) != want {
			t.Errorf("event %d %s = %s, want %s", i, path, b, want)
		}
	}
	check(0, "message.usage.input_tokens", "12")
	check(0, "message.model", `"claude-x"`)
	check(3, "delta", `{"signature":"`+llmtest.ThinkingSignature("fake-1")+`","type":"signature_delta"}`)
	check(8, "content_block", `{"id":"call_fake-1_0","input":{},"name":"bash","type":"tool_use"}`)
	check(9, "delta", `{"partial_json":"{\"command\":\"ls\"}","type":"input_json_delta"}`)
	check(11, "delta.stop_reason", `"tool_use"`)
	check(11, "usage.output_tokens", "5")
}

func TestAnthropicErrorShapes(t *testing.T) {
	s := llmtest.NewServer()
	defer s.Close()
	s.Enqueue(llmtest.Reply{Status: 529, RetryAfter: "3"}, llmtest.Reply{Content: "x", ErrorMessage: "boom"})
	res, err := http.Post(s.RootURL()+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 529 || res.Header.Get("Retry-After") != "3" ||
		strings.TrimSpace(string(b)) != `{"error":{"message":"Overloaded","type":"overloaded_error"},"type":"error"}` {
		t.Errorf("529 answer: %d %q %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	names, datas := anthropicEvents(t, s, `{"stream":true}`)
	if last := len(names) - 1; names[last] != "error" || datas[last]["error"].(map[string]any)["message"] != "boom" {
		t.Errorf("mid-stream error: %v %v", names, datas)
	}
}

// TestSameConversationBothProviders runs one scripted tool conversation
// through the OpenAI and the Anthropic adapter and expects the same calls,
// content and finish reasons from each.
func TestSameConversationBothProviders(t *testing.T) {
	script := []llmtest.Reply{
		{Content: "Checking.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}},
		{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "c3", Name: "read_file", Arguments: `{"path": "b"`}}},
		{Reasoning: "Summarise.", Content: "Two files, both empty."},
	}
	run := func(p llm.Provider, s *llmtest.Server) []llm.Response {
		s.Enqueue(script...)
		history := []llm.Message{{Role: llm.RoleUser, Content: "look around"}}
		var out []llm.Response
		for range script {
			resp, err := p.Stream(context.Background(), llm.Request{Model: "m", Messages: history}, nil)
			if err != nil {
				t.Fatalf("%s: %v", p.Name(), err)
			}
			out = append(out, resp)
			history = append(history, resp.Message)
			for _, c := range resp.Message.ToolCalls {
				history = append(history, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "result of " + c.Arguments})
			}
		}
		return out
	}
	so := llmtest.NewServer()
	defer so.Close()
	sa := llmtest.NewServer()
	defer sa.Close()
	viaOpenAI := run(openai.New(openai.Options{BaseURL: so.URL(), Retry: fastRetry}), so)
	viaAnthropic := run(anthropic.New(anthropic.Options{BaseURL: sa.RootURL(), Retry: fastRetry}), sa)
	for i := range script {
		o, a := viaOpenAI[i], viaAnthropic[i]
		if o.Message.Content != a.Message.Content || o.FinishReason != a.FinishReason || !reflect.DeepEqual(o.Message.ToolCalls, a.Message.ToolCalls) {
			t.Errorf("turn %d differs:\nopenai    %+v %s\nanthropic %+v %s", i, o.Message, o.FinishReason, a.Message, a.FinishReason)
		}
	}
	if len(sa.ChatRequests()) != 3 || sa.ChatRequests()[2].Path != "/v1/messages" {
		t.Errorf("anthropic requests: %d", len(sa.ChatRequests()))
	}
}
