package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/llmtest"
)

// fake starts the scripted model server and a provider pointed at it.
func fake(t *testing.T) (*llmtest.Server, *Provider) {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	return s, New(Options{BaseURL: s.RootURL(), APIKey: "test-key", Retry: fastRetry()})
}

// body returns the JSON path (dot-separated keys and indexes) of recorded
// request i, re-encoded compactly.
func body(t *testing.T, s *llmtest.Server, i int, path string) string {
	t.Helper()
	reqs := s.ChatRequests()
	if i >= len(reqs) {
		t.Fatalf("only %d requests recorded, want #%d", len(reqs), i)
	}
	var v any = reqs[i].JSON
	for _, key := range strings.Split(path, ".") {
		if key == "" {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			v = x[key]
		case []any:
			var n int
			fmt.Sscan(key, &n)
			if n >= len(x) {
				t.Fatalf("request %d: %s: index %d out of %d", i, path, n, len(x))
			}
			v = x[n]
		default:
			t.Fatalf("request %d: %s: cannot index %T with %q", i, path, v, key)
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var testTools = []llm.ToolDef{
	{Name: "bash", Description: "Run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
	{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "web_search", Description: "Search the web", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
}

// turn streams one request and appends the answer to history.
func turn(t *testing.T, p *Provider, history *[]llm.Message, effort string) (llm.Response, []llm.Delta) {
	t.Helper()
	var ds []llm.Delta
	resp, err := p.Stream(context.Background(), llm.Request{
		Model: "claude-sonnet-4-6", System: "You are terse.", Messages: *history, Tools: testTools,
		Temperature: ptr(0.5), ReasoningEffort: effort,
	}, func(d llm.Delta) { ds = append(ds, d) })
	if err != nil {
		t.Fatal(err)
	}
	*history = append(*history, resp.Message)
	return resp, ds
}

func TestToolConversation(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(
		llmtest.Reply{Content: "Let me look.", ToolCalls: []llm.ToolCall{{ID: "toolu_a", Name: "bash", Arguments: `{"command":"ls"}`}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			{ID: "toolu_b", Name: "read_file", Arguments: `{"path":"a.go"}`},
			{ID: "toolu_c", Name: "read_file", Arguments: `{"path":"b.go"}`},
		}},
		llmtest.Reply{Content: "Both files are empty."},
	)
	history := []llm.Message{{Role: llm.RoleUser, Content: "what is here?"}}

	resp, ds := turn(t, p, &history, "none")
	if resp.FinishReason != llm.FinishToolCalls || resp.Message.Content != "Let me look." || len(ds) < 3 {
		t.Fatalf("turn 1: %+v (deltas %d)", resp, len(ds))
	}
	if got := fmt.Sprint(resp.Message.ToolCalls); got != `[{toolu_a bash {"command":"ls"}}]` {
		t.Errorf("turn 1 calls = %s", got)
	}
	history = append(history, llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_a", ToolName: "bash", Content: "a.go\nb.go\n"})

	resp, _ = turn(t, p, &history, "none")
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[1].ID != "toolu_c" || resp.Message.ToolCalls[1].Arguments != `{"path":"b.go"}` {
		t.Fatalf("turn 2 parallel calls = %+v", resp.Message.ToolCalls)
	}
	history = append(history,
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_b", Content: ""},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_c", Content: "", IsError: true},
		llm.Message{Role: llm.RoleUser, Content: "be quick"})

	resp, _ = turn(t, p, &history, "none")
	if resp.Message.Content != "Both files are empty." || resp.FinishReason != llm.FinishStop {
		t.Fatalf("turn 3: %+v", resp)
	}

	// Wire shapes of the last request.
	if got := body(t, s, 2, "system"); got != `"You are terse."` {
		t.Errorf("system = %s", got)
	}
	if got := body(t, s, 2, "temperature"); got != `0.5` {
		t.Errorf("temperature = %s", got)
	}
	if got := body(t, s, 2, "stream"); got != `true` {
		t.Errorf("stream = %s", got)
	}
	if got := body(t, s, 2, "messages.1"); got != `{"content":[{"text":"Let me look.","type":"text"},{"id":"toolu_a","input":{"command":"ls"},"name":"bash","type":"tool_use"}],"role":"assistant"}` {
		t.Errorf("assistant turn 1 replay = %s", got)
	}
	want := `{"content":[{"tool_use_id":"toolu_b","type":"tool_result"},{"is_error":true,"tool_use_id":"toolu_c","type":"tool_result"},{"text":"be quick","type":"text"}],"role":"user"}`
	if got := body(t, s, 2, "messages.4"); got != want {
		t.Errorf("tool results message =\n%s\nwant\n%s", got, want)
	}
	if got := body(t, s, 2, "messages"); strings.Count(got, `"role"`) != 5 {
		t.Errorf("roles not merged: %s", got)
	}
	if got := body(t, s, 0, "tools.2"); got != `{"name":"web_search","type":"web_search_20250305"}` {
		t.Errorf("web_search not swapped for the server tool: %s", got)
	}
}

func TestThinkingSignatureRoundTrip(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(
		llmtest.Reply{Reasoning: "The user wants a listing.", ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{"command":"ls"}`}}},
		llmtest.Reply{Content: "done"},
	)
	history := []llm.Message{{Role: llm.RoleUser, Content: "list"}}
	resp, ds := turn(t, p, &history, "medium")
	var reasoning string
	for _, d := range ds {
		reasoning += d.Reasoning
	}
	if reasoning != "The user wants a listing." || resp.Message.Content != "" {
		t.Errorf("reasoning %q content %q", reasoning, resp.Message.Content)
	}
	if got := body(t, s, 0, "thinking"); got != `{"budget_tokens":4096,"type":"enabled"}` {
		t.Errorf("thinking = %s", got)
	}
	if got := body(t, s, 0, "temperature"); got != `null` {
		t.Errorf("temperature sent with thinking: %s", got)
	}
	history = append(history, llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: "x"})
	turn(t, p, &history, "medium")
	want := fmt.Sprintf(`{"signature":%q,"thinking":"The user wants a listing.","type":"thinking"}`, llmtest.ThinkingSignature("fake-1"))
	if got := body(t, s, 1, "messages.1.content.0"); got != want {
		t.Errorf("thinking block replay = %s, want %s", got, want)
	}
	if got := body(t, s, 1, "thinking.type"); got != `"enabled"` {
		t.Errorf("thinking dropped on the tool-loop continuation: %s", got)
	}
}

func TestMalformedToolInput(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{"command": "echo "hi"}`}}},
		llmtest.Reply{Content: "ok"},
	)
	history := []llm.Message{{Role: llm.RoleUser, Content: "go"}}
	resp, _ := turn(t, p, &history, "")
	if got := resp.Message.ToolCalls[0].Arguments; got != `{"command": "echo "hi"}` {
		t.Errorf("raw arguments not passed through: %q", got)
	}
	history = append(history, llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: "JSON parse error", IsError: true})
	turn(t, p, &history, "")
	if got := body(t, s, 1, "messages.1.content.0.input"); got != `{}` {
		t.Errorf("replayed input = %s, want {}", got)
	}
}

func TestImageToolResult(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(llmtest.Reply{Content: "A red square."})
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "what is in a.png?"},
		{Role: llm.RoleAssistant, Provider: "openai", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.png"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Parts: []llm.Part{
			{Type: llm.PartText, Text: "Image: a.png (4 bytes)"},
			{Type: llm.PartImage, MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		}},
	}
	turn(t, p, &history, "")
	want := `{"content":[{"text":"Image: a.png (4 bytes)","type":"text"},{"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"}],"tool_use_id":"call_1","type":"tool_result"}`
	if got := body(t, s, 0, "messages.2.content.0"); got != want {
		t.Errorf("image tool result =\n%s\nwant\n%s", got, want)
	}
}

