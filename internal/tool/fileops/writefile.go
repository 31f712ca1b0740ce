package fileops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"turnstone/internal/tool"
)

// newFileMode is the mode of a file write_file creates (0666 less the usual
// umask 022, what Python's open() gives by default).
const newFileMode fs.FileMode = 0o644

// WriteFile creates or overwrites a file (behavior.md §2.4).
type WriteFile struct {
	spec tool.Spec
	read *ReadSet
}

var _ tool.Tool = (*WriteFile)(nil)

// NewWriteFile builds write_file; read is the session's shared read set.
func NewWriteFile(spec tool.Spec, read *ReadSet) *WriteFile {
	return &WriteFile{spec: spec, read: read}
}

// Spec returns the tool's schema.
func (w *WriteFile) Spec() tool.Spec { return w.spec }

// Prepare decides the approval label: overwrite_file when the file exists and
// was not read in this session.
func (w *WriteFile) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	raw := call.Args.String("path")
	if raw == "" {
		return tool.Fail(failHeader("write_file", "missing path"), "Error: missing path")
	}
	content := call.Args.String("content")
	path := ExpandHome(raw)
	real := Realpath(path)
	n := runeLen(content)
	_, statErr := os.Stat(path)
	overwrite := statErr == nil && !w.read.Contains(real)

	var preview tool.Preview
	label := "write_file"
	if overwrite {
		label = "overwrite_file"
		preview = append(preview, tool.Line{Style: tool.StyleYellow,
			Text: fmt.Sprintf("Warning: %s exists and was not read in this session; it will be overwritten", path)})
	}
	head, cut := runeHead(content, 500)
	for _, l := range strings.Split(head, "\n") {
		preview = append(preview, tool.Line{Text: "    " + l})
	}
	if cut {
		preview = append(preview, tool.Line{Text: fmt.Sprintf("... (%d chars total)", n)})
	}
	return &tool.Prepared{
		Header:        okHeader("write_file", fmt.Sprintf("%s (%d chars)", path, n)),
		Preview:       preview,
		NeedsApproval: true,
		ApprovalLabel: label,
		Run: func(context.Context, tool.Emit) tool.Result {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return tool.ErrorResult(fmt.Sprintf("Error writing %s: %s", path, describeErr(err)))
			}
			if err := writeAtomic(path, []byte(content)); err != nil {
				return tool.ErrorResult(fmt.Sprintf("Error writing %s: %s", path, describeErr(err)))
			}
			w.read.Add(Realpath(path))
			return tool.Result{Output: fmt.Sprintf("Wrote %d chars to %s", n, path), Summary: fmt.Sprintf("wrote %d chars", n)}
		},
	}
}

// writeAtomic replaces the file at path with data so that a crash or a full
// disk leaves either the old content or the new, never half of it: the data
// goes to a temporary file in the same directory, is synced, and is renamed
// over the target. A symlink is followed (its target is replaced, the link
// kept); an existing file keeps its permission bits. Hard links to the old
// file keep the old content — the price of atomicity.
func writeAtomic(path string, data []byte) error {
	target := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		target = r
	}
	mode := newFileMode
	if st, err := os.Stat(target); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("not a regular file")
		}
		mode = st.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		os.Remove(tmp.Name())
		done = true
		return err
	}
	done = true
	return nil
}
