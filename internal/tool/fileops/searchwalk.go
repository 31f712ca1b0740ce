package fileops

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// chunkSize is the read unit; a file is searched chunk by chunk (cut at line
// ends), so memory per worker is bounded by the longest line, not the file.
const chunkSize = 256 << 10

// searchResult is the outcome of one search.
type searchResult struct {
	out        string // "path:line:text\n" lines, sorted by path then line
	matches    int
	unreadable []string // "path: reason"
}

// task is one unit of walk work: a directory to list or a file to search.
type task struct {
	path  string // as displayed: reached from the root the caller gave
	dir   bool
	rel   string       // slash path relative to the work tree root (inRepo only)
	chain *ignoreChain // ignore rules in force in the directory (dir tasks)
	repo  bool         // inside a git work tree
}

// fileHits is one file's matching lines. out points into its worker's
// arena.
type fileHits struct {
	path    string
	out     []byte
	matches int
}

// arena is a worker's output memory: fixed blocks that are filled and never
// moved (a growing slice would copy all earlier output at each doubling).
// One file's output always sits in one block.
type arena struct {
	cur   []byte
	start int // where the current file's output begins in cur
}

const arenaBlock = 1 << 20

// reserve makes room for n more bytes of the current file's output, moving
// that output to a fresh block when the current one is full.
func (a *arena) reserve(n int) {
	if len(a.cur)+n <= cap(a.cur) {
		return
	}
	partial := a.cur[a.start:]
	block := make([]byte, 0, max(arenaBlock, 2*(len(partial)+n)))
	a.cur = append(block, partial...)
	a.start = 0
}

// begin starts a file's output; end returns it.
func (a *arena) begin()      { a.start = len(a.cur) }
func (a *arena) end() []byte { return a.cur[a.start:len(a.cur):len(a.cur)] }

// walker runs a parallel walk: workers share a LIFO stack of tasks; listing
// a directory pushes its children. pending counts tasks queued or running,
// so the walk is over when it reaches zero.
type walker struct {
	ctx     context.Context
	m       *matcher
	mu      sync.Mutex
	cond    *sync.Cond
	stack   []task
	pending int
}

// searchPath searches root (a file or a directory) with m using workers
// goroutines (0 = GOMAXPROCS). A cancelled ctx stops the walk early; what was
// found so far is returned.
func searchPath(ctx context.Context, m *matcher, root string, workers int) (searchResult, error) {
	st, err := os.Stat(root)
	if err != nil {
		return searchResult{}, err
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return searchResult{}, fmt.Errorf("not a regular file or directory")
	}
	first := task{path: root, dir: st.IsDir()}
	if first.dir {
		if abs, err := filepath.Abs(root); err == nil {
			first.chain, first.rel, first.repo = ignoreStart(abs)
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	w := &walker{ctx: ctx, m: m, stack: []task{first}, pending: 1}
	w.cond = sync.NewCond(&w.mu)
	type local struct {
		hits  []fileHits
		errs  []string
		arena arena
	}
	locals := make([]local, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			buf := make([]byte, chunkSize)
			for {
				t, ok := w.pop()
				if !ok {
					return
				}
				if t.dir {
					if err := w.list(t); err != nil {
						locals[i].errs = append(locals[i].errs, t.path+": "+describeErr(err))
					}
				} else {
					h, err := searchFile(ctx, m, t.path, &buf, &locals[i].arena)
					if err != nil {
						locals[i].errs = append(locals[i].errs, t.path+": "+describeErr(err))
					}
					if h.matches > 0 {
						locals[i].hits = append(locals[i].hits, h)
					}
				}
				w.done()
			}
		})
	}
	wg.Wait()
	var res searchResult
	var hits []fileHits
	for _, l := range locals {
		hits = append(hits, l.hits...)
		res.unreadable = append(res.unreadable, l.errs...)
	}
	slices.SortFunc(hits, func(a, b fileHits) int { return compareSlashed(a.path, b.path) })
	slices.Sort(res.unreadable)
	size := 0
	for _, h := range hits {
		size += len(h.out)
	}
	var out strings.Builder
	out.Grow(size)
	for _, h := range hits {
		out.Write(h.out)
		res.matches += h.matches
	}
	res.out = out.String()
	return res, nil
}

// pop takes the next task, waiting while others may still add some; ok is
// false when the walk is over or cancelled.
func (w *walker) pop() (task, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.stack) == 0 && w.pending > 0 && w.ctx.Err() == nil {
		w.cond.Wait()
	}
	if len(w.stack) == 0 || w.ctx.Err() != nil {
		return task{}, false
	}
	t := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	return t, true
}

