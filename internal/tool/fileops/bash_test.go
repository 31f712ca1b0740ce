package fileops

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"turnstone/internal/tool"
)

func newBash(timeout time.Duration) *Bash {
	return NewBash(schemas.MustSpec("bash"), BashOptions{Timeout: timeout})
}

func TestBashPrepare(t *testing.T) {
	b := newBash(0)
	tests := []struct {
		name, cmd, header, err string
	}{
		{"simple", "ls -la", "⚙ bash: ls -la", ""},
		{"multi-line", "echo a\necho b\necho c", "⚙ bash: echo a ... (2 more lines)", ""},
		{"empty", "", "✗ bash: empty command", "Error: empty command"},
		{"whitespace is not empty", "   ", "⚙ bash:    ", ""},
		{"blocked rm", "  rm -rf / ", "✗ bash: blocked", "Blocked: command matches dangerous pattern 'rm -rf /'"},
		{"blocked substring", "echo asphalt", "✗ bash: blocked", "Blocked: command matches dangerous pattern 'halt'"},
		{"blocked fork bomb", ":(){ :|:& };:", "✗ bash: blocked", "Blocked: command matches dangerous pattern ':(){ :|:& };:'"},
		{"smart dash sanitized before blocklist", "rm —rf /", "✗ bash: blocked", "Blocked: command matches dangerous pattern 'rm -rf /'"},
		{"smart quotes sanitized", "echo “hi” ‘x’", "⚙ bash: echo \"hi\" 'x'", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, b, tool.Args{"command": tc.cmd})
			if p.Header != tc.header || p.Err != tc.err {
				t.Fatalf("got header %q err %q, want %q %q", p.Header, p.Err, tc.header, tc.err)
			}
			if tc.err == "" && (!p.NeedsApproval || p.ApprovalLabel != "bash") {
				t.Fatalf("bash must need approval with label bash: %+v", p)
			}
			if tc.err != "" && p.NeedsApproval {
				t.Fatal("error items never need approval")
			}
		})
	}
}

func TestBashRun(t *testing.T) {
	b := newBash(0)
	tests := []struct {
		name, cmd, want string
	}{
		{"stdout", "echo hello", "hello"},
		{"stdout then stderr", "echo out; echo err >&2", "out\nerr"},
		{"stderr only", "echo err >&2", "err"},
		{"no output", "true", "(no output)"},
		{"exit code", "echo x; exit 3", "x\n[exit code: 3]"},
		{"exit code, empty output", "exit 2", "[exit code: 2]"},
		{"trimmed", "printf '\\n\\n  a  \\n\\n'", "a"},
		{"invalid utf8 replaced", "printf 'a\\xffb'", "a\uFFFDb"},
		{"stdin is /dev/null", "cat; echo done", "done"},
		{"smart quotes run as ascii", "echo ‘quoted’", "quoted"},
		{"killed by signal", "kill -9 $$", "[killed by signal 9 (killed)]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, b, tool.Args{"command": tc.cmd})
			if res.Output != tc.want || res.IsError {
				t.Fatalf("got %q (error %v), want %q", res.Output, res.IsError, tc.want)
			}
		})
	}
}

func TestBashStreamsStdoutLines(t *testing.T) {
	p := prepare(t, newBash(0), tool.Args{"command": "echo one; echo two >&2; printf 'three\\nfour'"})
	var mu sync.Mutex
	var lines []string
	res := p.Run(context.Background(), func(s string) {
		mu.Lock()
		lines = append(lines, s)
		mu.Unlock()
	})
	if got := strings.Join(lines, "|"); got != "one|three|four" {
		t.Fatalf("emitted %q", got)
	}
	if res.Output != "one\nthree\nfour\ntwo" {
		t.Fatalf("output %q", res.Output)
	}
}

func TestBashTempFileRemoved(t *testing.T) {
	dir := t.TempDir()
	b := NewBash(schemas.MustSpec("bash"), BashOptions{TempDir: dir})
	res := call(t, b, tool.Args{"command": "echo $0"})
	if !strings.HasPrefix(res.Output, dir) {
		t.Fatalf("script not in temp dir: %q", res.Output)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("temp dir not empty: %v", ents)
	}
}

// pidGone waits (bounded) until pid no longer exists or is a zombie.
func pidGone(pid int) bool {
	for range 200 {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			return true
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
			if len(f) > 0 && f[0] == "Z" {
				return true
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return false
}

func TestBashTimeoutKillsProcessGroupAndKeepsOutput(t *testing.T) {
	b := newBash(500 * time.Millisecond)
	res := call(t, b, tool.Args{"command": "sleep 300 & echo child=$!; echo partial; sleep 300"})
	if !res.IsError {
		t.Fatalf("timeout must be an error result: %q", res.Output)
	}
	want := "[command timed out after 500ms; its process group was killed]"
	if !strings.HasPrefix(res.Output, "child=") || !strings.Contains(res.Output, "\npartial\n") || !strings.HasSuffix(res.Output, want) {
		t.Fatalf("output %q", res.Output)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(res.Output, "\n", 2)[0], "child="))
	if err != nil {
		t.Fatal(err)
	}
	if !pidGone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d survived the timeout", pid)
	}
}

func TestBashTimeoutMessageInSeconds(t *testing.T) {
	b := newBash(time.Second)
	res := call(t, b, tool.Args{"command": "sleep 30"})
	if res.Output != "[command timed out after 1s; its process group was killed]" || !res.IsError {
		t.Fatalf("got %q", res.Output)
	}
}

func TestBashCancelInterrupts(t *testing.T) {
	p := prepare(t, newBash(0), tool.Args{"command": "echo started; sleep 300"})
	ctx, cancel := context.WithCancel(context.Background())
	res := p.Run(ctx, func(line string) {
		if line == "started" {
			cancel()
		}
	})
	if !res.IsError || res.Output != "started\n[command interrupted; its process group was killed]" {
		t.Fatalf("got %q error=%v", res.Output, res.IsError)
	}
}

func TestBashBackgroundChildHoldingPipeDoesNotHang(t *testing.T) {
	// The shell exits at once; sleep keeps stdout open. The tool must return
	// well before the 300 s sleep or the 60 s tool timeout.
	b := newBash(60 * time.Second)
	res := call(t, b, tool.Args{"command": "sleep 300 & echo bg=$!"})
	if res.IsError || !strings.HasPrefix(res.Output, "bg=") {
		t.Fatalf("got %q error=%v", res.Output, res.IsError)
	}
	pid, _ := strconv.Atoi(strings.TrimPrefix(res.Output, "bg="))
	if pid > 0 {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// A command that prints far more than any result can hold keeps only a
// bounded head and tail in memory, with a note of what was dropped, and a
// line without newlines is streamed in bounded pieces.
func TestBashOutputIsBounded(t *testing.T) {
	b := newBash(0)
	p := prepare(t, b, tool.Args{"command": "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo END"})
	longest := 0
	res := p.Run(context.Background(), func(chunk string) { longest = max(longest, len(chunk)) })
	if res.IsError || !strings.Contains(res.Output, "bytes of output dropped") || !strings.HasSuffix(res.Output, "END") {
		t.Fatalf("output not bounded as expected: %d bytes, ends %q", len(res.Output), res.Output[max(0, len(res.Output)-40):])
	}
	if len(res.Output) > tool.DefaultCaptureBytes+200 {
		t.Fatalf("kept %d bytes", len(res.Output))
	}
	if longest > 2*maxPendingLine {
		t.Fatalf("streamed a %d-byte chunk", longest)
	}
}
