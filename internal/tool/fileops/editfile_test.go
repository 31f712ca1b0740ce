package fileops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"turnstone/internal/tool"
)

// readyEdit writes content to a fresh file, marks it read and returns the
// tool and the path.
func readyEdit(t *testing.T, content string) (*EditFile, string) {
	t.Helper()
	path := writeFile(t, filepath.Join(t.TempDir(), "f.txt"), content)
	rs := NewReadSet()
	rs.Add(Realpath(path))
	return NewEditFile(schemas.MustSpec("edit_file"), rs), path
}

func TestEditFileValidation(t *testing.T) {
	dir := t.TempDir()
	unread := writeFile(t, filepath.Join(dir, "unread.txt"), "x")
	e, path := readyEdit(t, "alpha\nbeta\nalpha\ngamma\naaa\n")
	missing := filepath.Join(filepath.Dir(path), "gone.txt")
	e.read.Add(Realpath(missing))
	tests := []struct {
		name   string
		tool   *EditFile
		args   tool.Args
		header string
		err    string
	}{
		{"missing path", e, tool.Args{"old_string": "a"}, "✗ edit_file: missing path", "Error: missing path"},
		{"missing old_string", e, tool.Args{"path": path}, "✗ edit_file: missing old_string", "Error: missing old_string"},
		{"not read", NewEditFile(schemas.MustSpec("edit_file"), NewReadSet()), tool.Args{"path": unread, "old_string": "x"},
			"✗ edit_file: file not read", "Error: must read_file " + unread + " before editing it"},
		{"not found", e, tool.Args{"path": path, "old_string": "delta"}, "✗ edit_file: not found", "Error: old_string not found in " + path},
		{"ambiguous", e, tool.Args{"path": path, "old_string": "alpha"}, "✗ edit_file: ambiguous",
			"Error: old_string found 2 times at lines 1, 3 — use near_line to pick one"},
		{"overlapping matches count", e, tool.Args{"path": path, "old_string": "aa"}, "✗ edit_file: ambiguous",
			"Error: old_string found 2 times at lines 5, 5 — use near_line to pick one"},
		{"unparseable near_line is absent", e, tool.Args{"path": path, "old_string": "alpha", "near_line": "soon"}, "✗ edit_file: ambiguous",
			"Error: old_string found 2 times at lines 1, 3 — use near_line to pick one"},
		{"file missing", e, tool.Args{"path": missing, "old_string": "x"}, "✗ edit_file: not found", "Error: " + missing + " not found"},
		{"ok", e, tool.Args{"path": path, "old_string": "beta", "new_string": "b"}, "⚙ edit_file: " + path, ""},
		{"near_line picks", e, tool.Args{"path": path, "old_string": "alpha", "near_line": "3"}, "⚙ edit_file: " + path, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, tc.tool, tc.args)
			if p.Header != tc.header || p.Err != tc.err {
				t.Fatalf("got %q %q\nwant %q %q", p.Header, p.Err, tc.header, tc.err)
			}
			if (tc.err == "") != p.NeedsApproval || (tc.err == "" && p.ApprovalLabel != "edit_file") {
				t.Fatalf("approval %v %q", p.NeedsApproval, p.ApprovalLabel)
			}
		})
	}
}

func TestEditFilePreview(t *testing.T) {
	e, path := readyEdit(t, "one\ntwo\n"+strings.Repeat("z", 300))
	p := prepare(t, e, tool.Args{"path": path, "old_string": "one\ntwo", "new_string": "1\n2"})
	want := tool.Preview{{Style: tool.StyleRed, Text: "- one"}, {Style: tool.StyleRed, Text: "- two"},
		{Style: tool.StyleGreen, Text: "+ 1"}, {Style: tool.StyleGreen, Text: "+ 2"}}
	if p.Preview.String() != want.String() || p.Preview[0] != want[0] || p.Preview[3] != want[3] {
		t.Fatalf("preview %+v", p.Preview)
	}
	p = prepare(t, e, tool.Args{"path": path, "old_string": strings.Repeat("z", 300), "new_string": ""})
	if len(p.Preview) != 2 || p.Preview[0].Text != "- "+strings.Repeat("z", 200)+"..." ||
		p.Preview[1] != (tool.Line{Style: tool.StyleYellow, Text: "(deletion — 300 chars removed)"}) {
		t.Fatalf("deletion preview %+v", p.Preview)
	}
}

