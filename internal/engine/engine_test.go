package engine

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// scripted is an llm.Provider that answers from a list and records requests.
type scripted struct {
	mu       sync.Mutex
	replies  []llm.Response
	requests []llm.Request
	hang     bool
}

func (p *scripted) Name() string { return "scripted" }

func (p *scripted) Stream(ctx context.Context, req llm.Request, on func(llm.Delta)) (llm.Response, error) {
	p.mu.Lock()
	p.requests = append(p.requests, req)
	if p.hang {
		p.mu.Unlock()
		<-ctx.Done()
		return llm.Response{}, ctx.Err()
	}
	if len(p.replies) == 0 {
		p.mu.Unlock()
		return llm.Response{}, &llm.APIError{Provider: "scripted", Status: 500, Message: "script ran out"}
	}
	r := p.replies[0]
	p.replies = p.replies[1:]
	p.mu.Unlock()
	if r.Message.Content != "" {
		on(llm.Delta{Content: r.Message.Content})
	}
	return r, nil
}

func (p *scripted) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return p.Stream(ctx, req, func(llm.Delta) {})
}

func answer(text string) llm.Response {
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: text}, FinishReason: llm.FinishStop}
}

func calls(cs ...llm.ToolCall) llm.Response {
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: cs}, FinishReason: llm.FinishToolCalls}
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// echoTool returns its "text" argument; it needs approval when approve is set.
type echoTool struct {
	name    string
	approve bool
	run     func(ctx context.Context, args tool.Args, emit tool.Emit) tool.Result
}

func (e echoTool) Spec() tool.Spec {
	return tool.Spec{Name: e.name, Description: "echo", Parameters: []byte(`{"type":"object"}`), PrimaryKey: "text"}
}

func (e echoTool) Prepare(_ context.Context, c tool.Call) *tool.Prepared {
	if c.Args.String("fail") != "" {
		return tool.Fail("✗ "+e.name+": bad", "Error: "+c.Args.String("fail"))
	}
	return &tool.Prepared{
		Header:        "⚙ " + e.name + ": " + c.Args.String("text"),
		NeedsApproval: e.approve,
		Run: func(ctx context.Context, emit tool.Emit) tool.Result {
			if e.run != nil {
				return e.run(ctx, c.Args, emit)
			}
			return tool.Result{Output: "echo: " + c.Args.String("text")}
		},
	}
}

// recUI records events and answers approvals from a queue.
type recUI struct {
	mu        sync.Mutex
	events    []Event
	decisions []Decision
	asked     [][]ApprovalItem
}

func (u *recUI) Emit(e Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.events = append(u.events, e)
}

func (u *recUI) ApproveTools(_ context.Context, items []ApprovalItem) Decision {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked = append(u.asked, items)
	if len(u.decisions) == 0 {
		return Decision{}
	}
	d := u.decisions[0]
	u.decisions = u.decisions[1:]
	return d
}

func (u *recUI) results() []ToolResultEvent {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []ToolResultEvent
	for _, e := range u.events {
		if r, ok := e.(ToolResultEvent); ok {
			out = append(out, r)
		}
	}
	return out
}

