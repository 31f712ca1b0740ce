package info

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"turnstone/internal/tool"
)

func schemas(t *testing.T) *tool.Schemas {
	t.Helper()
	return tool.MustLoadSchemas()
}

func prepare(t *testing.T, tl tool.Tool, args tool.Args) *tool.Prepared {
	t.Helper()
	p := tl.Prepare(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Args: args})
	if p == nil {
		t.Fatal("Prepare returned nil")
	}
	return p
}

func run(t *testing.T, p *tool.Prepared) (tool.Result, []string) {
	t.Helper()
	if p.Err != "" {
		t.Fatalf("unexpected validation error: %s", p.Err)
	}
	var emitted []string
	r := p.Run(context.Background(), func(s string) { emitted = append(emitted, s) })
	return r, emitted
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func requireMan(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("man"); err != nil {
		t.Fatal("man is not installed: install man-db and coreutils pages (apt-get install man-db coreutils manpages)")
	}
}

func TestManRealPage(t *testing.T) {
	requireMan(t)
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{})
	p := prepare(t, m, tool.Args{"page": "  ls "})
	if p.Header != "⚙ man: ls" || p.NeedsApproval {
		t.Fatalf("header %q needsApproval %v", p.Header, p.NeedsApproval)
	}
	if len(p.Preview) != 1 || p.Preview[0] != (tool.Line{Style: tool.StyleDim, Text: "ls"}) {
		t.Fatalf("preview %+v", p.Preview)
	}
	r, _ := run(t, p)
	if r.IsError {
		t.Fatalf("man ls failed: %s", r.Output)
	}
	for _, want := range []string{"NAME", "ls - list directory contents", "SYNOPSIS"} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("man ls output lacks %q", want)
		}
	}
	if strings.ContainsAny(r.Output, "\b\x1b") {
		t.Error("output keeps overstrikes or escape sequences")
	}
	for _, line := range strings.Split(r.Output, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line wider than MANWIDTH=80 (%d): %q", n, line)
			break
		}
	}
	if r.Summary != strconv.Itoa(len([]rune(r.Output)))+" chars" {
		t.Errorf("summary %q", r.Summary)
	}
}

func TestManSections(t *testing.T) {
	requireMan(t)
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{})
	tests := []struct {
		page, section string
		header        string
		want          string
		note          bool
	}{
		{"printf", "3", "⚙ man: printf(3)", "printf(3)", false},
		{"printf", " 1 ", "⚙ man: printf(1)", "PRINTF(1)", false},
		{"ls", "one", "⚙ man: ls", "LS(1)", true}, // invalid section: ignored, with a note
		{"ls", "1; rm -rf /", "⚙ man: ls", "LS(1)", true},
	}
	for _, tt := range tests {
		p := prepare(t, m, tool.Args{"page": tt.page, "section": tt.section})
		if p.Header != tt.header {
			t.Errorf("%s(%s): header %q, want %q", tt.page, tt.section, p.Header, tt.header)
		}
		r, _ := run(t, p)
		if r.IsError || !strings.Contains(r.Output, tt.want) {
			t.Errorf("%s(%s): error=%v, output lacks %q: %.200s", tt.page, tt.section, r.IsError, tt.want, r.Output)
		}
		if got := strings.HasPrefix(r.Output, "Note: section '"); got != tt.note {
			t.Errorf("%s(%s): note=%v, want %v", tt.page, tt.section, got, tt.note)
		}
	}
	// A page that exists, but not in the requested section (info pointed at
	// a missing program: with texinfo installed, `info ls` would answer).
	m = NewMan(schemas(t).MustSpec("man"), ManOptions{InfoCommand: filepath.Join(t.TempDir(), "no-info")})
	r, _ := run(t, prepare(t, m, tool.Args{"page": "ls", "section": "9"}))
	if !r.IsError || r.Output != "No man or info page found for 'ls' in section 9" {
		t.Errorf("ls(9): %v %q", r.IsError, r.Output)
	}
}

func TestManMissingPage(t *testing.T) {
	requireMan(t)
	// info is pointed at a missing program so the result does not depend on
	// whether texinfo is installed.
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{InfoCommand: filepath.Join(t.TempDir(), "no-info")})
	for _, page := range []string{"no-such-page-turnstone", "-k", "--help"} {
		r, _ := run(t, prepare(t, m, tool.Args{"page": page}))
		if !r.IsError || r.Output != "No man or info page found for '"+page+"'" {
			t.Errorf("page %q: error=%v output %.200q", page, r.IsError, r.Output)
		}
	}
}

