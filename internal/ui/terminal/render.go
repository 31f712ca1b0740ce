package terminal

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"turnstone/internal/engine"
	"turnstone/internal/tool"
)

// style names used by the REPL itself, on top of tool.Style.
const (
	styleBold tool.Style = "bold"
)

// ansiCode is the SGR sequence of a style; "" for plain or unknown styles.
func ansiCode(st tool.Style) string {
	switch st {
	case tool.StyleDim:
		return "\x1b[2m"
	case tool.StyleRed:
		return "\x1b[31m"
	case tool.StyleGreen:
		return "\x1b[32m"
	case tool.StyleYellow:
		return "\x1b[33m"
	case styleBold:
		return "\x1b[1m"
	}
	return ""
}

const ansiReset = "\x1b[0m"

// paint styles text line by line, so that a reset always comes before a
// newline and a half-printed answer never leaves the terminal coloured.
// Without Color (or for plain/unknown styles) it returns text unchanged.
func (u *UI) paint(st tool.Style, text string) string {
	code := ansiCode(st)
	if !u.opts.Color || code == "" || text == "" {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = code + l + ansiReset
		}
	}
	return strings.Join(lines, "\n")
}

// write prints s to Out; the caller holds u.mu.
func (u *UI) write(s string) {
	if s == "" {
		return
	}
	u.stopSpinnerLocked()
	_, _ = fmt.Fprint(u.opts.Out, s)
	u.atLineStart = strings.HasSuffix(s, "\n")
}

// line prints s as whole line(s), starting on a fresh line; the caller
// holds u.mu.
func (u *UI) line(st tool.Style, s string) {
	u.endStreamLocked()
	u.write(u.paint(st, s) + "\n")
}

// endStreamLocked finishes a streamed answer with a newline.
func (u *UI) endStreamLocked() {
	u.streamKind = ""
	if !u.atLineStart {
		u.write("\n")
	}
}

// Emit renders one engine event. It is safe for concurrent use.
func (u *UI) Emit(ev engine.Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch e := ev.(type) {
	case engine.StateEvent:
		if e.State == engine.StateThinking {
			u.startSpinnerLocked()
		} else {
			u.stopSpinnerLocked()
			u.endStreamLocked()
		}
	case engine.ContentEvent:
		u.stream("content", tool.StylePlain, e.Text)
	case engine.ReasoningEvent:
		if u.showReasoning {
			u.stream("reasoning", tool.StyleDim, e.Text)
		}
	case engine.InfoEvent:
		u.line(tool.StyleDim, e.Message)
	case engine.ErrorEvent:
		u.line(tool.StyleRed, errorText(e.Message))
	case engine.ToolCallEvent:
		st := tool.StyleYellow
		if e.Error != "" {
			st = tool.StyleRed
		}
		u.line(st, "  "+e.Header)
		for _, l := range e.Preview {
			u.line(l.Style, l.Text)
		}
	case engine.ToolOutputChunkEvent:
		// Streamed tool output is not shown (as in the original); the
		// result line below summarises it.
	case engine.ToolResultEvent:
		if s, st := resultLine(e); s != "" {
			u.line(st, "  → "+s)
		}
	case engine.UsageEvent:
		u.usage = &e
	}
}

// stream prints a content or reasoning delta; a switch between the two
// starts a new line so reasoning and answer do not run together.
func (u *UI) stream(kind string, st tool.Style, text string) {
	if text == "" {
		return
	}
	if u.streamKind != kind && !u.atLineStart {
		u.write("\n")
	}
	u.streamKind = kind
	u.write(u.paint(st, text))
}

// errorText prefixes "Error: " unless the message already says what it is.
func errorText(msg string) string {
	l := strings.ToLower(msg)
	if strings.HasPrefix(l, "error") || strings.HasPrefix(l, "warning") {
		return msg
	}
	return "Error: " + msg
}

const resultMax = 120

// resultLine is the one-line summary of a tool result: the tool's Summary,
// or for errors the first line of the output (what went wrong).
func resultLine(e engine.ToolResultEvent) (string, tool.Style) {
	if e.IsError {
		first, _, _ := strings.Cut(strings.TrimSpace(e.Output), "\n")
		if first == "" {
			first = e.Summary
		}
		if first == "" {
			first = "failed"
		}
		return clip(first, resultMax), tool.StyleRed
	}
	s := e.Summary
	if s == "" {
		switch n := strings.Count(strings.TrimRight(e.Output, "\n"), "\n"); {
		case strings.TrimSpace(e.Output) == "":
			s = "(no output)"
		case n == 0:
			s = "1 line"
		default:
			s = strconv.Itoa(n+1) + " lines"
		}
	}
	first, _, _ := strings.Cut(s, "\n")
	return clip(first, resultMax), tool.StyleDim
}

// clip cuts s to max runes, marking the cut with "...".
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-3]) + "..."
}

// statusLine is "  [12,345 / 131,072 tokens (9%)]", or "" without usage.
func (u *UI) statusLine() string {
	if u.usage == nil || u.usage.Usage.TotalTokens <= 0 {
		return ""
	}
	ctx := u.usage.ContextWindow
	if ctx <= 0 {
		ctx = u.opts.ContextWindow
	}
	total := u.usage.Usage.TotalTokens
	effort := ""
	if e := u.opts.Effort; e != "" && e != "medium" {
		effort = " · reasoning: " + e
	}
	if ctx <= 0 {
		return fmt.Sprintf("  [%s tokens%s]", thousands(total), effort)
	}
	pct := float64(total) * 100 / float64(ctx)
	return fmt.Sprintf("  [%s / %s tokens (%.0f%%)%s]", thousands(total), thousands(ctx), pct, effort)
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// spinner frames and timing of behavior.md §6.
const spinFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

const (
	spinInterval = 80 * time.Millisecond
	spinText     = " Thinking…"
)

type spinner struct {
	stop  chan struct{}
	frame int
}

// startSpinnerLocked shows the spinner until the next output. It draws the
// first frame at once; a goroutine advances it.
func (u *UI) startSpinnerLocked() {
	// Only at the start of a line: Out and Err usually share the terminal.
	if !u.opts.Spinner || u.spin != nil || !u.atLineStart {
		return
	}
	s := &spinner{stop: make(chan struct{})}
	u.spin = s
	u.drawSpinnerLocked()
	go func() {
		t := time.NewTicker(spinInterval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				u.mu.Lock()
				if u.spin == s {
					s.frame++
					u.drawSpinnerLocked()
				}
				u.mu.Unlock()
			}
		}
	}()
}

func (u *UI) drawSpinnerLocked() {
	s := u.spin
	frames := []rune(spinFrames)
	frame := string(frames[s.frame%len(frames)])
	text := u.paint(tool.StyleDim, frame+spinText)
	_, _ = fmt.Fprint(u.opts.Err, "\r"+text)
}

// stopSpinnerLocked erases the spinner line. It never waits for the
// spinner goroutine (which may be waiting for u.mu).
func (u *UI) stopSpinnerLocked() {
	if u.spin == nil {
		return
	}
	close(u.spin.stop)
	u.spin = nil
	// Spaces rather than an erase-line sequence: no ANSI without Color.
	w := 1 + utf8.RuneCountInString(spinText)
	_, _ = fmt.Fprint(u.opts.Err, "\r"+strings.Repeat(" ", w)+"\r")
}
