package fileops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// MaxVisionImage is the largest image sent to a vision model (4 MiB).
const MaxVisionImage = 4 << 20

// sniffLen is how much of a file the binary check looks at.
const sniffLen = 8 << 10

// imageTypes maps image extensions (lower case) to media types. SVG is text.
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".tiff": "image/tiff", ".tif": "image/tiff",
	".ico": "image/vnd.microsoft.icon",
}

// ReadFileOptions configures read_file.
type ReadFileOptions struct {
	// Vision reports whether the current model accepts images; nil means no.
	// It is asked on every call because /model can change the answer.
	Vision func() bool
}

// ReadFile returns a file's lines, numbered (behavior.md §2.3).
type ReadFile struct {
	spec tool.Spec
	read *ReadSet
	opts ReadFileOptions
}

var _ tool.Tool = (*ReadFile)(nil)

// NewReadFile builds read_file; read is the session's shared read set.
func NewReadFile(spec tool.Spec, read *ReadSet, opts ReadFileOptions) *ReadFile {
	return &ReadFile{spec: spec, read: read, opts: opts}
}

// Spec returns the tool's schema.
func (r *ReadFile) Spec() tool.Spec { return r.spec }

// Prepare validates the arguments and adds the file to the read set now, so
// an edit_file in the same batch passes its guard.
func (r *ReadFile) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	raw := call.Args.String("path")
	if raw == "" {
		return tool.Fail(failHeader("read_file", "missing path"), "Error: missing path")
	}
	offset, hasOff, errOff := call.Args.Int("offset")
	limit, hasLim, errLim := call.Args.Int("limit")
	if errOff != nil || errLim != nil {
		return tool.Fail(failHeader("read_file", "bad offset/limit"),
			fmt.Sprintf("Error: offset/limit must be integers (got offset=%s, limit=%s)",
				argText(call.Args, "offset"), argText(call.Args, "limit")))
	}
	if hasOff && offset < 1 {
		return tool.Fail(failHeader("read_file", "bad offset"), fmt.Sprintf("Error: offset must be >= 1 (got %d)", offset))
	}
	if hasLim && limit < 1 {
		return tool.Fail(failHeader("read_file", "bad limit"), fmt.Sprintf("Error: limit must be >= 1 (got %d)", limit))
	}
	path := ExpandHome(raw)
	header := okHeader("read_file", path)
	switch {
	case hasOff && hasLim:
		header += fmt.Sprintf(" (lines %d-%d)", offset, offset+limit-1)
	case hasOff:
		header += fmt.Sprintf(" (from line %d)", offset)
	case hasLim:
		header += fmt.Sprintf(" (lines 1-%d)", limit)
	}
	real := Realpath(path)
	r.read.Add(real)
	w := window{offset: 1, limit: -1, given: hasOff || hasLim}
	if hasOff {
		w.offset = offset
	}
	if hasLim {
		w.limit = limit
	}
	return &tool.Prepared{
		Header: header,
		Run: func(context.Context, tool.Emit) tool.Result {
			res, keep := r.run(path, w)
			if !keep {
				r.read.Remove(real)
			}
			return res
		},
	}
}

func argText(a tool.Args, key string) string {
	if !a.Has(key) {
		return "None"
	}
	return a.String(key)
}

// window is the requested slice of lines: [offset-1 : offset-1+limit];
// limit -1 means to the end.
type window struct {
	offset, limit int
	given         bool
}

// run reads the file; keep is false when the path must leave the read set
// (the content was not shown).
func (r *ReadFile) run(path string, w window) (tool.Result, bool) {
	// Opening a FIFO blocks until a writer appears and cannot be
	// cancelled, so special files are refused before the open.
	if err := notSpecial(path); err != nil {
		return tool.ErrorResult(fmt.Sprintf("Error reading %s: %v", path, err)), false
	}
	f, err := os.Open(path)
	if err != nil {
		return openError(path, err), false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return tool.ErrorResult(fmt.Sprintf("Error reading %s: %s", path, describeErr(err))), false
	}
	if st.IsDir() {
		return tool.ErrorResult(fmt.Sprintf("Error reading %s: is a directory (use bash ls or search to look inside it)", path)), false
	}
	if mt, ok := imageTypes[strings.ToLower(filepath.Ext(path))]; ok {
		return r.image(f, path, st.Size(), mt)
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return tool.ErrorResult(fmt.Sprintf("Error reading %s: %s", path, describeErr(err))), false
	}
	head = head[:n]
	if kind, bin := sniffBinary(head, n < sniffLen); bin {
		return binaryResult(path, st.Size(), kind), false
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.ErrorResult(fmt.Sprintf("Error reading %s: %s", path, describeErr(err))), false
	}
	lines, total, badUTF8, err := readLines(f, w)
	if err != nil {
		return tool.ErrorResult(fmt.Sprintf("Error reading %s: %s", path, describeErr(err))), false
	}
	if badUTF8 {
		return binaryResult(path, st.Size(), "not valid UTF-8 text"), false
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%4d\t%s", w.offset+i, l)
	}
	out := b.String()
	if out == "" {
		out = "(empty file)"
	}
	summary := fmt.Sprintf("%d lines", len(lines))
	switch {
	case w.given && len(lines) == 0:
		summary += fmt.Sprintf(" (offset %d is past the last line, %d)", w.offset, total)
	case w.given:
		summary += fmt.Sprintf(" (lines %d-%d of %d)", w.offset, w.offset+len(lines)-1, total)
	}
	return tool.Result{Output: out, Summary: summary}, true
}