func TestOverloadThenSuccess(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(llmtest.Reply{Status: 529, RetryAfter: "0"}, llmtest.Reply{Content: "fine"})
	history := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	resp, ds := turn(t, p, &history, "")
	if resp.Message.Content != "fine" || len(s.ChatRequests()) != 2 {
		t.Fatalf("content %q after %d requests", resp.Message.Content, len(s.ChatRequests()))
	}
	if !strings.HasPrefix(ds[0].Info, "[Retrying in ") || !strings.HasSuffix(ds[0].Info, ": HTTP 529]") {
		t.Errorf("first delta = %+v", ds[0])
	}

	// Retries run out: the endpoint's message is reported.
	s.Enqueue(llmtest.Reply{Status: 529, ErrorMessage: "Overloaded"}, llmtest.Reply{Status: 529, ErrorMessage: "Overloaded"},
		llmtest.Reply{Status: 529, ErrorMessage: "Overloaded"}, llmtest.Reply{Status: 529, ErrorMessage: "Overloaded"})
	_, err := p.Stream(context.Background(), llm.Request{Model: "m", Messages: history}, nil)
	if err == nil || err.Error() != "anthropic endpoint returned HTTP 529: Overloaded" {
		t.Errorf("err = %v", err)
	}
}

func TestMaxTokensPartialToolCall(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(
		llmtest.Reply{Content: "Writing.", ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "write_file", Arguments: `{"path":"a.txt","content":"lo`}}, Finish: llm.FinishLength},
		llmtest.Reply{Content: "ok"},
	)
	history := []llm.Message{{Role: llm.RoleUser, Content: "write"}}
	resp, _ := turn(t, p, &history, "")
	if resp.FinishReason != llm.FinishLength || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"path":"a.txt","content":"lo` {
		t.Fatalf("resp = %+v", resp)
	}
	// The engine discards partial calls of a truncated answer; the replay
	// must not send a tool_use without its result.
	history[len(history)-1].ToolCalls = nil
	history = append(history, llm.Message{Role: llm.RoleUser, Content: "continue"})
	turn(t, p, &history, "")
	if got := body(t, s, 1, "messages.1"); got != `{"content":[{"text":"Writing.","type":"text"}],"role":"assistant"}` {
		t.Errorf("truncated turn replay = %s", got)
	}
}

