package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"turnstone/internal/llm"
	"turnstone/internal/llm/openai"
	"turnstone/internal/llmtest"
)

var fastRetry = llm.RetryPolicy{Retries: 3, Base: 10 * time.Millisecond}

func newPair(t *testing.T) (*llmtest.Server, *openai.Provider) {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	return s, openai.New(openai.Options{BaseURL: s.URL(), APIKey: "k", Retry: fastRetry})
}

type collected struct{ content, reasoning, info []string }

func (c *collected) add(d llm.Delta) {
	switch {
	case d.Content != "":
		c.content = append(c.content, d.Content)
	case d.Reasoning != "":
		c.reasoning = append(c.reasoning, d.Reasoning)
	case d.Info != "":
		c.info = append(c.info, d.Info)
	}
}

func req(text string) llm.Request {
	return llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestStreamedRepliesThroughProvider(t *testing.T) {
	calls := []llm.ToolCall{
		{Name: "bash", Arguments: `{"command":"ls -la"}`},
		{ID: "mine", Name: "read_file", Arguments: `{"path":"größe.txt"}`},
	}
	tests := []struct {
		name      string
		reply     llmtest.Reply
		content   string
		reasoning string
		calls     []llm.ToolCall
		finish    llm.FinishReason
	}{
		{name: "content", reply: llmtest.Reply{Content: "Hello, wörld!"}, content: "Hello, wörld!", finish: llm.FinishStop},
		{name: "reasoning field", reply: llmtest.Reply{Reasoning: "hmm", Content: "ok"}, content: "ok", reasoning: "hmm", finish: llm.FinishStop},
		{name: "think tags", reply: llmtest.Reply{Reasoning: "inline", Content: "ok", ThinkTags: true, ChunkSize: 3}, content: "ok", reasoning: "inline", finish: llm.FinishStop},
		{
			name:  "tool calls chunked",
			reply: llmtest.Reply{Content: "Let me look.", ToolCalls: calls, ChunkSize: 2},
			calls: []llm.ToolCall{
				{ID: "call_fake-1_0", Name: "bash", Arguments: `{"command":"ls -la"}`},
				{ID: "mine", Name: "read_file", Arguments: `{"path":"größe.txt"}`},
			},
			content: "Let me look.", finish: llm.FinishToolCalls,
		},
		{
			name:  "tool calls without index",
			reply: llmtest.Reply{ToolCalls: calls, OmitToolIndex: true},
			calls: []llm.ToolCall{
				{ID: "call_fake-1_0", Name: "bash", Arguments: `{"command":"ls -la"}`},
				{ID: "mine", Name: "read_file", Arguments: `{"path":"größe.txt"}`},
			},
			finish: llm.FinishToolCalls,
		},
		{name: "finish length", reply: llmtest.Reply{Content: "cut", Finish: llm.FinishLength}, content: "cut", finish: llm.FinishLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p := newPair(t)
			s.Enqueue(tt.reply)
			var got collected
			resp, err := p.Stream(context.Background(), req("hi"), got.add)
			if err != nil {
				t.Fatal(err)
			}
			if c := strings.Join(got.content, ""); c != tt.content || resp.Message.Content != tt.content {
				t.Errorf("content deltas %q message %q, want %q", c, resp.Message.Content, tt.content)
			}
			if r := strings.Join(got.reasoning, ""); r != tt.reasoning {
				t.Errorf("reasoning = %q, want %q", r, tt.reasoning)
			}
			if !reflect.DeepEqual(resp.Message.ToolCalls, tt.calls) {
				t.Errorf("calls = %+v, want %+v", resp.Message.ToolCalls, tt.calls)
			}
			if resp.FinishReason != tt.finish {
				t.Errorf("finish = %q, want %q", resp.FinishReason, tt.finish)
			}
			if resp.Usage.PromptTokens < 1 || resp.Usage.CompletionTokens < 1 {
				t.Errorf("estimated usage missing: %+v", resp.Usage)
			}
			if s.Pending() != 0 {
				t.Errorf("pending = %d", s.Pending())
			}
		})
	}
}