func openError(path string, err error) tool.Result {
	if errors.Is(err, fs.ErrNotExist) {
		return tool.ErrorResult(fmt.Sprintf("Error: %s not found", path))
	}
	return tool.ErrorResult(fmt.Sprintf("Error reading %s: %s", path, describeErr(err)))
}

func (r *ReadFile) image(f *os.File, path string, size int64, mediaType string) (tool.Result, bool) {
	if r.opts.Vision == nil || !r.opts.Vision() {
		return tool.Result{
			Output:  fmt.Sprintf("Binary image file: %s (%s bytes). Current model does not support vision.", path, commas(size)),
			Summary: fmt.Sprintf("image (no vision, %d bytes)", size),
		}, true
	}
	if size > MaxVisionImage {
		return tool.ErrorResult(fmt.Sprintf("Error: image %s is %.1f MB, exceeds 4 MB limit for vision.", path, float64(size)/(1<<20))), false
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxVisionImage+1))
	if err != nil {
		return tool.ErrorResult(fmt.Sprintf("Error reading %s: %s", path, describeErr(err))), false
	}
	text := fmt.Sprintf("Image file: %s (%s bytes)", path, commas(int64(len(data))))
	return tool.Result{
		Output: text,
		Parts: []llm.Part{
			{Type: llm.PartText, Text: text},
			{Type: llm.PartImage, MediaType: mediaType, Data: data},
		},
		Summary: fmt.Sprintf("image (%d bytes)", len(data)),
	}, true
}

func binaryResult(path string, size int64, kind string) tool.Result {
	return tool.Result{
		Output: fmt.Sprintf("Binary file: %s (%s bytes, %s); not shown. Use bash tools such as xxd or file to inspect it.",
			path, commas(size), kind),
		Summary: fmt.Sprintf("binary (%d bytes)", size),
	}
}

// sniffBinary reports whether head (the first bytes of a file; whole is set
// when it is the entire file) looks binary: a NUL byte, or bytes that are not
// UTF-8. kind is a guess at what the file is.
func sniffBinary(head []byte, whole bool) (kind string, binary bool) {
	valid := head
	if !whole {
		// A multi-byte character may be cut at the end of the sample.
		for i := 0; i < utf8.UTFMax-1 && len(valid) > 0; i++ {
			if utf8.Valid(valid) {
				break
			}
			valid = valid[:len(valid)-1]
		}
	}
	if bytes.IndexByte(head, 0) < 0 && utf8.Valid(valid) {
		return "", false
	}
	return guessType(head), true
}

// magic names formats http.DetectContentType does not know.
var magic = []struct{ prefix, name string }{
	{"\x7fELF", "ELF executable"},
	{"SQLite format 3\x00", "SQLite database"},
	{"\xfe\xed\xfa", "Mach-O executable"},
	{"\xcf\xfa\xed\xfe", "Mach-O executable"},
	{"MZ", "Windows executable"},
	{"\x00asm", "WebAssembly module"},
	{"!<arch>\n", "ar archive"},
	{"\xca\xfe\xba\xbe", "Java class or Mach-O universal binary"},
	{"\xfd7zXZ\x00", "xz archive"},
	{"BZh", "bzip2 archive"},
	{"(\xb5/\xfd", "zstd archive"},
}

func guessType(head []byte) string {
	for _, m := range magic {
		if bytes.HasPrefix(head, []byte(m.prefix)) {
			return m.name
		}
	}
	ct := http.DetectContentType(head)
	if strings.HasPrefix(ct, "text/plain") && !strings.Contains(ct, "utf-16") {
		return "not valid UTF-8 text"
	}
	return ct
}

// readLines streams the file and returns the lines of window w, trailing
// whitespace stripped, plus the total line count. Lines outside the window
// are only counted, so an offset/limit read of a huge file stays small.
// Universal newlines: "\r\n", "\r" and "\n" each end a line.
func readLines(r io.Reader, w window) (lines []string, total int, badUTF8 bool, err error) {
	first := w.offset - 1
	inWindow := func(i int) bool { return i >= first && (w.limit < 0 || i < first+w.limit) }
	buf := make([]byte, 64<<10)
	var cur []byte   // the current line, only when it is in the window
	partial := false // a line has started but not ended
	afterCR := false // the previous chunk ended in '\r'
	end := func() {
		if inWindow(total) {
			if !utf8.Valid(cur) {
				badUTF8 = true
			}
			lines = append(lines, strings.TrimRightFunc(string(cur), unicode.IsSpace))
		}
		cur = cur[:0]
		partial = false
		total++
	}
	for {
		n, rerr := r.Read(buf)
		chunk := buf[:n]
		if afterCR && len(chunk) > 0 && chunk[0] == '\n' {
			chunk = chunk[1:]
		}
		if n > 0 {
			afterCR = false
		}
		for len(chunk) > 0 {
			i := bytes.IndexAny(chunk, "\r\n")
			if i < 0 {
				if inWindow(total) {
					cur = append(cur, chunk...)
				}
				partial = true
				break
			}
			if inWindow(total) {
				cur = append(cur, chunk[:i]...)
			}
			step := i + 1
			if chunk[i] == '\r' {
				if i+1 < len(chunk) && chunk[i+1] == '\n' {
					step++
				} else if i+1 == len(chunk) {
					afterCR = true
				}
			}
			end()
			chunk = chunk[step:]
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, 0, false, rerr
		}
	}
	if partial {
		end()
	}
	return lines, total, badUTF8, nil
}
