package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"turnstone/internal/llm"
)

// captureServer answers every request with a minimal stream and hands the
// request body and headers to the test.
func captureServer(t *testing.T) (*httptest.Server, chan *http.Request, chan []byte) {
	t.Helper()
	reqs := make(chan *http.Request, 4)
	bodies := make(chan []byte, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		reqs <- r
		bodies <- b
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, reqs, bodies
}

func TestRequestBodyShape(t *testing.T) {
	srv, reqs, bodies := captureServer(t)
	p := New(Options{BaseURL: srv.URL + "/v1/", APIKey: "sk-test"})
	temp := 0.5
	req := llm.Request{
		Model:  "m1",
		System: "be useful",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "look at this"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "read_file", Arguments: `{"path":"a.png"}`},
				{ID: "c2", Name: "bash", Arguments: `{"command":"ls"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "read_file", Parts: []llm.Part{
				{Type: llm.PartText, Text: "Image: a.png"},
				{Type: llm.PartImage, MediaType: "image/png", Data: []byte{1, 2, 3}},
			}},
			{Role: llm.RoleTool, ToolCallID: "c2", Content: "a.png\n"},
			{Role: llm.RoleAssistant, Content: "done"},
		},
		Tools: []llm.ToolDef{
			{Name: "bash", Description: "run", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
			{Name: "mcp__x", Description: "deferred", DeferLoading: true},
		},
		MaxTokens:       1000,
		Temperature:     &temp,
		ReasoningEffort: "high",
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	r := <-reqs
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		t.Errorf("request = %s %s", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	var got map[string]any
	if err := json.Unmarshal(<-bodies, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":                 "m1",
		"stream":                true,
		"stream_options":        map[string]any{"include_usage": true},
		"max_completion_tokens": 1000.0,
		"max_tokens":            1000.0, // for llama.cpp; never sent to api.openai.com
		"temperature":           0.5,
		"chat_template_kwargs":  map[string]any{"reasoning_effort": "high"},
		"messages": []any{
			map[string]any{"role": "system", "content": "be useful"},
			map[string]any{"role": "user", "content": "look at this"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path":"a.png"}`}},
				map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "bash", "arguments": `{"command":"ls"}`}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": []any{
				map[string]any{"type": "text", "text": "Image: a.png"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AQID"}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "c2", "content": "a.png\n"},
			map[string]any{"role": "assistant", "content": "done"},
		},
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{"name": "bash", "description": "run",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}},
			map[string]any{"type": "function", "defer_loading": true, "function": map[string]any{"name": "mcp__x", "description": "deferred",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{}}}},
		},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			gb, _ := json.Marshal(got[k])
			wb, _ := json.Marshal(w)
			t.Errorf("body[%q] =\n %s\nwant\n %s", k, gb, wb)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected body field %q", k)
		}
	}
}

func TestRequestBodyOptionalFields(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		req     llm.Request
		stream  bool
		present map[string]any
		absent  []string
	}{
		{
			name:   "minimal non-streaming",
			req:    llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}},
			absent: []string{"stream_options", "tools", "max_completion_tokens", "temperature", "chat_template_kwargs", "reasoning_effort"},
			present: map[string]any{"stream": false, "messages": []any{
				map[string]any{"role": "user", "content": "hi"}}},
		},
		{
			name:    "openai host gets top-level effort",
			opts:    Options{BaseURL: "https://api.openai.com/v1"},
			req:     llm.Request{Model: "o3", ReasoningEffort: "low", MaxTokens: 50},
			stream:  true,
			present: map[string]any{"reasoning_effort": "low", "max_completion_tokens": 50.0},
			absent:  []string{"chat_template_kwargs", "max_tokens"},
		},
		{
			name:   "effort omitted on request",
			opts:   Options{BaseURL: "http://x/v1", EffortParam: EffortOmit},
			req:    llm.Request{Model: "m", ReasoningEffort: "low"},
			absent: []string{"chat_template_kwargs", "reasoning_effort"},
		},
		{
			name:    "extra body overrides",
			opts:    Options{BaseURL: "http://x/v1", ExtraBody: map[string]any{"top_p": 0.9, "temperature": 0.1}},
			req:     llm.Request{Model: "m"},
			present: map[string]any{"top_p": 0.9, "temperature": 0.1},
		},
		{
			name:    "empty assistant without calls sends empty string",
			req:     llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant}}},
			present: map[string]any{"messages": []any{map[string]any{"role": "assistant", "content": ""}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(tt.opts).body(tt.req, tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			for k, w := range tt.present {
				if !reflect.DeepEqual(got[k], w) {
					t.Errorf("body[%q] = %#v, want %#v", k, got[k], w)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("body has %q = %#v, want it absent", k, got[k])
				}
			}
		})
	}
}

func TestNoAuthorizationWithoutKey(t *testing.T) {
	srv, reqs, _ := captureServer(t)
	p := New(Options{BaseURL: srv.URL})
	if _, err := p.Stream(context.Background(), llm.Request{Model: "m"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := (<-reqs).Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}