func TestChunkingProducesSmallDeltas(t *testing.T) {
	s, p := newPair(t)
	s.Enqueue(llmtest.Reply{Content: "abcdefghij"})
	var got collected
	if _, err := p.Stream(context.Background(), req("x"), got.add); err != nil {
		t.Fatal(err)
	}
	if want := []string{"abcd", "efgh", "ij"}; !reflect.DeepEqual(got.content, want) {
		t.Errorf("deltas = %q, want %q", got.content, want)
	}
}

func TestRecordsRequests(t *testing.T) {
	s, p := newPair(t)
	s.Enqueue(llmtest.Reply{Content: "a", Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 5}})
	resp, err := p.Stream(context.Background(), req("first"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{PromptTokens: 100, CompletionTokens: 5, TotalTokens: 105}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	res, err := http.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&models)
	res.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != llmtest.ModelID {
		t.Errorf("models = %+v", models)
	}

	all, chat := s.Requests(), s.ChatRequests()
	if len(all) != 2 || len(chat) != 1 {
		t.Fatalf("requests %d, chat requests %d", len(all), len(chat))
	}
	r := chat[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("recorded %s %s auth %q", r.Method, r.Path, r.Header.Get("Authorization"))
	}
	msgs, _ := r.JSON["messages"].([]any)
	if len(msgs) != 1 || !r.Stream() || !strings.Contains(string(r.Body), `"first"`) {
		t.Errorf("recorded body %s", r.Body)
	}
	if all[1].Path != "/v1/models" {
		t.Errorf("second request path %q", all[1].Path)
	}
}

func TestCompleteNonStreaming(t *testing.T) {
	s, p := newPair(t)
	s.Enqueue(llmtest.Reply{Content: "A title", Reasoning: "why", ThinkTags: true,
		ToolCalls: []llm.ToolCall{{ID: "c", Name: "x", Arguments: "{}"}}, Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 2}})
	resp, err := p.Complete(context.Background(), req("title?"))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Content: "A title", ToolCalls: []llm.ToolCall{{ID: "c", Name: "x", Arguments: "{}"}}},
		FinishReason: llm.FinishToolCalls,
		Usage:        llm.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("resp = %+v\nwant %+v", resp, want)
	}
	if s.ChatRequests()[0].Stream() {
		t.Error("Complete sent a streaming request")
	}
}

