// Package terminal is the interactive REPL frontend: it reads the person's
// input with line editing, streams the session's events to the terminal,
// asks for tool approvals and runs the slash commands.
//
// The UI value is created before the session (the engine needs it as its
// UI), so Run receives the session it drives.
package terminal

import (
	"context"
	"io"
	"os"
	"sync"

	"golang.org/x/term"

	"turnstone/internal/engine"
)

// Session is what the REPL drives. *engine.Session satisfies it.
type Session interface {
	Send(ctx context.Context, text string) (engine.Turn, error)
	Clear()
	Model() string
	SetModel(name string)
	SetDebug(on bool)
}

// Command is an extra slash command wired by the caller (e.g. /mcp).
type Command struct {
	Name  string // "mcp" or "/mcp"; matched case-insensitively
	Usage string // "/mcp [refresh [server]]", shown by /help
	Help  string // one line for /help
	// Run executes the command with everything after the command word.
	// ctx is cancelled by Ctrl-C.
	Run func(ctx context.Context, args string, out io.Writer) error
}

// ToolRow is one line of the /tools table.
type ToolRow struct {
	Name        string
	Agent       bool
	TaskAgent   bool
	AutoApprove bool
	Source      string // "builtin", "mcp:server"
	State       string // free text, e.g. "deferred"
}

// Options configures the REPL.
type Options struct {
	In       io.Reader // os.Stdin gets line editing when it is a terminal
	Out, Err io.Writer
	// Color enables ANSI styling; see ColorEnabled. When false no escape
	// sequence is ever written.
	Color bool
	// Spinner draws the "Thinking…" spinner on Err; set it only when Err
	// is a terminal (see IsTerminal).
	Spinner bool
	Model   string
	// Banner lines are printed after "Chat with {model}" (MCP counts, ...).
	Banner        []string
	ContextWindow int
	// Effort is the reasoning effort; the status line names it when it is
	// not the default "medium".
	Effort   string
	Commands []Command
	// ListTools feeds /tools; nil means the command reports no tool list.
	ListTools func() []ToolRow
	// HistoryFile keeps the line-editor history between runs; empty: none.
	HistoryFile string
}

// UI is the terminal frontend. It implements engine.UI.
type UI struct {
	opts Options

	// mu guards everything below and serialises all writes, because Emit is
	// called from the session goroutine and from tool worker goroutines.
	mu            sync.Mutex
	atLineStart   bool   // the cursor of Out is at column 0
	streamKind    string // "content", "reasoning" or "" while streaming
	showReasoning bool
	debug         bool
	spin          *spinner
	usage         *engine.UsageEvent // last usage of the current turn

	inputOnce sync.Once
	in        lineInput
}

var _ engine.UI = (*UI)(nil)

// New creates the UI. Missing In/Out/Err default to the process's streams.
func New(opts Options) *UI {
	if opts.In == nil {
		opts.In = os.Stdin
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Err == nil {
		opts.Err = os.Stderr
	}
	return &UI{opts: opts, atLineStart: true, showReasoning: true}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}

// ColorEnabled reports whether output to f should be styled: f is a
// terminal and NO_COLOR is unset or empty (https://no-color.org).
func ColorEnabled(f *os.File) bool {
	return IsTerminal(f) && os.Getenv("NO_COLOR") == ""
}