func TestManValidation(t *testing.T) {
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{})
	tests := []struct {
		args   tool.Args
		header string
		err    string
	}{
		{tool.Args{}, "✗ man: no page name", "Error: no page name provided"},
		{tool.Args{"page": "   "}, "✗ man: no page name", "Error: no page name provided"},
		{tool.Args{"page": "ls; rm -rf ~"}, "✗ man: invalid page name", "Error: invalid page name 'ls; rm -rf ~'"},
		{tool.Args{"page": "../../etc/passwd"}, "✗ man: invalid page name", "Error: invalid page name '../../etc/passwd'"},
		{tool.Args{"page": "$(id)"}, "✗ man: invalid page name", "Error: invalid page name '$(id)'"},
	}
	for _, tt := range tests {
		p := prepare(t, m, tt.args)
		if p.Header != tt.header || p.Err != tt.err || p.NeedsApproval || p.Run != nil {
			t.Errorf("%v: got header %q err %q", tt.args, p.Header, p.Err)
		}
	}
	p := prepare(t, m, tool.Args{"page": "a b"})
	if len(p.Preview) != 1 || p.Preview[0].Style != tool.StyleRed {
		t.Errorf("invalid name preview %+v, want one red line", p.Preview)
	}
}

func TestManEnvironmentAndArgs(t *testing.T) {
	fake := script(t, "man", `cat; echo "width=$MANWIDTH keep=$MAN_KEEP_FORMATTING args=$*"`)
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{ManCommand: fake})
	r, _ := run(t, prepare(t, m, tool.Args{"page": "tar", "section": "1"}))
	// cat returns at once: stdin is /dev/null.
	if r.IsError || strings.TrimSpace(r.Output) != "width=80 keep=0 args=-- 1 tar" {
		t.Fatalf("got %v %q", r.IsError, r.Output)
	}
}

func TestManInfoFallback(t *testing.T) {
	fakeMan := script(t, "man", `echo "No manual entry for $2" >&2; exit 16`)
	fakeInfo := script(t, "info", `printf 'File: coreutils.info, Node: %s\n\nInfo text.\n' "$1"`)
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{ManCommand: fakeMan, InfoCommand: fakeInfo})
	r, _ := run(t, prepare(t, m, tool.Args{"page": "coreutils"}))
	if r.IsError || r.Output != "File: coreutils.info, Node: coreutils\n\nInfo text.\n" {
		t.Fatalf("got %v %q", r.IsError, r.Output)
	}
	// man exits 0 with blank output: also falls back.
	blank := script(t, "man", `echo "   "`)
	m = NewMan(schemas(t).MustSpec("man"), ManOptions{ManCommand: blank, InfoCommand: fakeInfo})
	if r, _ := run(t, prepare(t, m, tool.Args{"page": "x"})); r.IsError || !strings.Contains(r.Output, "Info text.") {
		t.Fatalf("blank man output: %v %q", r.IsError, r.Output)
	}
}

func TestManNotInstalled(t *testing.T) {
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{ManCommand: filepath.Join(t.TempDir(), "man")})
	r, _ := run(t, prepare(t, m, tool.Args{"page": "ls"}))
	if !r.IsError || !strings.HasPrefix(r.Output, "Error: man command not available") {
		t.Fatalf("got %v %q", r.IsError, r.Output)
	}
}

// A lookup that hangs is killed with its whole process group.
func TestManTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	hang := script(t, "man", "sleep 60 & echo $! > "+pidFile+"; wait")
	m := NewMan(schemas(t).MustSpec("man"), ManOptions{ManCommand: hang, Timeout: 300 * time.Millisecond})
	r, _ := run(t, prepare(t, m, tool.Args{"page": "ls"}))
	if !r.IsError || !strings.HasPrefix(r.Output, "Error: man page lookup timed out (man ") {
		t.Fatalf("got %v %q", r.IsError, r.Output)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("the fake man wrote no child pid (%q): the test cannot check the kill", b)
	}
	for i := 0; ; i++ {
		// The killed child is re-parented and reaped by init; until then it
		// may linger as a zombie, which /proc shows as state Z.
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if i == 100 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child sleep %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCleanManOutput(t *testing.T) {
	tests := []struct{ in, want string }{
		{"N\bNA\bAM\bME\bE", "NAME"},
		{"_\bu_\bn_\bd_\be_\br", "under"},
		{"\x1b[1mbold\x1b[0m and \x1b[4munder\x1b[24m", "bold and under"},
		{"caf\u00e9\b\u00e9 ok", "caf\u00e9 ok"},
		{"\bstart", "start"},
		{"plain text\n", "plain text\n"},
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		if got := CleanManOutput([]byte(tt.in)); got != tt.want {
			t.Errorf("CleanManOutput(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
