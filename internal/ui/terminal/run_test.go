package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"

	"turnstone/internal/engine"
	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// fakeSession plays a script per Send through the UI, as the engine would.
type fakeSession struct {
	ui        *UI
	model     string
	sent      []string
	cleared   int
	debug     bool
	decisions []engine.Decision
	turn      func(ctx context.Context, s *fakeSession, text string) (engine.Turn, error)
}

func (f *fakeSession) Send(ctx context.Context, text string) (engine.Turn, error) {
	f.sent = append(f.sent, text)
	if f.turn == nil {
		f.ui.Emit(engine.StateEvent{State: engine.StateThinking})
		f.ui.Emit(engine.ContentEvent{Text: "ok"})
		f.ui.Emit(engine.StateEvent{State: engine.StateIdle})
		return engine.Turn{Text: "ok"}, nil
	}
	return f.turn(ctx, f, text)
}
func (f *fakeSession) Clear()            { f.cleared++ }
func (f *fakeSession) Model() string     { return f.model }
func (f *fakeSession) SetModel(m string) { f.model = m }
func (f *fakeSession) SetDebug(on bool)  { f.debug = on }

// toolTurn streams an answer, asks to run bash, and finishes.
func toolTurn(ctx context.Context, f *fakeSession, _ string) (engine.Turn, error) {
	u := f.ui
	u.Emit(engine.StateEvent{State: engine.StateThinking})
	u.Emit(engine.ReasoningEvent{Text: "let me look"})
	u.Emit(engine.ContentEvent{Text: "Hi "})
	u.Emit(engine.ContentEvent{Text: "there"})
	u.Emit(engine.UsageEvent{Usage: llm.Usage{TotalTokens: 900}, ContextWindow: 10000})
	u.Emit(engine.StateEvent{State: engine.StateRunning})
	u.Emit(engine.ToolCallEvent{CallID: "c1", Name: "bash", Header: "⚙ bash: ls", NeedsApproval: true})
	u.Emit(engine.ToolCallEvent{CallID: "c2", Name: "edit_file", Header: "⚙ edit_file: a.go", NeedsApproval: true,
		Preview: tool.Preview{{Style: tool.StyleRed, Text: "    - old"}, {Style: tool.StyleGreen, Text: "    + new"}}})
	u.Emit(engine.StateEvent{State: engine.StateAttention})
	d := u.ApproveTools(ctx, []engine.ApprovalItem{{CallID: "c1", Name: "bash", Label: "bash"}, {CallID: "c2", Name: "edit_file", Label: "edit_file"}})
	f.decisions = append(f.decisions, d)
	u.Emit(engine.StateEvent{State: engine.StateRunning})
	u.Emit(engine.ToolOutputChunkEvent{CallID: "c1", Chunk: "a.go"})
	u.Emit(engine.ToolResultEvent{CallID: "c1", Name: "bash", Output: "a.go\nb.go\n", Summary: "2 lines"})
	u.Emit(engine.ToolResultEvent{CallID: "c2", Name: "edit_file", Output: "Error: old text not found in a.go\nmore", IsError: true})
	u.Emit(engine.StateEvent{State: engine.StateThinking})
	u.Emit(engine.ContentEvent{Text: "Done."})
	u.Emit(engine.UsageEvent{Usage: llm.Usage{TotalTokens: 1234}, ContextWindow: 10000})
	u.Emit(engine.StateEvent{State: engine.StateIdle})
	return engine.Turn{Text: "Done."}, nil
}

func newTestUI(input string, color bool, extra ...func(*Options)) (*UI, *strings.Builder, *fakeSession) {
	out := &strings.Builder{}
	opts := Options{In: strings.NewReader(input), Out: out, Err: io.Discard, Color: color, Model: "org/model-x", ContextWindow: 8192}
	for _, f := range extra {
		f(&opts)
	}
	u := New(opts)
	return u, out, &fakeSession{ui: u, model: "org/model-x"}
}

