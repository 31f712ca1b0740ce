package info

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"turnstone/internal/tool"
)

// ManTimeout is the fixed limit for one man or info lookup (behavior §2.7);
// it does not follow the session's tool timeout.
const ManTimeout = 10 * time.Second

// ManOptions configure the man tool. The zero value is the production setup.
type ManOptions struct {
	// ManCommand and InfoCommand are the programs run; "" means "man" and
	// "info" found on PATH.
	ManCommand  string
	InfoCommand string
	// Timeout bounds each of the two lookups; 0 means ManTimeout.
	Timeout time.Duration
}

// Man reads manual pages with man(1), falling back to info(1).
type Man struct {
	spec tool.Spec
	opts ManOptions
}

var _ tool.Tool = (*Man)(nil)

// NewMan returns the man tool; spec is schemas.MustSpec("man").
func NewMan(spec tool.Spec, opts ManOptions) *Man {
	if opts.ManCommand == "" {
		opts.ManCommand = "man"
	}
	if opts.InfoCommand == "" {
		opts.InfoCommand = "info"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = ManTimeout
	}
	return &Man{spec: spec, opts: opts}
}

// Spec implements tool.Tool.
func (m *Man) Spec() tool.Spec { return m.spec }

var (
	manPageRe    = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)
	manSectionRe = regexp.MustCompile(`^[1-9][a-z]?$`)
	// sgrRe matches ANSI control sequences (colours, bold) that groff may
	// emit despite MAN_KEEP_FORMATTING=0.
	sgrRe = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)
)

// Prepare validates page and section; it runs nothing.
func (m *Man) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	page := strings.TrimSpace(call.Args.String("page"))
	if page == "" {
		return failed("man", "no page name", "Error: no page name provided")
	}
	if !manPageRe.MatchString(page) {
		return failed("man", "invalid page name", "Error: invalid page name '"+page+"'",
			tool.Line{Style: tool.StyleRed, Text: "invalid page name '" + page + "'"})
	}
	rawSection := strings.TrimSpace(call.Args.String("section"))
	section, note := rawSection, ""
	if section != "" && !manSectionRe.MatchString(section) {
		// The original drops such a section silently; we still drop it (man
		// would reject it) but tell the model, so it can retry.
		note = "Note: section '" + section + "' is not a valid manual section (a digit 1-9, optionally followed by one letter, such as 3 or 3p) and was ignored.\n\n"
		section = ""
	}
	label := page
	if section != "" {
		label = page + "(" + section + ")"
	}
	return &tool.Prepared{
		Header:  header("man", label),
		Preview: tool.Preview{{Style: tool.StyleDim, Text: label}},
		Run: func(ctx context.Context, _ tool.Emit) tool.Result {
			r := m.lookup(ctx, page, section)
			if note != "" && !r.IsError {
				r.Output = note + r.Output
			}
			return r
		},
	}
}

func (m *Man) lookup(ctx context.Context, page, section string) tool.Result {
	timedOut := fmt.Sprintf("Error: man page lookup timed out (man %s after %s; try a more specific section, or bash with man %s | head)",
		strings.TrimSpace(section+" "+page), m.opts.Timeout, page)
	args := []string{"--"}
	if section != "" {
		args = append(args, section)
	}
	out, err := m.run(ctx, m.opts.ManCommand, append(args, page)...)
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return tool.ErrorResult("Error: man command not available (install man-db, e.g. apt-get install man-db)")
	case errors.Is(err, context.DeadlineExceeded):
		return tool.ErrorResult(timedOut)
	case errors.Is(err, context.Canceled):
		return tool.ErrorResult("Error: man page lookup was cancelled")
	case err == nil && strings.TrimSpace(string(out)) != "":
		text := CleanManOutput(out)
		return tool.Result{Output: text, Summary: chars(utf8.RuneCountInString(text))}
	}
	out, err = m.run(ctx, m.opts.InfoCommand, page)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return tool.ErrorResult(timedOut)
	case errors.Is(err, context.Canceled):
		return tool.ErrorResult("Error: man page lookup was cancelled")
	case err == nil && strings.TrimSpace(string(out)) != "":
		text := strings.ToValidUTF8(string(out), "\uFFFD")
		return tool.Result{Output: text, Summary: chars(utf8.RuneCountInString(text))}
	}
	where := "'" + page + "'"
	if section != "" {
		where += " in section " + section
	}
	return tool.ErrorResult("No man or info page found for " + where)
}

// run executes one lookup program with a fixed timeout, stdin from
// /dev/null, in its own process group so that a timeout also kills the
// groff pipeline man starts. A deadline or cancellation is returned as the
// context's error.
func (m *Man) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "MAN_KEEP_FORMATTING=0", "MANPAGER=cat", "PAGER=cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return stdout.Bytes(), err
}

// CleanManOutput removes what man's formatter puts in for a terminal:
// backspace overstrikes (a character followed by \b, for bold and
// underline) and ANSI escape sequences. Invalid UTF-8 is replaced.
func CleanManOutput(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if strings.IndexByte(s, '\b') >= 0 {
		out := make([]byte, 0, len(s))
		prev := -1 // where the last kept rune starts in out
		for _, r := range s {
			if r == '\b' {
				if prev >= 0 {
					out = out[:prev]
					prev = -1
				}
				continue
			}
			prev = len(out)
			out = utf8.AppendRune(out, r)
		}
		s = string(out)
	}
	return sgrRe.ReplaceAllString(s, "")
}
