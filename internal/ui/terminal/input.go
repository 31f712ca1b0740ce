package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/peterh/liner"
)

// errAborted is Ctrl-C at a prompt (line editor only).
var errAborted = errors.New("input aborted")

// lineInput reads one line per prompt.
type lineInput interface {
	// readLine returns the line without its newline, io.EOF at the end of
	// input (Ctrl-D) and errAborted for Ctrl-C.
	readLine(ctx context.Context, prompt string) (string, error)
	// editing: the line editor prints the prompt and echoes the input.
	editing() bool
	// discardTypeahead drops input typed before the prompt (terminal only).
	discardTypeahead()
	addHistory(line string)
	close() error
}

// input returns the UI's line source, created on first use: the liner line
// editor when In and Out are the process's terminal, plain reads otherwise
// (pipes, tests, TERM=dumb).
func (u *UI) input() lineInput {
	u.inputOnce.Do(func() {
		if useLiner(u.opts) {
			u.in = newLinerInput(u.opts.HistoryFile, u.completions)
			return
		}
		echo := true
		if f, ok := u.opts.In.(*os.File); ok && IsTerminal(f) {
			echo = false // the terminal echoes what is typed
		}
		u.in = newPlainInput(u.opts.In, echo)
	})
	return u.in
}

func useLiner(o Options) bool {
	in, ok := o.In.(*os.File)
	if !ok || in.Fd() != os.Stdin.Fd() || !IsTerminal(in) {
		return false
	}
	out, ok := o.Out.(*os.File)
	if !ok || out.Fd() != os.Stdout.Fd() || !IsTerminal(out) {
		return false
	}
	return liner.TerminalSupported()
}

// linerInput is the line editor: history, Tab completion, Ctrl-C clears.
type linerInput struct {
	st          *liner.State
	historyFile string
}

func newLinerInput(historyFile string, complete func(string) []string) *linerInput {
	st := liner.NewLiner()
	st.SetCtrlCAborts(true) // reported as errAborted; the caller decides
	st.SetCompleter(complete)
	st.SetTabCompletionStyle(liner.TabPrints)
	st.SetBeep(false)
	if historyFile != "" {
		if f, err := os.Open(historyFile); err == nil {
			_, _ = st.ReadHistory(f)
			_ = f.Close()
		}
	}
	return &linerInput{st: st, historyFile: historyFile}
}

// readLine cannot be cancelled by ctx: while the editor reads, Ctrl-C is a
// key (reported as errAborted), not a signal.
func (l *linerInput) readLine(_ context.Context, prompt string) (string, error) {
	s, err := l.st.Prompt(printable(prompt))
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", errAborted
	}
	return s, err
}

func (l *linerInput) editing() bool { return true }

func (l *linerInput) discardTypeahead() { discardTypeahead() }

func (l *linerInput) addHistory(line string) { l.st.AppendHistory(line) }

// close restores the terminal mode and saves the history.
func (l *linerInput) close() error {
	var err error
	if l.historyFile != "" {
		err = writeHistory(l.st, l.historyFile)
	}
	if cerr := l.st.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeHistory(st *liner.State, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	if _, err := st.WriteHistory(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("save history to %s: %w", path, err)
	}
	return f.Close()
}

// printable drops control characters, which liner refuses in a prompt.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.C, r) {
			return -1
		}
		return r
	}, s)
}

// plainInput reads lines from any reader. A goroutine does the blocking
// reads so that a cancelled ctx (Ctrl-C during an approval) returns at once.
type plainInput struct {
	lines chan lineResult
	quit  chan struct{}
	echo  bool
	eof   bool
}

type lineResult struct {
	text string
	err  error
}

func newPlainInput(r io.Reader, echo bool) *plainInput {
	p := &plainInput{lines: make(chan lineResult), quit: make(chan struct{}), echo: echo}
	go p.pump(bufio.NewReader(r))
	return p
}

func (p *plainInput) pump(br *bufio.Reader) {
	send := func(r lineResult) bool {
		select {
		case p.lines <- r:
			return true
		case <-p.quit:
			return false
		}
	}
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
			if !send(lineResult{text: s}) {
				return
			}
		}
		if err != nil {
			send(lineResult{err: err})
			return
		}
	}
}

func (p *plainInput) readLine(ctx context.Context, _ string) (string, error) {
	if p.eof {
		return "", io.EOF
	}
	select {
	case r := <-p.lines:
		if r.err != nil {
			p.eof = true
			if !errors.Is(r.err, io.EOF) {
				return "", fmt.Errorf("read input: %w", r.err)
			}
		}
		return r.text, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (p *plainInput) editing() bool { return false }

// discardTypeahead does nothing: piped input is all typeahead.
func (p *plainInput) discardTypeahead() {}

func (p *plainInput) addHistory(string) {}

func (p *plainInput) close() error {
	select {
	case <-p.quit:
	default:
		close(p.quit)
	}
	return nil
}

// readLine prompts and reads one line, keeping the output tidy around it.
func (u *UI) readLine(ctx context.Context, prompt string) (string, error) {
	in := u.input()
	u.mu.Lock()
	u.stopSpinnerLocked()
	u.endStreamLocked()
	if !in.editing() {
		u.write(prompt)
	}
	u.mu.Unlock()

	s, err := in.readLine(ctx, prompt)

	u.mu.Lock()
	defer u.mu.Unlock()
	if p, ok := in.(*plainInput); ok {
		switch {
		case err != nil:
			u.write("\n")
		case p.echo:
			u.write(s + "\n") // piped input: show it as a terminal would
		}
	} else if errors.Is(err, io.EOF) {
		u.write("\n") // Ctrl-D leaves the cursor after the prompt
	}
	u.atLineStart = true
	return s, err
}
