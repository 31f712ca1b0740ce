package fileops

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

func newReadFile(rs *ReadSet, vision bool) *ReadFile {
	return NewReadFile(schemas.MustSpec("read_file"), rs, ReadFileOptions{Vision: func() bool { return vision }})
}

func TestReadFileValidation(t *testing.T) {
	r := newReadFile(NewReadSet(), false)
	tests := []struct {
		name   string
		args   tool.Args
		header string
		err    string
	}{
		{"missing path", tool.Args{}, "✗ read_file: missing path", "Error: missing path"},
		{"bad offset", tool.Args{"path": "x", "offset": "abc"}, "✗ read_file: bad offset/limit",
			"Error: offset/limit must be integers (got offset=abc, limit=None)"},
		{"bad limit", tool.Args{"path": "x", "limit": true}, "✗ read_file: bad offset/limit",
			"Error: offset/limit must be integers (got offset=None, limit=true)"},
		{"offset zero", tool.Args{"path": "x", "offset": 0.0}, "✗ read_file: bad offset", "Error: offset must be >= 1 (got 0)"},
		{"limit negative", tool.Args{"path": "x", "limit": "-2"}, "✗ read_file: bad limit", "Error: limit must be >= 1 (got -2)"},
		{"plain", tool.Args{"path": "x"}, "⚙ read_file: x", ""},
		{"offset and limit", tool.Args{"path": "x", "offset": 3.7, "limit": "5"}, "⚙ read_file: x (lines 3-7)", ""},
		{"offset only", tool.Args{"path": "x", "offset": 10.0}, "⚙ read_file: x (from line 10)", ""},
		{"limit only", tool.Args{"path": "x", "limit": 4.0}, "⚙ read_file: x (lines 1-4)", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, r, tc.args)
			if p.Header != tc.header || p.Err != tc.err || p.NeedsApproval {
				t.Fatalf("got %q %q approval=%v", p.Header, p.Err, p.NeedsApproval)
			}
		})
	}
}

func TestReadFileText(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		args          tool.Args
		want, summary string
	}{
		{"numbered", "a\nb\n", nil, "   1\ta\n   2\tb", "2 lines"},
		{"no final newline", "a\nb", nil, "   1\ta\n   2\tb", "2 lines"},
		{"universal newlines", "a\r\nb\rc\n", nil, "   1\ta\n   2\tb\n   3\tc", "3 lines"},
		{"trailing whitespace stripped", "a  \t\nb\u00a0\n", nil, "   1\ta\n   2\tb", "2 lines"},
		{"leading whitespace kept", "\tx\n", nil, "   1\t\tx", "1 lines"},
		{"empty file", "", nil, "(empty file)", "0 lines"},
		{"offset past end", "a\n", tool.Args{"offset": 5.0}, "(empty file)", "0 lines (offset 5 is past the last line, 1)"},
		{"offset and limit", "1\n2\n3\n4\n5\n", tool.Args{"offset": 2.0, "limit": 2.0}, "   2\t2\n   3\t3", "2 lines (lines 2-3 of 5)"},
		{"limit beyond end", "1\n2\n", tool.Args{"limit": 10.0}, "   1\t1\n   2\t2", "2 lines (lines 1-2 of 2)"},
		{"wide numbers keep tab", strings.Repeat("x\n", 10000), tool.Args{"offset": 10000.0}, "10000\tx", "1 lines (lines 10000-10000 of 10000)"},
		{"svg is text", "<svg/>\n", nil, "   1\t<svg/>", "1 lines"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("f%d.txt", i)
			if tc.name == "svg is text" {
				name = "x.svg"
			}
			path := writeFile(t, filepath.Join(dir, name), tc.content)
			args := tool.Args{"path": path}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, newReadFile(NewReadSet(), false), args)
			if res.Output != tc.want || res.Summary != tc.summary || res.IsError {
				t.Fatalf("got %q / %q (error %v), want %q / %q", res.Output, res.Summary, res.IsError, tc.want, tc.summary)
			}
		})
	}
}

func TestReadFileLongLinesAcrossChunks(t *testing.T) {
	// A CRLF split across the 64 KB read boundary is one line end.
	line := strings.Repeat("y", 64<<10-1)
	path := writeFile(t, filepath.Join(t.TempDir(), "long.txt"), line+"\r\n"+"z\n")
	res := call(t, newReadFile(NewReadSet(), false), tool.Args{"path": path, "offset": 2.0})
	if res.Output != "   2\tz" || res.Summary != "1 lines (lines 2-2 of 2)" {
		t.Fatalf("got %q %q", res.Output, res.Summary)
	}
}

func TestReadFileErrorsAndReadSet(t *testing.T) {
	dir := t.TempDir()
	rs := NewReadSet()
	r := newReadFile(rs, false)
	missing := filepath.Join(dir, "nope.txt")
	p := prepare(t, r, tool.Args{"path": missing})
	if !rs.Contains(Realpath(missing)) {
		t.Fatal("prepare must add the path to the read set")
	}
	res := p.Run(t.Context(), nil)
	if res.Output != "Error: "+missing+" not found" || !res.IsError {
		t.Fatalf("got %q", res.Output)
	}
	if rs.Contains(Realpath(missing)) {
		t.Fatal("a failed read must leave the read set")
	}
	res = call(t, r, tool.Args{"path": dir})
	if !res.IsError || !strings.HasPrefix(res.Output, "Error reading "+dir+": is a directory") {
		t.Fatalf("got %q", res.Output)
	}
	ok := writeFile(t, filepath.Join(dir, "ok.txt"), "x")
	call(t, r, tool.Args{"path": ok})
	if !rs.Contains(Realpath(ok)) {
		t.Fatal("a successful read stays in the read set")
	}
}

