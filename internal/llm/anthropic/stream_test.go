package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"turnstone/internal/llm"
)

// rawServer answers each request with the next canned reply and records the
// request bodies.
type rawServer struct {
	mu      sync.Mutex
	replies []rawReply
	bodies  [][]byte
	paths   []string
	headers []http.Header
}

type rawReply struct {
	status int
	header map[string]string
	body   string
}

func newRawServer(t *testing.T, replies ...rawReply) (*rawServer, *httptest.Server) {
	rs := &rawServer{replies: replies}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		rs.bodies = append(rs.bodies, body)
		rs.paths = append(rs.paths, r.URL.Path)
		rs.headers = append(rs.headers, r.Header.Clone())
		if len(rs.replies) == 0 {
			rs.mu.Unlock()
			http.Error(w, `{"type":"error","error":{"type":"api_error","message":"no reply left"}}`, 500)
			return
		}
		rep := rs.replies[0]
		rs.replies = rs.replies[1:]
		rs.mu.Unlock()
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if rep.status == 0 {
			rep.status = 200
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(srv.Close)
	return rs, srv
}

// sse joins events into a stream body.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", v.Type, e)
	}
	return b.String()
}

const (
	msgStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}`
	msgStop  = `{"type":"message_stop"}`
)

func msgDelta(stop string, out int) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out)
}

func fastRetry() llm.RetryPolicy {
	return llm.RetryPolicy{Retries: 3, Base: time.Millisecond, MaxRetryAfter: time.Millisecond}
}

func collect() (*[]llm.Delta, func(llm.Delta)) {
	var ds []llm.Delta
	return &ds, func(d llm.Delta) { ds = append(ds, d) }
}

func TestStreamUsageCitationsAndMalformedInput(t *testing.T) {
	body := sse(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":null}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Go "}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://go.dev","cited_text":"Go"}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"rocks"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"ping"}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ls"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" -la}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"plan","input":{}}}`,
		`{"type":"content_block_stop","index":2}`,
		msgDelta("tool_use", 42), msgStop)
	_, srv := newRawServer(t, rawReply{body: body})
	p := New(Options{BaseURL: srv.URL, Retry: fastRetry()})
	ds, on := collect()
	resp, err := p.Stream(context.Background(), llm.Request{Model: "claude-sonnet-4-6"}, on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Go rocks" || len(*ds) != 2 {
		t.Errorf("content %q, deltas %+v", resp.Message.Content, *ds)
	}
	want := []llm.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{"command": "ls -la}`}, {ID: "toolu_2", Name: "plan", Arguments: `{}`}}
	if fmt.Sprint(resp.Message.ToolCalls) != fmt.Sprint(want) {
		t.Errorf("tool calls = %+v", resp.Message.ToolCalls)
	}
	if resp.Usage != (llm.Usage{PromptTokens: 115, CompletionTokens: 42, TotalTokens: 157}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if resp.FinishReason != llm.FinishToolCalls || resp.Message.Provider != "anthropic" {
		t.Errorf("finish %q provider %q", resp.FinishReason, resp.Message.Provider)
	}
	wantBlocks := `[{"citations":[{"type":"web_search_result_location","url":"https://go.dev","cited_text":"Go"}],"text":"Go rocks","type":"text"},` +
		`{"id":"toolu_1","input":{},"name":"bash","type":"tool_use"},{"id":"toolu_2","input":{},"name":"plan","type":"tool_use"}]`
	if string(resp.Message.ProviderBlocks) != wantBlocks {
		t.Errorf("blocks =\n%s\nwant\n%s", resp.Message.ProviderBlocks, wantBlocks)
	}
}

func TestStreamStopReasons(t *testing.T) {
	for stop, want := range map[string]llm.FinishReason{
		"end_turn": llm.FinishStop, "pause_turn": llm.FinishStop, "stop_sequence": llm.FinishStop,
		"max_tokens": llm.FinishLength, "refusal": llm.FinishContentFilter, "tool_use": llm.FinishToolCalls,
	} {
		_, srv := newRawServer(t, rawReply{body: sse(msgStart, msgDelta(stop, 1), msgStop)})
		resp, err := New(Options{BaseURL: srv.URL}).Stream(context.Background(), llm.Request{}, nil)
		if err != nil || resp.FinishReason != want {
			t.Errorf("%s: finish %q err %v, want %q", stop, resp.FinishReason, err, want)
		}
	}
}

func TestStreamRetriesBeforeFirstDelta(t *testing.T) {
	overloaded := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	ok := sse(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
		`{"type":"content_block_stop","index":0}`, msgDelta("end_turn", 3), msgStop)
	rs, srv := newRawServer(t,
		rawReply{status: 529, body: overloaded, header: map[string]string{"Retry-After": "0"}},
		rawReply{body: sse(msgStart, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
		rawReply{body: sse(msgStart)}, // cut before message_stop
		rawReply{body: ok})
	p := New(Options{BaseURL: srv.URL + "/v1/", APIKey: "k", Retry: fastRetry()})
	ds, on := collect()
	resp, err := p.Stream(context.Background(), llm.Request{Model: "m"}, on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "hi" || len(rs.bodies) != 4 {
		t.Errorf("content %q after %d requests", resp.Message.Content, len(rs.bodies))
	}
	var infos []string
	for _, d := range *ds {
		if d.Info != "" {
			infos = append(infos, d.Info[strings.Index(d.Info, ":"):])
		}
	}
	want := ": HTTP 529]|: HTTP 529]|: connection error]"
	if strings.Join(infos, "|") != want {
		t.Errorf("infos = %q", infos)
	}
	h := rs.headers[0]
	if rs.paths[0] != "/v1/messages" || h.Get("X-Api-Key") != "k" || h.Get("Anthropic-Version") != apiVersion {
		t.Errorf("path %s headers %v", rs.paths[0], h)
	}
}

func TestStreamNoRetryAfterFirstDelta(t *testing.T) {
	body := sse(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	rs, srv := newRawServer(t, rawReply{body: body}, rawReply{body: body})
	_, err := New(Options{BaseURL: srv.URL, Retry: fastRetry()}).Stream(context.Background(), llm.Request{}, nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 529 || ae.Message != "Overloaded" {
		t.Fatalf("err = %v", err)
	}
	if len(rs.bodies) != 1 {
		t.Errorf("retried after output reached the user: %d requests", len(rs.bodies))
	}
}

func TestAPIErrorMessage(t *testing.T) {
	_, srv := newRawServer(t, rawReply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`})
	_, err := New(Options{BaseURL: srv.URL, Retry: fastRetry()}).Complete(context.Background(), llm.Request{})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Message != "max_tokens: must be positive" || ae.Provider != "anthropic" {
		t.Fatalf("err = %#v", err)
	}
	if ae.Error() != "anthropic endpoint returned HTTP 400: max_tokens: must be positive" {
		t.Errorf("Error() = %q", ae.Error())
	}
}

func TestComplete(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","content":[` +
		`{"type":"thinking","thinking":"t","signature":"S"},{"type":"text","text":"Title here"},` +
		`{"type":"tool_use","id":"toolu_9","name":"math","input":{"code":"1+1"}}],` +
		`"stop_reason":"tool_use","usage":{"input_tokens":7,"output_tokens":3}}`
	rs, srv := newRawServer(t, rawReply{body: body})
	resp, err := New(Options{BaseURL: srv.URL}).Complete(context.Background(), llm.Request{Model: "claude-haiku-4-5", MaxTokens: 200, ReasoningEffort: "low"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Title here" || resp.Usage.TotalTokens != 10 || resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("resp = %+v", resp)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"code":"1+1"}` {
		t.Errorf("tool calls = %+v", resp.Message.ToolCalls)
	}
	var sent map[string]any
	_ = json.Unmarshal(rs.bodies[0], &sent)
	if _, ok := sent["stream"]; ok || sent["max_tokens"] != float64(200) || sent["thinking"] != nil {
		t.Errorf("request = %s", rs.bodies[0])
	}
}

func TestStreamCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		_, _ = io.WriteString(w, sse(msgStart))
		w.(http.Flusher).Flush()
		cancel()
		<-r.Context().Done()
	}))
	defer srv.Close()
	_, err := New(Options{BaseURL: srv.URL, Retry: fastRetry()}).Stream(ctx, llm.Request{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestReadEventsMalformed(t *testing.T) {
	a := newAssembler(nil)
	err := readEvents(strings.NewReader("data: {not json\n\n"), a.event)
	if err == nil || !strings.Contains(err.Error(), "decoding stream event") {
		t.Errorf("err = %v", err)
	}
	// Deltas for unknown indexes and unknown event types are ignored.
	a = newAssembler(nil)
	err = readEvents(strings.NewReader(sse(msgStart,
		`{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"future_event"}`, msgDelta("end_turn", 1), msgStop)), a.event)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := a.response(); err != nil || resp.Message.Content != "" {
		t.Errorf("resp %+v err %v", resp, err)
	}
}
