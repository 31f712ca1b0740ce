package terminal

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strings"
	"unicode/utf8"

	"turnstone/internal/engine"
	"turnstone/internal/tool"
)

// blockFence starts and ends a multi-line message.
const blockFence = `"""`

const hint = "/help for commands, Ctrl-C interrupts, Ctrl-D exits"

// Run reads and answers input until /exit, Ctrl-D (end of input) or ctx
// ends. Send errors are printed and the loop goes on.
func (u *UI) Run(ctx context.Context, sess Session) error {
	in := u.input()
	defer func() {
		if err := in.close(); err != nil {
			u.println(tool.StyleRed, errorText(err.Error()))
		}
	}()
	u.banner(u.model(sess))
	for ctx.Err() == nil {
		text, eof, err := u.readMessage(ctx, promptFor(u.model(sess)))
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		if strings.TrimSpace(text) == "" {
			if eof {
				return nil
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(text), "/") && !strings.Contains(text, "\n") {
			if err := u.command(ctx, sess, text); errors.Is(err, errExit) {
				return nil
			} else if err != nil {
				u.println(tool.StyleRed, errorText(err.Error()))
			}
		} else {
			u.send(ctx, sess, text)
		}
		if eof {
			return nil
		}
	}
	return nil
}

// model is the session's model, or Options.Model before one is set.
func (u *UI) model(sess Session) string {
	if m := sess.Model(); m != "" {
		return m
	}
	return u.opts.Model
}

// banner is "Chat with {model}", the caller's extra lines and the hint.
func (u *UI) banner(model string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.line(styleBold, "Chat with "+model)
	for _, l := range u.opts.Banner {
		u.line(tool.StyleDim, l)
	}
	u.line(tool.StyleDim, hint)
}

// promptFor is "[{model tail}] > ": the part after the last "/", cut to
// 27 characters + "..." when longer than 30.
func promptFor(model string) string {
	tail := model
	if i := strings.LastIndex(tail, "/"); i >= 0 {
		tail = tail[i+1:]
	}
	if utf8.RuneCountInString(tail) > 30 {
		tail = string([]rune(tail)[:27]) + "..."
	}
	return "[" + tail + "] > "
}

// readMessage reads one message: a line, or a """ block of lines. eof is
// true when the input ended after the message (a block left open by
// Ctrl-D is still sent, so nothing typed is lost). Ctrl-C at the prompt
// clears the line (or drops the open block) and prompts again.
func (u *UI) readMessage(ctx context.Context, prompt string) (text string, eof bool, err error) {
	in := u.input()
	for {
		line, err := u.readLine(ctx, prompt)
		if errors.Is(err, errAborted) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		if strings.TrimSpace(line) != blockFence {
			if strings.TrimSpace(line) != "" {
				in.addHistory(line)
			}
			return line, false, nil
		}
		var lines []string
		for {
			l, err := u.readLine(ctx, "... ")
			if errors.Is(err, errAborted) {
				lines = nil
				break
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					return strings.Join(lines, "\n"), true, nil
				}
				return "", false, err
			}
			if strings.TrimSpace(l) == blockFence {
				return strings.Join(lines, "\n"), false, nil
			}
			lines = append(lines, l)
		}
	}
}

// send runs one turn. Ctrl-C cancels it (the stream and running tools) and
// the REPL goes on; the status line follows a completed answer.
func (u *UI) send(ctx context.Context, sess Session, text string) {
	u.mu.Lock()
	u.usage = nil
	u.mu.Unlock()
	interrupted := false
	err := u.interruptible(ctx, func(tctx context.Context) error {
		_, err := sess.Send(tctx, text)
		interrupted = tctx.Err() != nil && ctx.Err() == nil
		return err
	})
	u.mu.Lock()
	defer u.mu.Unlock()
	u.stopSpinnerLocked()
	u.endStreamLocked()
	switch {
	case err != nil && (interrupted || errors.Is(err, engine.ErrInterrupted)):
		u.line(tool.StyleYellow, "Interrupted.")
	case err != nil:
		u.line(tool.StyleRed, errorText(err.Error()))
	default:
		if s := u.statusLine(); s != "" {
			u.line(tool.StyleDim, s)
		}
	}
}

// interruptible runs fn with a context that Ctrl-C (SIGINT) cancels. The
// handler is installed only for the duration of fn, so that outside a turn
// the line editor sees Ctrl-C as a key.
func (u *UI) interruptible(ctx context.Context, fn func(context.Context) error) error {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-sig:
				cancel() // a second Ctrl-C cancels again (a no-op)
			case <-done:
				return
			}
		}
	}()
	return fn(tctx)
}