func TestEditFileRun(t *testing.T) {
	tests := []struct {
		name, content string
		args          tool.Args
		want          string
	}{
		{"single", "a\nb\nc\n", tool.Args{"old_string": "b", "new_string": "B"}, "a\nB\nc\n"},
		{"deletion", "a\nb\nc\n", tool.Args{"old_string": "b\n"}, "a\nc\n"},
		{"near_line nearest", "x\nx\nx\nx\n", tool.Args{"old_string": "x", "new_string": "y", "near_line": 3.0}, "x\nx\ny\nx\n"},
		{"near_line tie goes to earliest", "x\n\nx\n", tool.Args{"old_string": "x", "new_string": "y", "near_line": 2.0}, "y\n\nx\n"},
		{"near_line with one match", "x\n", tool.Args{"old_string": "x", "new_string": "y", "near_line": 50.0}, "y\n"},
		{"crlf: LF strings match and are written as CRLF", "one\r\ntwo\r\nthree\r\n",
			tool.Args{"old_string": "one\ntwo", "new_string": "1\n2\n2b"}, "1\r\n2\r\n2b\r\nthree\r\n"},
		{"crlf: CRLF strings work too", "one\r\ntwo\r\n", tool.Args{"old_string": "one\r\ntwo", "new_string": "x\r\ny"}, "x\r\ny\r\n"},
		{"lf file: CRLF strings are matched as LF", "one\ntwo\n", tool.Args{"old_string": "one\r\ntwo", "new_string": "x\r\ny"}, "x\ny\n"},
		{"mixed endings fall back to the literal string", "a\r\nb\r\nc\nd\r\n", tool.Args{"old_string": "c\nd", "new_string": "C\nD"}, "a\r\nb\r\nC\nD\r\n"},
		{"binary bytes kept", "\x00\xff\r\nkey=1\r\n\xfe", tool.Args{"old_string": "key=1", "new_string": "key=2"}, "\x00\xff\r\nkey=2\r\n\xfe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, path := readyEdit(t, tc.content)
			args := tool.Args{"path": path}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, e, args)
			if res.Output != "Edited "+path+": replaced 1 occurrence" || res.IsError {
				t.Fatalf("got %q", res.Output)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Fatalf("content %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEditFileRecheckAtRun(t *testing.T) {
	e, path := readyEdit(t, "a\nb\n")
	p := prepare(t, e, tool.Args{"path": path, "old_string": "b", "new_string": "c"})
	writeFile(t, path, "a\n")
	if res := p.Run(t.Context(), nil); res.Output != "Error: old_string no longer found in "+path+" (file changed)" || !res.IsError {
		t.Fatalf("got %q", res.Output)
	}
	p = prepare(t, e, tool.Args{"path": path, "old_string": "a", "new_string": "c"})
	writeFile(t, path, "a\na\n")
	want := "Error: old_string found 2 times at lines 1, 2 — use near_line to pick one (file changed)"
	if res := p.Run(t.Context(), nil); res.Output != want || !res.IsError {
		t.Fatalf("got %q", res.Output)
	}
	p = prepare(t, e, tool.Args{"path": path, "old_string": "a", "new_string": "c", "near_line": 2.0})
	if res := p.Run(t.Context(), nil); res.IsError {
		t.Fatalf("got %q", res.Output)
	}
	if got, _ := os.ReadFile(path); string(got) != "a\nc\n" {
		t.Fatalf("content %q", got)
	}
}

func TestEditFileKeepsModeAndSameBatchRead(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, filepath.Join(dir, "s.sh"), "echo a\n")
	if err := os.Chmod(path, 0o750); err != nil {
		t.Fatal(err)
	}
	rs := NewReadSet()
	r := NewReadFile(schemas.MustSpec("read_file"), rs, ReadFileOptions{})
	e := NewEditFile(schemas.MustSpec("edit_file"), rs)
	// read_file prepared in the same batch lets the edit pass its guard.
	prepare(t, r, tool.Args{"path": path})
	p := prepare(t, e, tool.Args{"path": path, "old_string": "a", "new_string": "b"})
	if p.Err != "" {
		t.Fatal(p.Err)
	}
	p.Run(t.Context(), nil)
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o750 {
		t.Fatalf("mode %v", st.Mode())
	}
}
