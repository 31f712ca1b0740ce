// Package fileops holds the five file-operation tools (bash, read_file,
// write_file, edit_file, search) and the read set they share.
//
// Each tool is a value built by its constructor from its tool.Spec and the
// few options it uses; none of them asks for approval itself (Prepare
// reports NeedsApproval, the engine asks).
package fileops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// ReadSet is the set of files (by real path) read in this session. read_file
// adds to it, write_file consults it for the overwrite warning and adds what
// it wrote, and edit_file refuses files that are not in it. One ReadSet is
// shared by a session's tools and by its sub-agents; it is safe for
// concurrent use.
type ReadSet struct {
	mu    sync.RWMutex
	paths map[string]struct{}
}

// NewReadSet returns an empty read set.
func NewReadSet() *ReadSet { return &ReadSet{paths: map[string]struct{}{}} }

// Add records a real path (as returned by Realpath) as read.
func (s *ReadSet) Add(real string) {
	s.mu.Lock()
	s.paths[real] = struct{}{}
	s.mu.Unlock()
}

// Remove forgets a real path (a read that failed).
func (s *ReadSet) Remove(real string) {
	s.mu.Lock()
	delete(s.paths, real)
	s.mu.Unlock()
}

// Contains reports whether a real path was read.
func (s *ReadSet) Contains(real string) bool {
	s.mu.RLock()
	_, ok := s.paths[real]
	s.mu.RUnlock()
	return ok
}

// Len is the number of files in the set.
func (s *ReadSet) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.paths)
}

// ExpandHome replaces a leading "~" or "~/" with the home directory, as
// Python's os.path.expanduser does for the current user.
func ExpandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return home + p[1:]
}

// Realpath is the absolute, symlink-free form of p, like Python's
// os.path.realpath: the longest existing prefix is resolved and the rest is
// appended cleaned, so a path that does not exist yet still has one.
func Realpath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return resolveExisting(abs)
}

func resolveExisting(abs string) string {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	parent, base := filepath.Dir(abs), filepath.Base(abs)
	if parent == abs {
		return abs
	}
	return filepath.Join(resolveExisting(parent), base)
}

// Header glyphs (behavior.md conventions).
const (
	glyphOK   = "⚙"
	glyphFail = "✗"
)

func okHeader(tool, detail string) string { return glyphOK + " " + tool + ": " + detail }

func failHeader(tool, reason string) string { return glyphFail + " " + tool + ": " + reason }

// notSpecial refuses named pipes, devices and sockets, whose open or read
// can block forever; regular files, directories and missing paths pass (the
// caller reports those).
func notSpecial(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() || st.IsDir() {
		return nil
	}
	kind := "special file"
	switch {
	case st.Mode()&os.ModeNamedPipe != 0:
		kind = "named pipe"
	case st.Mode()&os.ModeDevice != 0:
		kind = "device"
	case st.Mode()&os.ModeSocket != 0:
		kind = "socket"
	}
	return fmt.Errorf("not a regular file (%s); read it with bash, e.g. head -c 4096 %s", kind, path)
}

// commas formats n with thousands separators, like Python's "{:,}".
func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// runeHead returns the first n runes of s and whether s was longer.
func runeHead(s string, n int) (string, bool) {
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// describeErr turns a filesystem error into a short lower-case reason without
// repeating the path the caller already names.
func describeErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}
