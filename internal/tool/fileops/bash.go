package fileops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"turnstone/internal/tool"
)

// DefaultTimeout is the tool timeout when none is configured (seconds in
// the original's --tool-timeout).
const DefaultTimeout = 120 * time.Second

// pipeDrainDelay bounds how long bash waits, after its shell exits (or is
// killed), for stdout/stderr to reach EOF. A background child that keeps the
// pipes open (`sleep 100 &`) would otherwise hang the tool.
const pipeDrainDelay = 500 * time.Millisecond

// blocklist is matched as plain substrings of the trimmed command
// (behavior.md §2.2). It is a speed bump against obvious accidents, not a
// sandbox: any determined command gets past it, which is why bash needs
// approval.
var blocklist = []string{
	"rm -rf /", "rm -rf /*", "mkfs", "shutdown", "reboot", "halt", "poweroff",
	"dd if=", ":(){ :|:& };:", "> /dev/sda", "mv / ", "chmod -R 777 /", "chown -R ",
}

// smartPunct maps the typographic characters models like to emit to ASCII.
var smartPunct = strings.NewReplacer("‘", "'", "’", "'", "“", `"`, "”", `"`, "–", "-", "—", "-")

// BashOptions configures the bash tool.
type BashOptions struct {
	// Timeout kills the command's process group; 0 means DefaultTimeout.
	Timeout time.Duration
	// Env is the environment of the command; nil inherits the process's.
	Env []string
	// Dir is the working directory; "" inherits the process's.
	Dir string
	// TempDir holds the script file; "" means os.TempDir().
	TempDir string
}

// Bash runs shell commands (behavior.md §2.2).
type Bash struct {
	spec tool.Spec
	opts BashOptions
}

var _ tool.Tool = (*Bash)(nil)

// NewBash builds the bash tool from its spec (schemas.MustSpec("bash")).
func NewBash(spec tool.Spec, opts BashOptions) *Bash {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Bash{spec: spec, opts: opts}
}

// Spec returns the tool's schema.
func (b *Bash) Spec() tool.Spec { return b.spec }

// Prepare sanitizes and checks the command; the command runs only in Run.
func (b *Bash) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	cmd := smartPunct.Replace(call.Args.String("command"))
	if cmd == "" {
		return tool.Fail(failHeader("bash", "empty command"), "Error: empty command")
	}
	trimmed := strings.TrimSpace(cmd)
	for _, p := range blocklist {
		if strings.Contains(trimmed, p) {
			return tool.Fail(failHeader("bash", "blocked"),
				fmt.Sprintf("Blocked: command matches dangerous pattern '%s'", p))
		}
	}
	first, _, _ := strings.Cut(cmd, "\n")
	header := okHeader("bash", first)
	if n := strings.Count(cmd, "\n"); n > 0 {
		header += fmt.Sprintf(" ... (%d more lines)", n)
	}
	return &tool.Prepared{
		Header:        header,
		NeedsApproval: true,
		ApprovalLabel: "bash",
		Run:           func(ctx context.Context, emit tool.Emit) tool.Result { return b.run(ctx, cmd, emit) },
	}
}

// run executes the script as `bash <tempfile>` (a file rather than `bash -c`
// so long scripts are not limited by the argument size and $0 is stable) in
// its own process group with stdin on /dev/null.
func (b *Bash) run(ctx context.Context, command string, emit tool.Emit) tool.Result {
	script, err := os.CreateTemp(b.opts.TempDir, "turnstone-*.sh")
	if err != nil {
		return tool.ErrorResult(fmt.Sprintf("Error executing command: create script file: %v", err))
	}
	defer os.Remove(script.Name())
	_, werr := script.WriteString(command)
	if cerr := script.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return tool.ErrorResult(fmt.Sprintf("Error executing command: write script file: %v", werr))
	}

	tctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "bash", script.Name())
	cmd.Env = b.opts.Env
	cmd.Dir = b.opts.Dir
	cmd.Stdin = nil // /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = pipeDrainDelay
	stdout := &lineWriter{emit: emit}
	var stderr tool.Capture
	cmd.Stdout = stdout
	cmd.Stderr = &stderr

	if err := cmd.Start(); err != nil {
		return tool.ErrorResult(fmt.Sprintf("Error executing command: %v", err))
	}
	waitErr := cmd.Wait()
	stdout.flush()

	out := combine(stdout.String(), stderr.String())
	switch {
	case ctx.Err() != nil:
		_ = killGroup(cmd.Process.Pid)
		return partialError(out, "[command interrupted; its process group was killed]")
	case tctx.Err() != nil:
		_ = killGroup(cmd.Process.Pid)
		return partialError(out, fmt.Sprintf("[command timed out after %s; its process group was killed]", seconds(b.opts.Timeout)))
	}
	summary := fmt.Sprintf("%d lines", lineCount(out))
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil, errors.Is(waitErr, exec.ErrWaitDelay):
		// exited 0; ErrWaitDelay only says a background child kept the pipes open.
	case errors.As(waitErr, &exitErr):
		note := exitNote(exitErr)
		summary += ", " + strings.Trim(note, "[]")
		out = appendNote(out, note)
	default:
		return partialError(out, fmt.Sprintf("Error executing command: %v", waitErr))
	}
	if out == "" {
		out = "(no output)"
	}
	return tool.Result{Output: out, Summary: summary}
}

// killGroup sends SIGKILL to the whole process group led by pid.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

func exitNote(e *exec.ExitError) string {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("[killed by signal %d (%v)]", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("[exit code: %d]", e.ExitCode())
}

// combine is stdout (its trailing newlines dropped), a newline if stdout is
// non-empty, then stderr, trimmed and decoded leniently (invalid UTF-8
// becomes U+FFFD).
func combine(stdout, stderr string) string {
	s := strings.TrimRight(stdout, "\n")
	if s != "" {
		s += "\n"
	}
	s += stderr
	return strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
}

func appendNote(out, note string) string {
	if out == "" {
		return note
	}
	return out + "\n" + note
}

func partialError(out, note string) tool.Result {
	return tool.Result{Output: appendNote(out, note), IsError: true, Summary: strings.Trim(note, "[]")}
}

func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// maxPendingLine bounds a line still waiting for its newline; a longer one
// is emitted in pieces so a command printing no newlines cannot grow it.
const maxPendingLine = 64 << 10

// lineWriter captures what is written to it (bounded, head and tail) and
// emits each complete line as it arrives. os/exec calls Write from one
// goroutine, and Wait returns only after that goroutine is done.
type lineWriter struct {
	emit    tool.Emit
	all     tool.Capture
	pending []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.all.Write(p)
	if w.emit == nil {
		return len(p), nil
	}
	w.pending = append(w.pending, p...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			break
		}
		w.emit(strings.ToValidUTF8(strings.TrimSuffix(string(w.pending[:i]), "\r"), "\uFFFD"))
		w.pending = w.pending[i+1:]
	}
	if len(w.pending) > maxPendingLine {
		w.emit(strings.ToValidUTF8(string(w.pending), "\uFFFD"))
		w.pending = w.pending[:0]
	}
	return len(p), nil
}

// flush emits a final line that had no newline.
func (w *lineWriter) flush() {
	if w.emit != nil && len(w.pending) > 0 {
		w.emit(strings.ToValidUTF8(string(w.pending), "\uFFFD"))
	}
	w.pending = nil
}

func (w *lineWriter) String() string { return w.all.String() }