func newSession(t *testing.T, p *scripted, ui *recUI, tools ...tool.Tool) *Session {
	t.Helper()
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Provider: p, Model: "m", Catalog: reg, UI: ui})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func toolMessages(s *Session) []llm.Message {
	var out []llm.Message
	for _, m := range s.Messages() {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func TestPlainAnswer(t *testing.T) {
	p := &scripted{replies: []llm.Response{answer("hello")}}
	ui := &recUI{}
	s := newSession(t, p, ui)
	turn, err := s.Send(context.Background(), "hi")
	if err != nil || turn.Text != "hello" {
		t.Fatalf("turn = %+v, %v", turn, err)
	}
	var states []State
	for _, e := range ui.events {
		if st, ok := e.(StateEvent); ok {
			states = append(states, st.State)
		}
	}
	if fmt.Sprint(states) != "[thinking idle]" {
		t.Fatalf("states = %v", states)
	}
	if got := len(s.Messages()); got != 2 {
		t.Fatalf("history has %d messages, want 2", got)
	}
	if !strings.Contains(p.requests[0].System, "TOOL PATTERNS") {
		t.Fatalf("system prompt lacks the tool cheat sheet")
	}
}

func TestArgumentParsingPaths(t *testing.T) {
	cases := []struct {
		name, args, want string
		isErr            bool
	}{
		{"object", `{"text":"a"}`, "echo: a", false},
		{"bare string", `ls -la`, "echo: ls -la", false},
		{"json string", `"ls -la"`, "echo: ls -la", false},
		{"rescued key", `{"query": "x\"y", broken`, "echo: ", false},
		{"array", `[1,2]`, "arguments must be a JSON object", true},
		{"number", `42`, "arguments must be a JSON object", true},
		{"broken object", `{"text": `, "invalid arguments for echo", true},
		{"prepare error", `{"fail":"nope"}`, "Error: nope", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &scripted{replies: []llm.Response{calls(call("c1", "echo", c.args)), answer("done")}}
			ui := &recUI{}
			s := newSession(t, p, ui, echoTool{name: "echo"})
			if _, err := s.Send(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			res := ui.results()
			if len(res) != 1 || !strings.Contains(res[0].Output, c.want) || res[0].IsError != c.isErr {
				t.Fatalf("results = %+v, want %q isErr=%v", res, c.want, c.isErr)
			}
			tm := toolMessages(s)
			if len(tm) != 1 || tm[0].Content != res[0].Output || tm[0].ToolCallID != "c1" {
				t.Fatalf("tool message %+v does not match event %+v", tm, res[0])
			}
		})
	}
}

// A provider that leaves call ids empty gets unique ones, also with a
// workspace id shorter than the usual 32 hex.
func TestMissingCallIDsAreFilled(t *testing.T) {
	p := &scripted{replies: []llm.Response{calls(call("", "echo", `{"text":"a"}`), call("", "echo", `{"text":"b"}`)), answer("ok")}}
	reg, _ := tool.NewRegistry(echoTool{name: "echo"})
	s, err := New(Options{Provider: p, Catalog: reg, UI: &recUI{}, WorkspaceID: "ws"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	tm := toolMessages(s)
	if tm[0].ToolCallID == "" || tm[0].ToolCallID == tm[1].ToolCallID {
		t.Fatalf("ids %q %q", tm[0].ToolCallID, tm[1].ToolCallID)
	}
}

func TestUnknownToolIsErrorResult(t *testing.T) {
	p := &scripted{replies: []llm.Response{calls(call("c1", "nope", `{}`)), answer("ok")}}
	ui := &recUI{}
	s := newSession(t, p, ui, echoTool{name: "echo"})
	if _, err := s.Send(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	res := ui.results()
	if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Output, `unknown tool "nope"`) {
		t.Fatalf("results = %+v", res)
	}
}

func TestApprovalFlow(t *testing.T) {
	cases := []struct {
		name     string
		decision Decision
		want     string
		isErr    bool
		feedback string
	}{
		{"approve", Decision{Approved: true}, "echo: x", false, ""},
		{"approve with feedback", Decision{Approved: true, Feedback: "use full path"}, "echo: x", false, "use full path"},
		{"deny", Decision{}, "Denied by user", true, ""},
		{"deny with feedback", Decision{Feedback: "wrong file"}, "Denied by user: wrong file", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &scripted{replies: []llm.Response{calls(call("c1", "echo", `{"text":"x"}`), call("c2", "free", `{"text":"y"}`)), answer("ok")}}
			ui := &recUI{decisions: []Decision{c.decision}}
			s := newSession(t, p, ui, echoTool{name: "echo", approve: true}, echoTool{name: "free"})
			if _, err := s.Send(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			if len(ui.asked) != 1 || len(ui.asked[0]) != 1 || ui.asked[0][0].Name != "echo" {
				t.Fatalf("asked = %+v", ui.asked)
			}
			tm := toolMessages(s)
			if tm[0].Content != c.want || tm[0].IsError != c.isErr {
				t.Fatalf("echo result = %q (err %v), want %q", tm[0].Content, tm[0].IsError, c.want)
			}
			if tm[1].Content != "echo: y" {
				t.Fatalf("auto-approved call did not run: %q", tm[1].Content)
			}
			msgs := s.Messages()
			last := msgs[len(msgs)-2] // before the final answer
			if c.feedback != "" && (last.Role != llm.RoleUser || last.Content != c.feedback) {
				t.Fatalf("feedback message missing; history tail = %+v", last)
			}
			if c.feedback == "" && last.Role == llm.RoleUser {
				t.Fatalf("unexpected user message %+v", last)
			}
		})
	}
}

func TestAlwaysAndSkipPermissions(t *testing.T) {
	p := &scripted{replies: []llm.Response{
		calls(call("c1", "echo", `{"text":"1"}`)), answer("a"),
		calls(call("c2", "echo", `{"text":"2"}`)), answer("b"),
	}}
	ui := &recUI{decisions: []Decision{{Approved: true, Always: true}}}
	s := newSession(t, p, ui, echoTool{name: "echo", approve: true})
	for _, q := range []string{"one", "two"} {
		if _, err := s.Send(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	if len(ui.asked) != 1 {
		t.Fatalf("asked %d times, want once (always)", len(ui.asked))
	}
	if tm := toolMessages(s); tm[1].Content != "echo: 2" {
		t.Fatalf("second call: %q", tm[1].Content)
	}

	p2 := &scripted{replies: []llm.Response{calls(call("c1", "echo", `{"text":"1"}`)), answer("a")}}
	ui2 := &recUI{}
	reg, _ := tool.NewRegistry(echoTool{name: "echo", approve: true})
	s2, _ := New(Options{Provider: p2, Catalog: reg, UI: ui2, SkipPermissions: true})
	if _, err := s2.Send(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if len(ui2.asked) != 0 {
		t.Fatalf("--skip-permissions still asked")
	}
}

func TestParallelPoolKeepsOrder(t *testing.T) {
	var running, peak atomic.Int32
	slow := echoTool{name: "slow", run: func(ctx context.Context, a tool.Args, emit tool.Emit) tool.Result {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		emit("working " + a.String("text"))
		time.Sleep(30 * time.Millisecond)
		running.Add(-1)
		return tool.Result{Output: "done " + a.String("text")}
	}}
	var cs []llm.ToolCall
	for i := range 6 {
		cs = append(cs, call(fmt.Sprint("c", i), "slow", fmt.Sprintf(`{"text":"%d"}`, i)))
	}
	p := &scripted{replies: []llm.Response{calls(cs...), answer("ok")}}
	ui := &recUI{}
	s := newSession(t, p, ui, slow)
	if _, err := s.Send(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	tm := toolMessages(s)
	for i, m := range tm {
		if m.Content != fmt.Sprint("done ", i) || m.ToolCallID != fmt.Sprint("c", i) {
			t.Fatalf("result %d = %+v", i, m)
		}
	}
	if peak.Load() != Workers {
		t.Fatalf("peak concurrency %d, want %d", peak.Load(), Workers)
	}
	chunks := 0
	for _, e := range ui.events {
		if _, ok := e.(ToolOutputChunkEvent); ok {
			chunks++
		}
	}
	if chunks != 6 {
		t.Fatalf("got %d output chunks, want 6", chunks)
	}
}

func TestTruncationAndPanic(t *testing.T) {
	big := echoTool{name: "big", run: func(context.Context, tool.Args, tool.Emit) tool.Result {
		return tool.Result{Output: strings.Repeat("a", 50) + strings.Repeat("b", 50)}
	}}
	boom := echoTool{name: "boom", run: func(context.Context, tool.Args, tool.Emit) tool.Result { panic("kaput") }}
	p := &scripted{replies: []llm.Response{calls(call("c1", "big", `{}`), call("c2", "boom", `{}`)), answer("ok")}}
	ui := &recUI{}
	reg, _ := tool.NewRegistry(big, boom)
	s, _ := New(Options{Provider: p, Catalog: reg, UI: ui, ToolTruncation: 20})
	if _, err := s.Send(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	tm := toolMessages(s)
	if !strings.HasPrefix(tm[0].Content, "aaaaaaaaaa\n\n... [80 chars truncated") || !strings.HasSuffix(tm[0].Content, "bbbbbbbbbb") {
		t.Fatalf("truncated = %q", tm[0].Content)
	}
	if !tm[1].IsError || !strings.HasPrefix(tm[1].Content, "Error: too") {
		t.Fatalf("panic result = %+v", tm[1])
	}
	p.replies = []llm.Response{calls(call("c3", "boom", `{}`)), answer("ok")}
	s.opts.ToolTruncation = 0
	s.SetModel("m")
	if _, err := s.Send(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	if tm := toolMessages(s); !strings.Contains(tm[2].Content, "crashed: kaput") {
		t.Fatalf("panic result = %+v", tm[2])
	}
}

func TestRedaction(t *testing.T) {
	leak := echoTool{name: "leak", run: func(_ context.Context, _ tool.Args, emit tool.Emit) tool.Result {
		emit("chunk sk-secret-123")
		return tool.Result{Output: "key=sk-secret-123"}
	}}
	p := &scripted{replies: []llm.Response{calls(call("c1", "leak", `{}`)), answer("ok")}}
	ui := &recUI{}
	reg, _ := tool.NewRegistry(leak)
	s, _ := New(Options{Provider: p, Catalog: reg, UI: ui,
		Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret-123", "[redacted]") }})
	if _, err := s.Send(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if tm := toolMessages(s); tm[0].Content != "key=[redacted]" {
		t.Fatalf("model saw %q", tm[0].Content)
	}
	for _, e := range ui.events {
		if c, ok := e.(ToolOutputChunkEvent); ok && strings.Contains(c.Chunk, "sk-secret") {
			t.Fatalf("chunk leaked: %q", c.Chunk)
		}
	}
}

func TestLengthDropsPartialToolCalls(t *testing.T) {
	r := calls(call("c1", "echo", `{"text":`))
	r.FinishReason = llm.FinishLength
	r.Message.Content = "partial"
	p := &scripted{replies: []llm.Response{r}}
	ui := &recUI{}
	s := newSession(t, p, ui, echoTool{name: "echo"})
	turn, err := s.Send(context.Background(), "go")
	if err != nil || turn.Text != "partial" {
		t.Fatalf("turn = %+v, %v", turn, err)
	}
	if len(ui.results()) != 0 {
		t.Fatal("partial tool call was executed")
	}
	var warned bool
	for _, e := range ui.events {
		if ev, ok := e.(ErrorEvent); ok && strings.Contains(ev.Message, "Discarding partial tool calls") {
			warned = true
		}
	}
	if !warned {
		t.Fatal("no discard warning")
	}
}

func TestInterruptDuringToolKeepsHistoryValid(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	wait := echoTool{name: "wait", run: func(ctx context.Context, _ tool.Args, _ tool.Emit) tool.Result {
		cancel()
		<-ctx.Done()
		return tool.ErrorResult("interrupted")
	}}
	p := &scripted{replies: []llm.Response{calls(call("c1", "wait", `{}`), call("c2", "wait", `{}`)), answer("continued")}}
	ui := &recUI{}
	s := newSession(t, p, ui, wait)
	_, err := s.Send(ctx, "go")
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	msgs := s.Messages()
	if len(msgs) != 4 || msgs[1].Role != llm.RoleAssistant || msgs[2].Role != llm.RoleTool || msgs[3].Role != llm.RoleTool {
		t.Fatalf("history = %+v", msgs)
	}
	turn, err := s.Send(context.Background(), "go on")
	if err != nil || turn.Text != "continued" {
		t.Fatalf("after interrupt: %+v %v", turn, err)
	}
}

func TestInterruptDuringStream(t *testing.T) {
	p := &scripted{hang: true}
	ui := &recUI{}
	s := newSession(t, p, ui)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Send(ctx, "go"); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	if msgs := s.Messages(); len(msgs) != 1 || msgs[0].Role != llm.RoleUser {
		t.Fatalf("history = %+v", msgs)
	}
}

func TestProviderErrorKeepsSessionUsable(t *testing.T) {
	p := &scripted{}
	ui := &recUI{}
	s := newSession(t, p, ui)
	_, err := s.Send(context.Background(), "go")
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 500 {
		t.Fatalf("err = %v", err)
	}
	p.replies = []llm.Response{answer("back")}
	if turn, err := s.Send(context.Background(), "again"); err != nil || turn.Text != "back" {
		t.Fatalf("%+v %v", turn, err)
	}
}

// The engine must stay UI-agnostic (DESIGN.md): no frontend or styling
// package may appear among its dependencies.
func TestEngineDoesNotImportFrontends(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "internal/ui") || strings.Contains(dep, "lipgloss") || strings.Contains(dep, "liner") || strings.Contains(dep, "glamour") {
			t.Fatalf("engine depends on %s", dep)
		}
	}
}

func BenchmarkTurnOverhead(b *testing.B) {
	reg, _ := tool.NewRegistry(echoTool{name: "echo"})
	p := &scripted{}
	s, _ := New(Options{Provider: p, Catalog: reg, UI: NullUI{}})
	b.ReportAllocs()
	for b.Loop() {
		p.replies = append(p.replies, answer("hi"))
		if _, err := s.Send(context.Background(), "hello"); err != nil {
			b.Fatal(err)
		}
		s.Clear()
	}
}