func TestReadFileHomeExpansion(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(home, "h.txt"), "home\n")
	res := call(t, newReadFile(NewReadSet(), false), tool.Args{"path": "~/h.txt"})
	if res.Output != "   1\thome" {
		t.Fatalf("got %q", res.Output)
	}
}

func TestReadFileBinary(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content []byte
		kind    string
	}{
		{"nul byte", []byte("abc\x00def"), "application/octet-stream"},
		{"elf", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 20)...), "ELF executable"},
		{"latin-1 text", []byte("caf\xe9 au lait\n"), "not valid UTF-8 text"},
		{"invalid utf8 after the sniffed prefix", append(bytes.Repeat([]byte("ok\n"), 4000), 0xff, '\n'), "not valid UTF-8 text"},
		{"pdf", []byte("%PDF-1.4\n\x00\x01"), "application/pdf"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("b%d.bin", i))
			if err := os.WriteFile(path, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			rs := NewReadSet()
			res := call(t, newReadFile(rs, false), tool.Args{"path": path})
			want := fmt.Sprintf("Binary file: %s (%s bytes, %s); not shown. Use bash tools such as xxd or file to inspect it.",
				path, commas(int64(len(tc.content))), tc.kind)
			if res.Output != want || res.IsError {
				t.Fatalf("got %q (error %v)\nwant %q", res.Output, res.IsError, want)
			}
			if rs.Contains(Realpath(path)) {
				t.Fatal("an unshown binary file must not count as read")
			}
		})
	}
	// A multi-byte character cut by the 8 KB sample is still text.
	text := strings.Repeat("a", sniffLen-1) + "é\n"
	path := writeFile(t, filepath.Join(dir, "utf8.txt"), text)
	if res := call(t, newReadFile(NewReadSet(), false), tool.Args{"path": path}); strings.HasPrefix(res.Output, "Binary") {
		t.Fatalf("valid UTF-8 reported binary: %q", res.Output[:40])
	}
}

func TestReadFileImages(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "pic.PNG")
	data := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 1200)...)
	if err := os.WriteFile(png, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, newReadFile(NewReadSet(), false), tool.Args{"path": png})
	if res.Output != "Binary image file: "+png+" (1,208 bytes). Current model does not support vision." ||
		res.Summary != "image (no vision, 1208 bytes)" || res.IsError || res.Parts != nil {
		t.Fatalf("no vision: %+v", res)
	}
	res = call(t, newReadFile(NewReadSet(), true), tool.Args{"path": png})
	if len(res.Parts) != 2 || res.Parts[0].Type != llm.PartText || res.Parts[0].Text != "Image file: "+png+" (1,208 bytes)" ||
		res.Parts[1].Type != llm.PartImage || res.Parts[1].MediaType != "image/png" || !bytes.Equal(res.Parts[1].Data, data) ||
		res.Summary != "image (1208 bytes)" {
		t.Fatalf("vision: %+v", res.Parts)
	}
	ico := filepath.Join(dir, "f.ico")
	writeFile(t, ico, "ico")
	if res := call(t, newReadFile(NewReadSet(), true), tool.Args{"path": ico}); res.Parts[1].MediaType != "image/vnd.microsoft.icon" {
		t.Fatalf("ico media type %q", res.Parts[1].MediaType)
	}
	big := filepath.Join(dir, "big.jpg")
	if err := os.WriteFile(big, make([]byte, MaxVisionImage+100000), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := NewReadSet()
	res = call(t, newReadFile(rs, true), tool.Args{"path": big})
	if res.Output != "Error: image "+big+" is 4.1 MB, exceeds 4 MB limit for vision." || !res.IsError {
		t.Fatalf("big: %q", res.Output)
	}
	if rs.Contains(Realpath(big)) {
		t.Fatal("a rejected image must leave the read set")
	}
	// Without vision there is no size cap.
	if res := call(t, newReadFile(NewReadSet(), false), tool.Args{"path": big}); res.IsError {
		t.Fatalf("no vision, big: %q", res.Output)
	}
	// A nil Vision means no vision.
	r := NewReadFile(schemas.MustSpec("read_file"), NewReadSet(), ReadFileOptions{})
	if res := call(t, r, tool.Args{"path": png}); !strings.HasPrefix(res.Output, "Binary image file:") {
		t.Fatalf("nil vision: %q", res.Output)
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

// A named pipe with no writer would block open forever; it is refused.
func TestReadFileRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	rs := NewReadSet()
	rf := NewReadFile(tool.MustLoadSchemas().MustSpec("read_file"), rs, ReadFileOptions{})
	pr := rf.Prepare(context.Background(), tool.Call{Args: tool.Args{"path": p}})
	if pr.Err != "" {
		t.Fatal(pr.Err)
	}
	res := pr.Run(context.Background(), nil)
	if !res.IsError || !strings.Contains(res.Output, "named pipe") {
		t.Fatalf("got %+v", res)
	}
	rs.Add(Realpath(p)) // as if it had been read: reach edit_file's own check
	ef := NewEditFile(tool.MustLoadSchemas().MustSpec("edit_file"), rs)
	ep := ef.Prepare(context.Background(), tool.Call{Args: tool.Args{"path": p, "old_string": "a", "new_string": "b"}})
	if !strings.Contains(ep.Err, "named pipe") {
		t.Fatalf("edit_file on a FIFO: %+v", ep)
	}
}