func TestRunTranscript(t *testing.T) {
	u, out, sess := newTestUI("hello\ny please\n/exit\nnot reached\n", false)
	sess.turn = toolTurn
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"Chat with org/model-x",
		"/help for commands, Ctrl-C interrupts, Ctrl-D exits",
		"[model-x] > hello",
		"let me look",
		"Hi there",
		"  ⚙ bash: ls",
		"  ⚙ edit_file: a.go",
		"    - old",
		"    + new",
		"    Allow 2 tools (bash, edit_file)? [y/n/a(lways), optional message] y please",
		"  → 2 lines",
		"  → Error: old text not found in a.go",
		"Done.",
		"  [1,234 / 10,000 tokens (12%)]",
		"[model-x] > /exit",
		"",
	}, "\n")
	if got := out.String(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if want := []engine.Decision{{Approved: true, Feedback: "please"}}; fmt.Sprint(sess.decisions) != fmt.Sprint(want) {
		t.Errorf("decisions %+v, want %+v", sess.decisions, want)
	}
	if len(sess.sent) != 1 || sess.sent[0] != "hello" {
		t.Errorf("sent %q", sess.sent)
	}
}

func TestApprovalAnswers(t *testing.T) {
	tests := []struct {
		answer string
		want   engine.Decision
		shown  string
	}{
		{"", engine.Decision{}, ""},
		{"a", engine.Decision{Approved: true, Always: true}, "Allowing bash, edit_file for the rest of the session."},
		{"n wrong file", engine.Decision{Feedback: "wrong file"}, ""},
	}
	for _, tt := range tests {
		u, out, sess := newTestUI("go\n"+tt.answer+"\n", false)
		sess.turn = toolTurn
		if err := u.Run(context.Background(), sess); err != nil {
			t.Fatal(err)
		}
		if len(sess.decisions) != 1 || sess.decisions[0] != tt.want {
			t.Errorf("answer %q: decisions %+v, want %+v", tt.answer, sess.decisions, tt.want)
		}
		if tt.shown != "" && !strings.Contains(out.String(), tt.shown) {
			t.Errorf("answer %q: output lacks %q:\n%s", tt.answer, tt.shown, out.String())
		}
	}
}

func TestApprovalEOFDenies(t *testing.T) {
	u, _, sess := newTestUI("go\n", false) // input ends at the approval prompt
	sess.turn = toolTurn
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if len(sess.decisions) != 1 || sess.decisions[0].Approved {
		t.Errorf("decisions %+v, want one denial", sess.decisions)
	}
}

func TestApprovalCancelledContextDenies(t *testing.T) {
	pr, pw := io.Pipe() // never written: a read would block forever
	defer pw.Close()
	u := New(Options{In: pr, Out: io.Discard, Err: io.Discard})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan engine.Decision)
	go func() { done <- u.ApproveTools(ctx, []engine.ApprovalItem{{Name: "bash", Label: "bash"}}) }()
	cancel()
	if d := <-done; d.Approved {
		t.Errorf("cancelled approval approved: %+v", d)
	}
	_ = u.input().close()
}

func TestColor(t *testing.T) {
	input := "hello\ny\n/model\n/bogus\n/tools\n"
	withTools := func(o *Options) {
		o.ListTools = func() []ToolRow { return []ToolRow{{Name: "bash", Agent: true}} }
		o.Banner = []string{"MCP: 1 server, 3 tools"}
	}
	u, out, sess := newTestUI(input, false, withTools)
	sess.turn = toolTurn
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("escape sequence without Color:\n%q", out.String())
	}

	u, out, sess = newTestUI(input, true, withTools)
	sess.turn = toolTurn
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\x1b[33m  ⚙ bash: ls\x1b[0m\n",          // call header yellow
		"\x1b[31m    - old\x1b[0m\n",             // preview styles
		"\x1b[32m    + new\x1b[0m\n",             //
		"\x1b[2mlet me look\x1b[0m",              // reasoning dim
		"\x1b[2m  → 2 lines\x1b[0m\n",            // result dim
		"\x1b[31m  → Error: old text",            // error result red
		"\x1b[2m  [1,234 / 10,000 tokens (12%)]", // status dim
		"\x1b[2mMCP: 1 server, 3 tools\x1b[0m",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("colored output lacks %q:\n%q", want, out.String())
		}
	}
}