func TestNativeWebSearch(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(llmtest.Reply{RawSSE: sse(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"go 1.26"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" release\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"Go 1.26","url":"https://go.dev/doc/go1.26","encrypted_content":"EqgfCioIARgBIiQ3","page_age":null},{"type":"web_search_result","title":"Blog","url":"https://go.dev/blog","encrypted_content":"Eq0=","page_age":"2 days"}]}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"server_tool_use","id":"srvtoolu_2","name":"web_search","input":{}}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_2","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}}`,
		`{"type":"content_block_stop","index":3}`,
		`{"type":"content_block_start","index":4,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"Go 1.26 is out."}}`,
		`{"type":"content_block_stop","index":4}`,
		msgDelta("end_turn", 50), msgStop)},
		llmtest.Reply{Content: "ok"})
	history := []llm.Message{{Role: llm.RoleUser, Content: "news?"}}
	resp, ds := turn(t, p, &history, "")
	var infos []string
	for _, d := range ds {
		if d.Info != "" {
			infos = append(infos, d.Info)
		}
	}
	want := "[Searching: go 1.26 release]|[Found 2 result(s)]|[Searching...]|[Web search error: max_uses_exceeded]"
	if strings.Join(infos, "|") != want {
		t.Errorf("info lines = %q", infos)
	}
	if resp.Message.Content != "Go 1.26 is out." || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("message = %+v", resp.Message)
	}
	tools := body(t, s, 0, "tools")
	if strings.Contains(tools, `"name":"web_search","description"`) || !strings.Contains(tools, `{"name":"web_search","type":"web_search_20250305"}`) {
		t.Errorf("tools = %s", tools)
	}

	history = append(history, llm.Message{Role: llm.RoleUser, Content: "thanks"})
	turn(t, p, &history, "")
	replay := body(t, s, 1, "messages.1.content")
	for _, frag := range []string{`"encrypted_content":"EqgfCioIARgBIiQ3"`, `"input":{"query":"go 1.26 release"}`, `"error_code":"max_uses_exceeded"`, `"page_age":"2 days"`} {
		if !strings.Contains(replay, frag) {
			t.Errorf("replay lacks %s:\n%s", frag, replay)
		}
	}
	if n := strings.Count(replay, `"type":"server_tool_use"`); n != 2 {
		t.Errorf("replayed %d server_tool_use blocks, want 2", n)
	}

	// Models without native search keep the function tool.
	s.Enqueue(llmtest.Reply{Content: "x"})
	if _, err := p.Stream(context.Background(), llm.Request{Model: "qwen3", Messages: history, Tools: testTools}, nil); err != nil {
		t.Fatal(err)
	}
	if got := body(t, s, 2, "tools.2.name"); got != `"web_search"` || strings.Contains(body(t, s, 2, "tools"), "web_search_2025") {
		t.Errorf("non-native tools = %s", body(t, s, 2, "tools"))
	}
}