func (w *walker) push(ts []task) {
	if len(ts) == 0 {
		return
	}
	w.mu.Lock()
	w.stack = append(w.stack, ts...)
	w.pending += len(ts)
	w.mu.Unlock()
	w.cond.Broadcast()
}

// done marks a popped task finished; the last one (or a cancelled context)
// wakes the idle workers so they can exit.
func (w *walker) done() {
	w.mu.Lock()
	w.pending--
	last := w.pending == 0 || w.ctx.Err() != nil
	w.mu.Unlock()
	if last {
		w.cond.Broadcast()
	}
}

// list reads a directory and queues its children: regular files and
// directories only (symlinks, devices, FIFOs and sockets are skipped, as
// grep -r does), never VCS metadata, and nothing a .gitignore excludes.
func (w *walker) list(t task) error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(entries) == 0 {
		return err
	}
	chain, rel, repo := t.chain, t.rel, t.repo
	hasIgnore := false
	for _, e := range entries {
		switch e.Name() {
		case ".git":
			chain, rel, repo = repoChain(t.path), "", true
		case ".gitignore":
			hasIgnore = e.Type().IsRegular()
		}
	}
	if repo && hasIgnore {
		chain = chain.push(loadIgnoreFile(childPath(t.path, ".gitignore"), rel))
	}
	children := make([]task, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		typ := e.Type()
		isDir := typ.IsDir()
		if !isDir && !typ.IsRegular() {
			continue
		}
		if vcsDirs[name] {
			continue
		}
		c := task{path: childPath(t.path, name), dir: isDir, repo: repo}
		if repo {
			c.rel = name
			if rel != "" {
				c.rel = rel + "/" + name
			}
			if chain.ignored(c.rel, isDir) {
				continue
			}
			c.chain = chain
		}
		children = append(children, c)
	}
	w.push(children)
	return nil
}

// searchFile searches one file chunk by chunk. A file with a NUL byte in its
// first 8 KB is binary and skipped. buf is the worker's reusable buffer. Raw
// system calls are used because os.Open registers every file with the
// network poller and a finalizer, which costs more than searching a small
// file.
func searchFile(ctx context.Context, m *matcher, path string, buf *[]byte, out *arena) (h fileHits, err error) {
	h.path = path
	out.begin()
	defer func() { h.out = out.end() }()
	fd, err := openRead(path)
	if err != nil {
		return h, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := *buf
	filled, line, first := 0, 1, true
	for {
		eof := false
		for filled < len(b) {
			n, err := readFD(fd, b[filled:])
			if err != nil {
				return h, &fs.PathError{Op: "read", Path: path, Err: err}
			}
			if n == 0 {
				eof = true
				break
			}
			filled += n
		}
		if first {
			first = false
			if bytes.IndexByte(b[:min(filled, sniffLen)], 0) >= 0 {
				return h, nil
			}
		}
		cut := filled
		if !eof {
			cut = bytes.LastIndexByte(b[:filled], '\n') + 1
			if cut == 0 { // one line longer than the buffer: grow it
				b = append(b[:filled], make([]byte, len(b))...)
				b = b[:cap(b)]
				*buf = b
				continue
			}
		}
		line = h.scanChunk(m, b[:cut], line, out)
		if eof || h.matches >= MaxMatchesPerFile || ctx.Err() != nil {
			return h, nil
		}
		filled = copy(b, b[cut:filled])
	}
}

func openRead(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func readFD(fd int, p []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, p)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// scanChunk appends the matching lines of chunk (whole lines, the first of
// which is number line) and returns the number of the line after the chunk.
func (h *fileHits) scanChunk(m *matcher, chunk []byte, line int, a *arena) int {
	counted := 0
	m.scan(chunk, func(start, end int) bool {
		line += bytes.Count(chunk[counted:start], []byte{'\n'})
		counted = start
		text := bytes.TrimSuffix(chunk[start:end], []byte{'\r'})
		a.reserve(len(h.path) + len(text) + 24)
		out := a.cur
		out = append(out, h.path...)
		out = append(out, ':')
		out = strconv.AppendInt(out, int64(line), 10)
		out = append(out, ':')
		out = appendValidUTF8(out, text)
		out = append(out, '\n')
		a.cur = out
		h.matches++
		return h.matches < MaxMatchesPerFile
	})
	return line + bytes.Count(chunk[counted:], []byte{'\n'})
}

// appendValidUTF8 appends text with invalid UTF-8 replaced by U+FFFD.
func appendValidUTF8(dst, text []byte) []byte {
	if utf8.Valid(text) {
		return append(dst, text...)
	}
	return append(dst, strings.ToValidUTF8(string(text), "\uFFFD")...)
}