func TestToolCallErrorHeaderRed(t *testing.T) {
	out := &strings.Builder{}
	u := New(Options{In: strings.NewReader(""), Out: out, Err: io.Discard, Color: true})
	u.Emit(engine.ToolCallEvent{Name: "read_file", Header: "✗ read_file: no path", Error: "Error: no path"})
	if got, want := out.String(), "\x1b[31m  ✗ read_file: no path\x1b[0m\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSlashCommands(t *testing.T) {
	var gotArgs string
	extra := func(o *Options) {
		o.ListTools = func() []ToolRow {
			return []ToolRow{
				{Name: "bash", Agent: true, TaskAgent: true, Source: "builtin"},
				{Name: "mcp__fs__read_text_file", AutoApprove: true, Source: "mcp:fs", State: "deferred"},
			}
		}
		o.Commands = []Command{{Name: "/mcp", Usage: "/mcp [refresh]", Help: "MCP servers",
			Run: func(_ context.Context, args string, w io.Writer) error {
				gotArgs = args
				fmt.Fprintln(w, "fs: 3 tools")
				return nil
			}}, {Name: "fail", Run: func(context.Context, string, io.Writer) error { return errors.New("no server named x") }}}
	}
	u, out, sess := newTestUI("/MODEL\n/model other/m2\n/raw\n/debug\n/clear\n/tools\n/help\n/mcp refresh fs\n/fail\n/nope\n/Q\n", false, extra)
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"[model-x] > /MODEL\nModel: org/model-x\n",
		"Model set to other/m2\n[m2] > /raw\nReasoning display off.\n",
		"Debug mode on.\n",
		"Conversation cleared.\n",
		"NAME                     AGENT  TASK_AGENT  AUTO_APPROVE  SOURCE   STATE\n" +
			"bash                     yes    yes         -             builtin  -\n" +
			"mcp__fs__read_text_file  -      -           yes           mcp:fs   deferred\n2 tools\n",
		"  /mcp [refresh]",
		"  /exit, /quit, /q",
		`a line """ starts a multi-line message`,
		"fs: 3 tools\n",
		"Error: no server named x\n",
		"Unknown command: /nope. Type /help for available commands.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if sess.model != "other/m2" || !sess.debug || sess.cleared != 1 || len(sess.sent) != 0 {
		t.Errorf("session state: model %q debug %v cleared %d sent %q", sess.model, sess.debug, sess.cleared, sess.sent)
	}
	if gotArgs != "refresh fs" {
		t.Errorf("extra command args %q", gotArgs)
	}
	if u.showReasoning {
		t.Error("/raw did not turn reasoning off")
	}
}

func TestRawHidesReasoning(t *testing.T) {
	u, out, sess := newTestUI("/raw\ngo\ny\n", false)
	sess.turn = toolTurn
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "let me look") {
		t.Errorf("reasoning shown after /raw:\n%s", out.String())
	}
}

func TestMultiLineBlock(t *testing.T) {
	u, _, sess := newTestUI("\"\"\"\nfirst line\n\n  indented\n\"\"\"\nsingle\n\"\"\"\nunterminated\n", false)
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	want := []string{"first line\n\n  indented", "single", "unterminated"}
	if fmt.Sprintf("%q", sess.sent) != fmt.Sprintf("%q", want) {
		t.Errorf("sent %q, want %q", sess.sent, want)
	}
}

func TestSendErrorContinues(t *testing.T) {
	u, out, sess := newTestUI("one\ntwo\n", false)
	n := 0
	sess.turn = func(context.Context, *fakeSession, string) (engine.Turn, error) {
		n++
		if n == 1 {
			return engine.Turn{}, errors.New("endpoint returned 500: overloaded")
		}
		return engine.Turn{}, nil
	}
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Error: endpoint returned 500: overloaded\n[model-x] > two") {
		t.Errorf("output:\n%s", out.String())
	}
	if len(sess.sent) != 2 {
		t.Errorf("sent %q", sess.sent)
	}
}

