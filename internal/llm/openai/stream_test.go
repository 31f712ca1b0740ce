package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"turnstone/internal/llm"
)

// sse builds an SSE body from chunk JSON strings and ends it with [DONE].
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// delta is one choice-0 chunk with the given delta JSON and finish reason.
func delta(d string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"choices":[{"index":0,"delta":` + d + `,"finish_reason":` + f + `}]}`
}

func content(s string) string {
	b, _ := json.Marshal(s)
	return delta(`{"content":`+string(b)+`}`, "")
}

// streamBody serves body once per request and returns the provider's result
// plus the deltas it delivered.
func streamBody(t *testing.T, body string) (llm.Response, []llm.Delta, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	var deltas []llm.Delta
	p := New(Options{BaseURL: srv.URL, Retry: llm.RetryPolicy{Retries: -1}})
	resp, err := p.Stream(context.Background(), llm.Request{Model: "m"}, func(d llm.Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

func joined(deltas []llm.Delta) (content, reasoning, info string) {
	var c, r, i strings.Builder
	for _, d := range deltas {
		c.WriteString(d.Content)
		r.WriteString(d.Reasoning)
		i.WriteString(d.Info)
	}
	return c.String(), r.String(), i.String()
}

func TestStreamAssembly(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		content   string
		reasoning string
		info      string
		calls     []llm.ToolCall
		finish    llm.FinishReason
		usage     llm.Usage
	}{
		{
			name:    "content and usage",
			body:    sse(delta(`{"role":"assistant","content":""}`, ""), content("Hel"), content("lo"), delta(`{}`, "stop"), `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`),
			content: "Hello", finish: llm.FinishStop, usage: llm.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12},
		},
		{
			name: "parallel calls merge by index",
			body: sse(
				delta(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"bash","arguments":""}}]}`, ""),
				delta(`{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}`, ""),
				delta(`{"tool_calls":[{"index":1,"function":{"arguments":"th\":\"x\"}"}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]}`, ""),
				delta(`{}`, "tool_calls")),
			calls: []llm.ToolCall{
				{ID: "a", Name: "bash", Arguments: `{"command":"ls"}`},
				{ID: "b", Name: "read_file", Arguments: `{"path":"x"}`},
			},
			finish: llm.FinishToolCalls,
		},
		{
			name: "calls sorted by index",
			body: sse(
				delta(`{"tool_calls":[{"index":1,"id":"b","function":{"name":"second","arguments":"{}"}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"first","arguments":"{}"}}]}`, ""),
				delta(`{}`, "tool_calls")),
			calls:  []llm.ToolCall{{ID: "a", Name: "first", Arguments: "{}"}, {ID: "b", Name: "second", Arguments: "{}"}},
			finish: llm.FinishToolCalls,
		},
		{
			name: "missing index with ids keeps parallel calls apart",
			body: sse(
				delta(`{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}`, ""),
				delta(`{"tool_calls":[{"function":{"arguments":"\"Oslo\"}"}}]}`, ""),
				delta(`{"tool_calls":[{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"CET\"}"}}]}`, ""),
				delta(`{}`, "tool_calls")),
			calls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
				{ID: "call_2", Name: "get_time", Arguments: `{"tz":"CET"}`},
			},
			finish: llm.FinishToolCalls,
		},
		{
			name: "missing index and ids, complete calls",
			body: sse(
				delta(`{"tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b","arguments":"{\"x\":1}"}}]}`, ""),
				delta(`{}`, "stop")),
			calls:  []llm.ToolCall{{Name: "a", Arguments: "{}"}, {Name: "b", Arguments: `{"x":1}`}},
			finish: llm.FinishToolCalls,
		},
		{
			name: "missing index, same id repeated continues the call",
			body: sse(
				delta(`{"tool_calls":[{"id":"c","function":{"name":"bash","arguments":"{\"comm"}}]}`, ""),
				delta(`{"tool_calls":[{"id":"c","function":{"arguments":"and\":\"ls\"}"}}]}`, ""),
				delta(`{}`, "tool_calls")),
			calls:  []llm.ToolCall{{ID: "c", Name: "bash", Arguments: `{"command":"ls"}`}},
			finish: llm.FinishToolCalls,
		},
		{
			name:   "arguments sent as an object",
			body:   sse(delta(`{"tool_calls":[{"index":0,"id":"c","function":{"name":"bash","arguments":{"command":"ls"}}}]}`, "tool_calls")),
			calls:  []llm.ToolCall{{ID: "c", Name: "bash", Arguments: `{"command":"ls"}`}},
			finish: llm.FinishToolCalls,
		},
		{
			name:      "reasoning_content field",
			body:      sse(delta(`{"reasoning_content":"let me "}`, ""), delta(`{"reasoning_content":"think"}`, ""), content("answer"), delta(`{}`, "stop")),
			content:   "answer",
			reasoning: "let me think",
			finish:    llm.FinishStop,
		},
		{
			name:      "reasoning field",
			body:      sse(delta(`{"reasoning":"hmm","content":null}`, ""), content("ok"), delta(`{}`, "stop")),
			content:   "ok",
			reasoning: "hmm",
			finish:    llm.FinishStop,
		},
		{
			name:      "both reasoning fields are not doubled",
			body:      sse(delta(`{"reasoning":"x","reasoning_content":"x"}`, "stop")),
			reasoning: "x",
			finish:    llm.FinishStop,
		},
		{
			name:      "think tags in content",
			body:      sse(content("<thi"), content("nk>plan</th"), content("ink>Answer"), delta(`{}`, "stop")),
			content:   "Answer",
			reasoning: "plan",
			finish:    llm.FinishStop,
		},
		{
			name:    "finish length",
			body:    sse(content("partial"), delta(`{"tool_calls":[{"index":0,"id":"c","function":{"name":"bash","arguments":"{\"co"}}]}`, "length")),
			content: "partial",
			calls:   []llm.ToolCall{{ID: "c", Name: "bash", Arguments: `{"co`}},
			finish:  llm.FinishLength,
		},
		{
			name:    "content filter",
			body:    sse(content("x"), delta(`{}`, "content_filter")),
			content: "x",
			finish:  llm.FinishContentFilter,
		},
		{
			name:    "comments, event names, CRLF and content parts",
			body:    ": keep-alive\r\n\r\nevent: message\r\ndata: " + delta(`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "stop") + "\r\n\r\ndata: [DONE]\r\n\r\n",
			content: "ab",
			finish:  llm.FinishStop,
		},
		{
			name:    "last lines without newline",
			body:    "data: " + delta(`{"content":"x"}`, "stop") + "\n\ndata: [DONE]",
			content: "x",
			finish:  llm.FinishStop,
		},
		{
			name:    "finish without [DONE] is complete",
			body:    "data: " + delta(`{"content":"x"}`, "stop") + "\n\n",
			content: "x",
			finish:  llm.FinishStop,
		},
		{
			name: "url citations become a sources info line",
			body: sse(content("See docs."),
				delta(`{"annotations":[{"type":"url_citation","url_citation":{"url":"https://a.example","title":"A"}},{"type":"url_citation","url_citation":{"url":"https://a.example","title":"A"}}]}`, ""),
				delta(`{"annotations":[{"type":"url_citation","url_citation":{"url":"https://b.example","title":""}}]}`, "stop")),
			content: "See docs.",
			info:    "Sources:\n- [A](https://a.example)\n- [https://b.example](https://b.example)",
			finish:  llm.FinishStop,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, deltas, err := streamBody(t, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			c, r, info := joined(deltas)
			if c != tt.content || r != tt.reasoning || info != tt.info {
				t.Errorf("deltas content %q reasoning %q info %q, want %q / %q / %q", c, r, info, tt.content, tt.reasoning, tt.info)
			}
			if resp.Message.Content != tt.content || resp.Message.Role != llm.RoleAssistant {
				t.Errorf("message = %+v, want content %q", resp.Message, tt.content)
			}
			if !reflect.DeepEqual(resp.Message.ToolCalls, tt.calls) {
				t.Errorf("calls = %+v, want %+v", resp.Message.ToolCalls, tt.calls)
			}
			if resp.FinishReason != tt.finish {
				t.Errorf("finish = %q, want %q", resp.FinishReason, tt.finish)
			}
			if resp.Usage != tt.usage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tt.usage)
			}
		})
	}
}

// TestStreamThinkTagSplits feeds the same text cut at every chunk size, so
// the tags fall across chunk boundaries in many ways.
func TestStreamThinkTagSplits(t *testing.T) {
	text := "<think>step 1\nstep 2</think>\n\nThe answer is <b>42</b>.<reasoning>more</reasoning>!"
	for size := 1; size <= len(text); size++ {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var chunks []string
			for i := 0; i < len(text); i += size {
				chunks = append(chunks, content(text[i:min(i+size, len(text))]))
			}
			chunks = append(chunks, delta(`{}`, "stop"))
			resp, deltas, err := streamBody(t, sse(chunks...))
			if err != nil {
				t.Fatal(err)
			}
			c, r, _ := joined(deltas)
			wantC, wantR := "\n\nThe answer is <b>42</b>.!", "step 1\nstep 2more"
			if c != wantC || r != wantR || resp.Message.Content != wantC {
				t.Errorf("content %q reasoning %q message %q", c, r, resp.Message.Content)
			}
		})
	}
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
		// apiStatus is the wanted *llm.APIError status, -1 for another error.
		apiStatus int
	}{
		{"broken after content", "data: " + content("half") + "\n\n", "stream ended before the response was complete", 0},
		{"non-JSON chunk", sse(content("a"), `{"choices":[{"delta":`, delta(`{}`, "stop")), "not valid JSON", -1},
		{"non-JSON chunk before content", sse(`not json`), "not valid JSON", -1},
		{"cut inside a line", "data: " + content("a") + "\n\ndata: {\"choices\":[{\"del", "cut off inside a line", 0},
		{"error object in stream", sse(content("a"), `{"error":{"message":"model crashed","type":"server_error"}}`), "model crashed", -1},
		{"error object with code", sse(`{"error":{"message":"too long","code":400}}`), "too long", 400},
		{"vllm object error", sse(`{"object":"error","message":"bad input","code":400}`), "bad input", 400},
		{"error event", "event: error\ndata: {\"message\":\"overloaded\"}\n\n", "overloaded", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := streamBody(t, tt.body)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			var ae *llm.APIError
			isAPI := errAs(err, &ae)
			switch {
			case tt.apiStatus < 0 && isAPI:
				t.Errorf("got APIError %v, want another error", ae)
			case tt.apiStatus >= 0 && (!isAPI || ae.Status != tt.apiStatus):
				t.Errorf("got %T %v, want APIError status %d", err, err, tt.apiStatus)
			}
		})
	}
}

func TestCompleteParsesWholeAnswer(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant",
			"content":"<think>hidden</think>Title: X","reasoning_content":"also hidden",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}},
			              {"id":"c2","type":"function","function":{"name":"math","arguments":"{\"code\":\"1\"}"}}]},
			"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`)
	}))
	defer srv.Close()
	resp, err := New(Options{BaseURL: srv.URL}).Complete(context.Background(), llm.Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if body["stream"] != false || body["stream_options"] != nil {
		t.Errorf("request stream fields: %v / %v", body["stream"], body["stream_options"])
	}
	want := llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: "Title: X", ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "bash", Arguments: "{}"}, {ID: "c2", Name: "math", Arguments: `{"code":"1"}`}}},
		FinishReason: llm.FinishToolCalls,
		Usage:        llm.Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("resp = %+v\nwant %+v", resp, want)
	}
}

func TestStreamRequestAnsweredWithJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":"whole"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	var got []llm.Delta
	resp, err := New(Options{BaseURL: srv.URL}).Stream(context.Background(), llm.Request{}, func(d llm.Delta) { got = append(got, d) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "whole" || len(got) != 1 || got[0].Content != "whole" {
		t.Errorf("resp %+v deltas %+v", resp, got)
	}
}