func TestErrorRepliesAndRetries(t *testing.T) {
	s, p := newPair(t)
	s.Enqueue(
		llmtest.Reply{Status: 429, ErrorMessage: "slow down", RetryAfter: "0"},
		llmtest.Reply{Status: 503},
		llmtest.Reply{Content: "finally"},
	)
	var got collected
	resp, err := p.Stream(context.Background(), req("x"), got.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "finally" || len(s.ChatRequests()) != 3 {
		t.Errorf("content %q after %d requests", resp.Message.Content, len(s.ChatRequests()))
	}
	if want := []string{"[Retrying in 10ms: HTTP 429]", "[Retrying in 20ms: HTTP 503]"}; !reflect.DeepEqual(got.info, want) {
		t.Errorf("info = %q, want %q", got.info, want)
	}

	s.Enqueue(llmtest.Reply{Status: 400, ErrorMessage: "context too long"})
	_, err = p.Stream(context.Background(), req("x"), nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Message != "context too long" {
		t.Errorf("error = %v", err)
	}
}

func TestScriptRanOut(t *testing.T) {
	s := llmtest.NewServer()
	defer s.Close()
	p := openai.New(openai.Options{BaseURL: s.URL(), Retry: llm.RetryPolicy{Retries: -1}})
	_, err := p.Stream(context.Background(), req("x"), nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 500 || !strings.Contains(ae.Message, "script ran out") {
		t.Errorf("error = %v", err)
	}
}

func TestRespondHandler(t *testing.T) {
	s, p := newPair(t)
	s.Enqueue(llmtest.Reply{Content: "queued first"})
	s.Respond(func(r llmtest.Recorded) llmtest.Reply {
		msgs, _ := r.JSON["messages"].([]any)
		return llmtest.Reply{Content: fmt.Sprintf("saw %d messages", len(msgs))}
	})
	for _, want := range []string{"queued first", "saw 1 messages"} {
		resp, err := p.Stream(context.Background(), req("x"), nil)
		if err != nil || resp.Message.Content != want {
			t.Errorf("got %q, %v; want %q", resp.Message.Content, err, want)
		}
	}
}

func TestMalformedAndBrokenStreams(t *testing.T) {
	tests := []struct {
		name    string
		reply   llmtest.Reply
		wantErr string
	}{
		{"raw non-JSON chunk", llmtest.Reply{RawSSE: "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {oops\n\n"}, "not valid JSON"},
		{"raw cut stream", llmtest.Reply{RawSSE: "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"}, "stream ended before the response was complete"},
		{"error inside the stream", llmtest.Reply{Content: "partial", ErrorMessage: "engine crashed"}, "engine crashed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p := newPair(t)
			s.Enqueue(tt.reply)
			_, err := p.Stream(context.Background(), req("x"), nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
			if n := len(s.ChatRequests()); n != 1 {
				t.Errorf("%d requests; a failure after output must not be retried", n)
			}
		})
	}
}

func TestHangIsReleasedByCancel(t *testing.T) {
	s, p := newPair(t)
	s.Enqueue(llmtest.Reply{Content: "thinking...", Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := p.Stream(ctx, req("x"), func(d llm.Delta) {
		if d.Content != "" {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestHangIsReleasedByClose(t *testing.T) {
	s := llmtest.NewServer()
	s.Enqueue(llmtest.Reply{Hang: true})
	done := make(chan error, 1)
	go func() {
		res, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"stream":false}`))
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		done <- err
	}()
	for len(s.ChatRequests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close() // must not block on the hanging handler
	<-done
}

// Delay holds the answer back: with a delay far longer than the client is
// willing to wait, the call ends by the client's deadline, not an answer;
// with a short one, the answer arrives.
func TestDelayWaitsBeforeAnswering(t *testing.T) {
	s, p := newPair(t)
	s.Enqueue(llmtest.Reply{Content: "never", Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if resp, err := p.Stream(ctx, req("x"), nil); err == nil {
		t.Fatalf("answered despite the delay: %+v", resp)
	}
	s.Enqueue(llmtest.Reply{Content: "late", Delay: time.Millisecond})
	resp, err := p.Stream(context.Background(), req("x"), nil)
	if err != nil || resp.Message.Content != "late" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestHandleAddsWireFormat(t *testing.T) {
	s := llmtest.NewServer()
	defer s.Close()
	s.Handle("/custom", func(ctx context.Context, w http.ResponseWriter, ex llmtest.Exchange) {
		llmtest.WriteJSON(w, 200, map[string]any{"echo": ex.Reply.Content, "id": ex.ID, "model": ex.Model()})
	})
	s.Enqueue(llmtest.Reply{Content: "hi"})
	res, err := http.Post(s.RootURL()+"/v1/custom", "application/json", strings.NewReader(`{"model":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if got := strings.TrimSpace(string(b)); got != `{"echo":"hi","id":"fake-1","model":"x"}` {
		t.Errorf("body = %s", got)
	}
	res2, err := http.Post(s.RootURL()+"/v1/unknown", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res2.Body.Close()
	if res2.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path status %d", res2.StatusCode)
	}
}

func TestConcurrentRequests(t *testing.T) {
	s, p := newPair(t)
	const n = 8
	for i := range n {
		s.Enqueue(llmtest.Reply{Content: fmt.Sprint("reply ", i)})
	}
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for range n {
		wg.Go(func() {
			resp, err := p.Stream(context.Background(), req("x"), nil)
			if err != nil {
				t.Error(err)
				return
			}
			seen <- resp.Message.Content
		})
	}
	wg.Wait()
	close(seen)
	got := map[string]bool{}
	for c := range seen {
		got[c] = true
	}
	if len(got) != n || len(s.ChatRequests()) != n || s.Pending() != 0 {
		t.Errorf("distinct replies %d, requests %d, pending %d", len(got), len(s.ChatRequests()), s.Pending())
	}
}

func TestReplyChunks(t *testing.T) {
	tests := []struct {
		size int
		in   string
		want []string
	}{
		{0, "abcdefghi", []string{"abcd", "efgh", "i"}},
		{2, "äöü", []string{"äö", "ü"}},
		{-1, "whole", []string{"whole"}},
		{3, "", nil},
	}
	for _, tt := range tests {
		if got := (llmtest.Reply{ChunkSize: tt.size}).Chunks(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Chunks(%d, %q) = %q, want %q", tt.size, tt.in, got, tt.want)
		}
	}
}