// TestInterrupt sends a real SIGINT during a turn: the turn's context is
// cancelled, "Interrupted." is printed and the REPL reads the next line.
func TestInterrupt(t *testing.T) {
	u, out, sess := newTestUI("long task\nnext\n", false)
	sess.turn = func(ctx context.Context, f *fakeSession, text string) (engine.Turn, error) {
		if text != "long task" {
			return engine.Turn{}, nil
		}
		f.ui.Emit(engine.StateEvent{State: engine.StateThinking})
		f.ui.Emit(engine.ContentEvent{Text: "partial"})
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			t.Error(err)
		}
		<-ctx.Done()
		return engine.Turn{}, fmt.Errorf("%w while the model was answering", engine.ErrInterrupted)
	}
	if err := u.Run(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "partial\nInterrupted.\n[model-x] > next") {
		t.Errorf("output:\n%s", out.String())
	}
	if len(sess.sent) != 2 {
		t.Errorf("sent %q", sess.sent)
	}
}

func TestSpinner(t *testing.T) {
	errOut := &strings.Builder{}
	out := &strings.Builder{}
	u := New(Options{In: strings.NewReader(""), Out: out, Err: errOut, Spinner: true})
	u.Emit(engine.StateEvent{State: engine.StateThinking})
	u.mu.Lock()
	drawn := errOut.String()
	u.mu.Unlock()
	if !strings.HasPrefix(drawn, "\r⠋ Thinking…") {
		t.Errorf("spinner not drawn: %q", drawn)
	}
	u.Emit(engine.ContentEvent{Text: "answer"})
	u.mu.Lock()
	s := errOut.String()
	u.mu.Unlock()
	if !strings.HasSuffix(s, "\r"+strings.Repeat(" ", 11)+"\r") || strings.Contains(s, "\x1b") {
		t.Errorf("spinner not erased cleanly: %q", s)
	}
	if out.String() != "answer" {
		t.Errorf("out %q", out.String())
	}

	// Without Spinner nothing reaches Err.
	errOut.Reset()
	u = New(Options{In: strings.NewReader(""), Out: io.Discard, Err: errOut})
	u.Emit(engine.StateEvent{State: engine.StateThinking})
	u.Emit(engine.ContentEvent{Text: "answer"})
	if errOut.Len() != 0 {
		t.Errorf("spinner drawn without Spinner: %q", errOut.String())
	}
}

// TestConcurrentEmit is for -race: tool workers emit while the session does.
func TestConcurrentEmit(t *testing.T) {
	out := &strings.Builder{}
	u := New(Options{In: strings.NewReader(""), Out: out, Err: io.Discard, Spinner: true})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				u.Emit(engine.ToolOutputChunkEvent{CallID: "c", Chunk: "x"})
				u.Emit(engine.ToolResultEvent{CallID: fmt.Sprint(i, j), Summary: "done"})
				u.Emit(engine.StateEvent{State: engine.StateThinking})
				u.Emit(engine.ContentEvent{Text: "y"})
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(out.String(), "  → done\n"); got != 200 {
		t.Errorf("%d result lines, want 200", got)
	}
}

func TestPromptFor(t *testing.T) {
	tests := []struct{ model, want string }{
		{"gpt-5", "[gpt-5] > "},
		{"Qwen/Qwen3-Coder-30B", "[Qwen3-Coder-30B] > "},
		{"a/b/" + strings.Repeat("x", 30), "[" + strings.Repeat("x", 30) + "] > "},
		{"a/" + strings.Repeat("y", 31), "[" + strings.Repeat("y", 27) + "...] > "},
	}
	for _, tt := range tests {
		if got := promptFor(tt.model); got != tt.want {
			t.Errorf("promptFor(%q) = %q, want %q", tt.model, got, tt.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 131072: "131,072", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCompletions(t *testing.T) {
	u := New(Options{Commands: []Command{{Name: "mcp"}}})
	if got := fmt.Sprint(u.completions("/m")); got != "[/mcp /model]" {
		t.Errorf("completions(/m) = %s", got)
	}
	if got := u.completions("/model x"); got != nil {
		t.Errorf("completions after a space: %q", got)
	}
	if got := u.completions("hello"); got != nil {
		t.Errorf("completions of text: %q", got)
	}
}

// The engine's session is what cmd/turnstone passes to Run.
var _ Session = (*engine.Session)(nil)
