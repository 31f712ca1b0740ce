package fileops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"turnstone/internal/tool"
)

// EditFile replaces one exact occurrence of a string (behavior.md §2.5).
type EditFile struct {
	spec tool.Spec
	read *ReadSet
}

var _ tool.Tool = (*EditFile)(nil)

// NewEditFile builds edit_file; read is the session's shared read set.
func NewEditFile(spec tool.Spec, read *ReadSet) *EditFile {
	return &EditFile{spec: spec, read: read}
}

// Spec returns the tool's schema.
func (e *EditFile) Spec() tool.Spec { return e.spec }

// Prepare checks the read guard and that old_string occurs exactly once (or
// near_line picks one); Run checks again against the file as it is then.
func (e *EditFile) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	raw := call.Args.String("path")
	if raw == "" {
		return tool.Fail(failHeader("edit_file", "missing path"), "Error: missing path")
	}
	oldS := call.Args.String("old_string")
	if oldS == "" {
		return tool.Fail(failHeader("edit_file", "missing old_string"), "Error: missing old_string")
	}
	newS := call.Args.String("new_string")
	near, hasNear, nearErr := call.Args.Int("near_line")
	if nearErr != nil {
		hasNear = false // an unparseable near_line counts as absent
	}
	path := ExpandHome(raw)
	if !e.read.Contains(Realpath(path)) {
		return tool.Fail(failHeader("edit_file", "file not read"), fmt.Sprintf("Error: must read_file %s before editing it", path))
	}
	ed := edit{path: path, old: oldS, new: newS, near: near, hasNear: hasNear}
	if _, msg, short := ed.apply(""); msg != "" {
		return tool.Fail(failHeader("edit_file", short), msg)
	}
	return &tool.Prepared{
		Header:        okHeader("edit_file", path),
		Preview:       editPreview(oldS, newS),
		NeedsApproval: true,
		ApprovalLabel: "edit_file",
		Run: func(context.Context, tool.Emit) tool.Result {
			out, msg, _ := ed.apply(" (file changed)")
			if msg != "" {
				return tool.ErrorResult(msg)
			}
			if err := writeAtomic(path, out); err != nil {
				return tool.ErrorResult(fmt.Sprintf("Error writing %s: %s", path, describeErr(err)))
			}
			return tool.Result{Output: fmt.Sprintf("Edited %s: replaced 1 occurrence", path), Summary: "replaced 1 occurrence"}
		},
	}
}

func editPreview(oldS, newS string) tool.Preview {
	var p tool.Preview
	add := func(style tool.Style, prefix, s string) {
		h, cut := runeHead(s, 200)
		if cut {
			h += "..."
		}
		for _, l := range strings.Split(h, "\n") {
			p = append(p, tool.Line{Style: style, Text: prefix + l})
		}
	}
	add(tool.StyleRed, "- ", oldS)
	if newS == "" {
		p = append(p, tool.Line{Style: tool.StyleYellow, Text: fmt.Sprintf("(deletion — %d chars removed)", runeLen(oldS))})
	} else {
		add(tool.StyleGreen, "+ ", newS)
	}
	return p
}

// edit is one requested replacement.
type edit struct {
	path, old, new string
	near           int
	hasNear        bool
}

// apply reads the file and returns its new content. On failure msg is the
// model text (with suffix added to the match-count messages) and short the
// header reason.
func (e edit) apply(suffix string) (out []byte, msg, short string) {
	if err := notSpecial(e.path); err != nil {
		return nil, fmt.Sprintf("Error editing %s: %v", e.path, err), "not a regular file"
	}
	data, err := os.ReadFile(e.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Sprintf("Error: %s not found", e.path), "not found"
		}
		return nil, fmt.Sprintf("Error editing %s: %s", e.path, describeErr(err)), "read failed"
	}
	oldB, newB := matchEOL(data, e.old, e.new)
	starts := findAll(data, oldB)
	switch {
	case len(starts) == 0 && suffix != "":
		return nil, fmt.Sprintf("Error: old_string no longer found in %s%s", e.path, suffix), "not found"
	case len(starts) == 0:
		return nil, fmt.Sprintf("Error: old_string not found in %s", e.path), "not found"
	case len(starts) > 1 && !e.hasNear:
		return nil, fmt.Sprintf("Error: old_string found %d times at lines %s — use near_line to pick one%s",
			len(starts), joinInts(lineNumbers(data, starts)), suffix), "ambiguous"
	}
	at := starts[0]
	if len(starts) > 1 {
		at = nearest(data, starts, e.near)
	}
	out = make([]byte, 0, len(data)-len(oldB)+len(newB))
	out = append(out, data[:at]...)
	out = append(out, newB...)
	out = append(out, data[at+len(oldB):]...)
	return out, "", ""
}

// matchEOL adapts old and new to the file's line endings: in a CRLF file the
// model's LF-only strings are matched and written as CRLF (and CRLF strings
// in an LF file as LF), so the untouched rest of the file stays byte-identical
// and no mixed endings appear. When the converted string is not found but the
// original is (a file with mixed endings), the original pair is used.
func matchEOL(data []byte, oldS, newS string) ([]byte, []byte) {
	var convOld, convNew string
	if usesCRLF(data) {
		convOld, convNew = toCRLF(oldS), toCRLF(newS)
	} else {
		convOld, convNew = strings.ReplaceAll(oldS, "\r\n", "\n"), strings.ReplaceAll(newS, "\r\n", "\n")
	}
	if convOld != oldS && !bytes.Contains(data, []byte(convOld)) && bytes.Contains(data, []byte(oldS)) {
		return []byte(oldS), []byte(newS)
	}
	return []byte(convOld), []byte(convNew)
}

// usesCRLF reports whether most of the file's line ends are CRLF.
func usesCRLF(data []byte) bool {
	lf := bytes.Count(data, []byte("\n"))
	crlf := bytes.Count(data, []byte("\r\n"))
	return crlf > 0 && crlf*2 >= lf
}

func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// findAll returns the start of every occurrence of sub, overlapping ones
// included ("aa" in "aaa" is found at 0 and 1).
func findAll(data, sub []byte) []int {
	var out []int
	for i := 0; ; {
		j := bytes.Index(data[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

func lineNumbers(data []byte, starts []int) []int {
	out := make([]int, len(starts))
	line, pos := 1, 0
	for k, s := range starts {
		line += bytes.Count(data[pos:s], []byte("\n"))
		pos = s
		out[k] = line
	}
	return out
}

// nearest is the occurrence whose starting line is closest to line; ties go
// to the earliest.
func nearest(data []byte, starts []int, line int) int {
	lines := lineNumbers(data, starts)
	best := 0
	for k := range lines {
		if abs(lines[k]-line) < abs(lines[best]-line) {
			best = k
		}
	}
	return starts[best]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