func TestNativeToolSearch(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(llmtest.Reply{RawSSE: sse(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_9","name":"tool_search_tool_bm25","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"github issue\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_9","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"mcp__gh__create_issue"}]}}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_7","name":"mcp__gh__create_issue","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"title\":\"bug\"}"}}`,
		`{"type":"content_block_stop","index":2}`,
		msgDelta("tool_use", 20), msgStop)},
		llmtest.Reply{Content: "Filed."})
	defs := append(append([]llm.ToolDef(nil), testTools...),
		llm.ToolDef{Name: "mcp__gh__create_issue", Description: "Create an issue", Parameters: json.RawMessage(`{"type":"object"}`), DeferLoading: true},
		llm.ToolDef{Name: "mcp__gh__list_issues", Description: "List issues", Parameters: json.RawMessage(`{"type":"object"}`), DeferLoading: true})
	req := llm.Request{Model: "claude-opus-4-6", Messages: []llm.Message{{Role: llm.RoleUser, Content: "file a bug"}}, Tools: defs}
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(resp.Message.ToolCalls); got != `[{toolu_7 mcp__gh__create_issue {"title":"bug"}}]` {
		t.Errorf("calls = %s", got)
	}
	if got := body(t, s, 0, "tools.2"); got != `{"defer_loading":true,"description":"Create an issue","input_schema":{"type":"object"},"name":"mcp__gh__create_issue"}` {
		t.Errorf("deferred tool = %s", got)
	}
	if got := body(t, s, 0, "tools.0.defer_loading"); got != `null` {
		t.Errorf("always-on tool deferred: %s", got)
	}
	if got := body(t, s, 0, "tools.5"); got != `{"name":"tool_search_tool_bm25","type":"tool_search_tool_bm25_20251119"}` {
		t.Errorf("last tool = %s, want the tool search server tool", got)
	}

	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_7", Content: "created #1"})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	replay := body(t, s, 1, "messages.1.content")
	if !strings.Contains(replay, `"tool_references":[{"tool_name":"mcp__gh__create_issue","type":"tool_reference"}]`) ||
		!strings.Contains(replay, `"name":"tool_search_tool_bm25"`) {
		t.Errorf("tool search blocks not replayed: %s", replay)
	}
}

func TestCompleteThroughFakeServer(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(llmtest.Reply{Content: "Fix login bug", Usage: llm.Usage{PromptTokens: 30, CompletionTokens: 4}})
	resp, err := p.Complete(context.Background(), llm.Request{Model: "claude-haiku-4-5", MaxTokens: 200, Temperature: ptr(0.3), ReasoningEffort: "low",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "title?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Fix login bug" || resp.Usage != (llm.Usage{PromptTokens: 30, CompletionTokens: 4, TotalTokens: 34}) {
		t.Errorf("resp = %+v", resp)
	}
	if got := body(t, s, 0, "temperature"); got != `0.3` {
		t.Errorf("temperature = %s", got)
	}
	if rec := s.ChatRequests()[0]; rec.Path != "/v1/messages" || rec.Header.Get("X-Api-Key") != "test-key" || rec.Stream() {
		t.Errorf("request %s %v stream=%v", rec.Path, rec.Header, rec.Stream())
	}
}

func TestCompleteStreamsLongCalls(t *testing.T) {
	s, p := fake(t)
	s.Enqueue(llmtest.Reply{Reasoning: "r", Content: "long answer"})
	resp, err := p.Complete(context.Background(), llm.Request{Model: "claude-sonnet-4-6", MaxTokens: 32768,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "extract"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "long answer" || !s.ChatRequests()[0].Stream() {
		t.Errorf("content %q, streamed %v", resp.Message.Content, s.ChatRequests()[0].Stream())
	}
}
