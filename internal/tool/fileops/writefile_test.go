package fileops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"turnstone/internal/tool"
)

func TestWriteFilePrepare(t *testing.T) {
	dir := t.TempDir()
	existing := writeFile(t, filepath.Join(dir, "old.txt"), "old")
	readOne := writeFile(t, filepath.Join(dir, "read.txt"), "old")
	rs := NewReadSet()
	rs.Add(Realpath(readOne))
	w := NewWriteFile(schemas.MustSpec("write_file"), rs)
	long := strings.Repeat("é", 600)
	tests := []struct {
		name    string
		args    tool.Args
		header  string
		label   string
		preview []tool.Line
		err     string
	}{
		{"missing path", tool.Args{"content": "x"}, "✗ write_file: missing path", "", nil, "Error: missing path"},
		{"new file", tool.Args{"path": filepath.Join(dir, "new.txt"), "content": "a\nb"},
			"⚙ write_file: " + filepath.Join(dir, "new.txt") + " (3 chars)", "write_file",
			[]tool.Line{{Text: "    a"}, {Text: "    b"}}, ""},
		{"missing content is empty", tool.Args{"path": filepath.Join(dir, "e.txt")},
			"⚙ write_file: " + filepath.Join(dir, "e.txt") + " (0 chars)", "write_file", []tool.Line{{Text: "    "}}, ""},
		{"existing unread", tool.Args{"path": existing, "content": "x"},
			"⚙ write_file: " + existing + " (1 chars)", "overwrite_file",
			[]tool.Line{{Style: tool.StyleYellow, Text: "Warning: " + existing + " exists and was not read in this session; it will be overwritten"}, {Text: "    x"}}, ""},
		{"existing read", tool.Args{"path": readOne, "content": "x"},
			"⚙ write_file: " + readOne + " (1 chars)", "write_file", []tool.Line{{Text: "    x"}}, ""},
		{"long content", tool.Args{"path": filepath.Join(dir, "l.txt"), "content": long},
			"⚙ write_file: " + filepath.Join(dir, "l.txt") + " (600 chars)", "write_file",
			[]tool.Line{{Text: "    " + strings.Repeat("é", 500)}, {Text: "... (600 chars total)"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, w, tc.args)
			if p.Header != tc.header || p.Err != tc.err || p.ApprovalLabel != tc.label {
				t.Fatalf("got %q %q %q", p.Header, p.Err, p.ApprovalLabel)
			}
			if tc.err == "" && !p.NeedsApproval {
				t.Fatal("write_file needs approval")
			}
			if len(p.Preview) != len(tc.preview) {
				t.Fatalf("preview %+v", p.Preview)
			}
			for i := range p.Preview {
				if p.Preview[i] != tc.preview[i] {
					t.Fatalf("preview line %d: %+v, want %+v", i, p.Preview[i], tc.preview[i])
				}
			}
		})
	}
}

func TestWriteFileRun(t *testing.T) {
	dir := t.TempDir()
	rs := NewReadSet()
	w := NewWriteFile(schemas.MustSpec("write_file"), rs)
	path := filepath.Join(dir, "a", "b", "c.txt")
	res := call(t, w, tool.Args{"path": path, "content": "héllo\r\n"})
	if res.Output != "Wrote 7 chars to "+path || res.IsError {
		t.Fatalf("got %q", res.Output)
	}
	if got, _ := os.ReadFile(path); string(got) != "héllo\r\n" {
		t.Fatalf("content %q", got)
	}
	if !rs.Contains(Realpath(path)) {
		t.Fatal("written file must join the read set")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v", st.Mode())
	}
	// Overwriting keeps the mode and leaves no temporary files.
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	call(t, w, tool.Args{"path": path, "content": "new"})
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o755 {
		t.Fatalf("mode not kept: %v", st.Mode())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("leftover files: %v", ents)
	}
	// A symlink is followed: the target changes, the link stays.
	target := writeFile(t, filepath.Join(dir, "target.txt"), "t")
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	call(t, w, tool.Args{"path": link, "content": "via link"})
	if got, _ := os.ReadFile(target); string(got) != "via link" {
		t.Fatalf("target %q", got)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced by a file")
	}
}

func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	w := NewWriteFile(schemas.MustSpec("write_file"), NewReadSet())
	blocker := writeFile(t, filepath.Join(dir, "file"), "x")
	res := call(t, w, tool.Args{"path": filepath.Join(blocker, "sub.txt"), "content": "x"})
	if !res.IsError || !strings.HasPrefix(res.Output, "Error writing "+filepath.Join(blocker, "sub.txt")+": ") {
		t.Fatalf("got %q", res.Output)
	}
	res = call(t, w, tool.Args{"path": dir, "content": "x"})
	if !res.IsError || res.Output != "Error writing "+dir+": not a regular file" {
		t.Fatalf("got %q", res.Output)
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		res = call(t, w, tool.Args{"path": filepath.Join(ro, "x.txt"), "content": "x"})
		if !res.IsError || !strings.Contains(res.Output, "permission denied") {
			t.Fatalf("got %q", res.Output)
		}
	}
}
