package fileops

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"
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
// Its path, as displayed (reached from the root the caller gave), is dir
// and name joined; it is only built as a string when needed, so a file
// without matches costs no allocation.
type task struct {
	parent string // the directory's path; "" for the root
	name   string // the entry's name; for the root, the root as given
	dir    bool
	rel    string       // slash path relative to the work tree root (directories in a work tree)
	chain  *ignoreChain // ignore rules in force in the directory (dir tasks)
	repo   bool         // inside a git work tree
}

// appendPath appends the task's path to b.
func (t *task) appendPath(b []byte) []byte {
	if t.parent == "" {
		return append(b, t.name...)
	}
	b = append(b, t.parent...)
	if !strings.HasSuffix(t.parent, "/") {
		b = append(b, '/')
	}
	return append(b, t.name...)
}

// path is the task's path as a new string.
func (t *task) path() string {
	if t.parent == "" {
		return t.name
	}
	return childPath(t.parent, t.name)
}

// nameArena stores the names of queued entries in shared blocks rather
// than in one allocation each. A block is never written again where it
// holds names, so strings pointing into it stay valid.
type nameArena struct{ block []byte }

const nameBlock = 64 << 10

func (a *nameArena) store(name []byte) string {
	if len(name) == 0 {
		return ""
	}
	if cap(a.block)-len(a.block) < len(name) {
		a.block = make([]byte, 0, max(nameBlock, len(name)))
	}
	start := len(a.block)
	a.block = append(a.block, name...)
	return unsafe.String(&a.block[start], len(name))
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

// A worker's first block is small; once its output outgrows that, the
// result is large, and bigger blocks backed by huge pages pay off.
const (
	arenaBlock    = 256 << 10
	bigArenaBlock = 8 << 20
)

// reserve makes room for n more bytes of the current file's output, moving
// that output to a fresh block when the current one is full.
func (a *arena) reserve(n int) {
	if len(a.cur)+n <= cap(a.cur) {
		return
	}
	size := arenaBlock
	if a.cur != nil {
		size = bigArenaBlock
	}
	partial := a.cur[a.start:]
	block := make([]byte, 0, max(size, 2*(len(partial)+n)))
	if size == bigArenaBlock {
		hugePageHint(block[:cap(block)])
	}
	a.cur = append(block, partial...)
	a.start = 0
}

// hugePage is the usual size of a transparent huge page (x86-64, arm64
// with 4 KB pages).
const hugePage = 2 << 20

// hugePageHint asks Linux to back the huge-page-aligned part of b, fresh
// memory not yet written, with transparent huge pages (MADV_HUGEPAGE).
// Megabytes of output in fresh 4 KB pages cost a page fault each, and in a
// virtual machine those faults were a seventh of a search with a 10 MB
// result; a huge page is one fault. It is only a hint: a kernel that
// ignores it, or a system whose huge pages are of another size, runs as
// before. The Go runtime does the same for its own metadata.
func hugePageHint(b []byte) {
	if runtime.GOOS != "linux" || len(b) < 2*hugePage {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(len(b))) &^ (hugePage - 1)
	const madvHugePage = 14 // MADV_HUGEPAGE on Linux
	_ = unix.Madvise(b[start-p:end-p], madvHugePage)
}

// begin starts a file's output; end returns it.
func (a *arena) begin()      { a.start = len(a.cur) }
func (a *arena) end() []byte { return a.cur[a.start:len(a.cur):len(a.cur)] }

// walker runs a parallel walk. Each worker keeps a LIFO stack of its own
// tasks (listing a directory pushes its children there) and hands part of
// it to the shared stack only when another worker is idle, so the common
// case takes no lock and wakes no goroutine: handing work between
// goroutines costs futex calls and scheduler spinning that, for a tree of
// small files, add up to more than the search itself.
type walker struct {
	done    <-chan struct{} // the search context's; closed = stop
	m       *matcher
	workers int

	mu     sync.Mutex
	cond   *sync.Cond
	shared []task
	over   bool         // the walk is finished or cancelled (under mu)
	idle   atomic.Int32 // workers waiting in take; changed under mu
}

// worker is one walking goroutine's state; its buffers are reused from
// task to task.
type worker struct {
	w     *walker
	local []task
	buf   []byte   // file contents
	dents []byte   // raw directory entries
	ents  []dirent // parsed directory entries (names point into dents)
	names nameArena
	cpath []byte // the current path, NUL-terminated for system calls
	rel   []byte // scratch for work-tree-relative paths
	hits  []fileHits
	errs  []string
	arena arena
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
	first := task{name: root, dir: st.IsDir()}
	if first.dir {
		if abs, err := filepath.Abs(root); err == nil {
			first.chain, first.rel, first.repo = ignoreStart(abs)
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	w := &walker{done: ctx.Done(), m: m, workers: workers, shared: []task{first}}
	w.cond = sync.NewCond(&w.mu)
	stop := context.AfterFunc(ctx, w.finish)
	defer stop()
	ws := make([]worker, workers)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i].w = w
		wg.Go(ws[i].run)
	}
	wg.Wait()
	var res searchResult
	var hits []fileHits
	for i := range ws {
		hits = append(hits, ws[i].hits...)
		res.unreadable = append(res.unreadable, ws[i].errs...)
	}
	slices.SortFunc(hits, func(a, b fileHits) int { return compareSlashed(a.path, b.path) })
	slices.Sort(res.unreadable)
	res.out, res.matches = joinHits(hits, workers)
	return res, nil
}

// joinHits concatenates the files' output in order. A large result is
// copied by several goroutines, each filling one stretch of the buffer:
// the copy of a result of many megabytes is mostly page faults on the
// fresh buffer, and those run in parallel.
func joinHits(hits []fileHits, workers int) (string, int) {
	size, matches := 0, 0
	for _, h := range hits {
		size += len(h.out)
		matches += h.matches
	}
	if size == 0 {
		return "", matches
	}
	out := make([]byte, size)
	hugePageHint(out)
	if size < parallelJoinMin {
		workers = 1
	}
	per := size/workers + 1
	var wg sync.WaitGroup
	start, off, part := 0, 0, 0
	for i, h := range hits {
		part += len(h.out)
		if part < per && i < len(hits)-1 {
			continue
		}
		dst, src := out[off:off+part], hits[start:i+1]
		wg.Go(func() { copyHits(dst, src) })
		start, off, part = i+1, off+part, 0
	}
	wg.Wait()
	return unsafe.String(unsafe.SliceData(out), len(out)), matches
}

// parallelJoinMin is the result size from which joinHits copies in parallel.
const parallelJoinMin = 1 << 20

// copyHits copies the files' output into dst, which has exactly their size.
func copyHits(dst []byte, hits []fileHits) {
	n := 0
	for _, h := range hits {
		n += copyHit(dst[n:], h.out)
	}
}

// copyHit is a separate function so that the copy loop has a preemption
// point per file: a loop of inlined copies can only be stopped by signals,
// which, landing in memmove, fail and are retried by a GC that wants to
// scan this goroutine's stack — thousands of signals for a 10 MB result.
//
//go:noinline
func copyHit(dst, src []byte) int { return copy(dst, src) }

// stopped reports whether the search context is done.
func (w *walker) stopped() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// finish ends the walk and wakes the idle workers so they can exit.
func (w *walker) finish() {
	w.mu.Lock()
	w.over = true
	w.mu.Unlock()
	w.cond.Broadcast()
}

// take moves tasks from the shared stack to local (which is empty), waiting
// while another worker may still share some; false means the walk is over:
// every worker is idle with nothing shared, or the context is done.
func (w *walker) take(local *[]task) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.idle.Add(1)
	for len(w.shared) == 0 && !w.over {
		if int(w.idle.Load()) == w.workers {
			w.over = true
			w.cond.Broadcast()
			break
		}
		w.cond.Wait()
	}
	if w.over {
		return false
	}
	w.idle.Add(-1)
	n := (len(w.shared) + 1) / 2 // leave some for the next idle worker
	*local = append(*local, w.shared[len(w.shared)-n:]...)
	w.shared = w.shared[:len(w.shared)-n]
	return true
}

// share gives the bottom half of local (the tasks queued first, which
// include the largest unvisited directories) to idle workers.
func (w *walker) share(local *[]task) {
	w.mu.Lock()
	if len(w.shared) > 0 || w.over {
		w.mu.Unlock()
		return // an idle worker has yet to take what is there
	}
	l := *local
	n := len(l) / 2
	w.shared = append(w.shared, l[:n]...)
	*local = l[:copy(l, l[n:])]
	w.mu.Unlock()
	w.cond.Signal()
}

func (wk *worker) run() {
	w := wk.w
	wk.buf = make([]byte, chunkSize)
	for {
		if len(wk.local) == 0 && !w.take(&wk.local) {
			return
		}
		if w.stopped() {
			return
		}
		t := wk.local[len(wk.local)-1]
		wk.local = wk.local[:len(wk.local)-1]
		if t.dir {
			if err := wk.list(&t); err != nil {
				wk.errs = append(wk.errs, t.path()+": "+describeErr(err))
			}
		} else {
			h, err := wk.searchFile(&t)
			if err != nil {
				wk.errs = append(wk.errs, t.path()+": "+describeErr(err))
			}
			if h.matches > 0 {
				wk.hits = append(wk.hits, h)
			}
		}
		if len(wk.local) > 1 && w.idle.Load() > 0 {
			w.share(&wk.local)
		}
	}
}

// list reads a directory and queues its children: regular files and
// directories only (symlinks, devices, FIFOs and sockets are skipped, as
// grep -r does), never VCS metadata, and nothing a .gitignore excludes.
func (wk *worker) list(t *task) error {
	dir := t.path()
	ents, err := wk.readDir(dir)
	if err != nil && len(ents) == 0 {
		return err
	}
	chain, rel, repo := t.chain, t.rel, t.repo
	hasIgnore := false
	for _, e := range ents {
		switch string(e.name) {
		case ".git":
			chain, rel, repo = repoChain(dir), "", true
		case ".gitignore":
			hasIgnore = e.kind == kindFile
		}
	}
	if repo && hasIgnore {
		chain = chain.push(loadIgnoreFile(childPath(dir, ".gitignore"), rel))
	}
	for _, e := range ents {
		if e.kind != kindFile && e.kind != kindDir || vcsDirs[string(e.name)] {
			continue
		}
		isDir := e.kind == kindDir
		c := task{parent: dir, dir: isDir, repo: repo}
		if repo {
			r := wk.rel[:0]
			if rel != "" {
				r = append(append(r, rel...), '/')
			}
			r = append(r, e.name...)
			wk.rel = r
			// ignored does not keep its argument, so a view of the
			// scratch buffer will do.
			if chain.ignored(unsafe.String(unsafe.SliceData(r), len(r)), isDir) {
				continue
			}
			if isDir {
				c.rel = string(r)
			}
			c.chain = chain
		}
		c.name = wk.names.store(e.name)
		wk.local = append(wk.local, c)
	}
	return nil
}

// childPathBytes is childPath for a name that is not yet a string, with
// one allocation (the compiler does not copy a converted operand of a
// concatenation).
func childPathBytes(dir string, name []byte) string {
	if strings.HasSuffix(dir, "/") {
		return dir + string(name)
	}
	return dir + "/" + string(name)
}

// entryKind is what a directory entry is, as far as the walk cares.
type entryKind uint8

const (
	kindOther   entryKind = iota // symlink, device, FIFO, socket: skipped
	kindFile                     // regular file
	kindDir                      // directory
	kindUnknown                  // the file system did not say (DT_UNKNOWN)
)

// dirent is one directory entry; name points into the worker's buffer and
// is valid until its next readDir.
type dirent struct {
	name []byte
	kind entryKind
}

// direntMin is the free space readDir keeps in its buffer: more than the
// largest linux_dirent64 (19 header bytes, a 255-byte name, NUL, padding).
const direntMin = 4 << 10

// readDir lists a directory. On Linux it calls getdents64 directly into a
// reused buffer: os.Open registers the descriptor with the network poller
// (an fcntl and a failing epoll_ctl per directory) and os.ReadDir allocates
// per entry. Entries the file system gives no type for are resolved with
// lstat. "." and ".." are left out.
func (wk *worker) readDir(path string) ([]dirent, error) {
	if runtime.GOOS != "linux" {
		return wk.readDirPortable(path)
	}
	wk.cpath = append(append(wk.cpath[:0], path...), 0)
	fd, err := openPath(wk.cpath, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_DIRECTORY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	if wk.dents == nil {
		wk.dents = make([]byte, 0, 32<<10)
	}
	b := wk.dents[:0]
	var rerr error
	for {
		if cap(b)-len(b) < direntMin {
			b = slices.Grow(b, cap(b))
		}
		n, err := readDirent(fd, b[len(b):cap(b)])
		if err != nil {
			rerr = &fs.PathError{Op: "readdirent", Path: path, Err: err}
			break
		}
		if n <= 0 {
			break
		}
		b = b[:len(b)+n]
	}
	wk.dents = b
	wk.ents = parseDirents(b, wk.ents[:0])
	resolveUnknown(path, wk.ents)
	return wk.ents, rerr
}

// resolveUnknown sets the kind of entries of dir whose type the file system
// did not report (some, such as older XFS or network file systems, never
// do) with lstat.
func resolveUnknown(dir string, ents []dirent) {
	for i := range ents {
		if e := &ents[i]; e.kind == kindUnknown {
			e.kind = lstatKind(childPathBytes(dir, e.name))
		}
	}
}

// parseDirents appends the entries of a buffer of linux_dirent64 records
// (u64 inode, s64 offset, u16 record length, u8 type, NUL-terminated name)
// to ents, without "." and ".." and without entries whose inode is 0 (the
// file was removed). A truncated record ends the parse.
func parseDirents(b []byte, ents []dirent) []dirent {
	const nameOff = 19
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		if binary.NativeEndian.Uint64(rec[0:8]) == 0 {
			continue
		}
		name := rec[nameOff:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		ents = append(ents, dirent{name: name, kind: direntKind(rec[18])})
	}
	return ents
}

// direntKind maps a d_type value.
func direntKind(t byte) entryKind {
	switch t {
	case syscall.DT_REG:
		return kindFile
	case syscall.DT_DIR:
		return kindDir
	case syscall.DT_UNKNOWN:
		return kindUnknown
	}
	return kindOther
}

// lstatKind is the kind of the entry at path, without following a symlink;
// one that vanished or cannot be examined is skipped.
func lstatKind(path string) entryKind {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return kindOther
		}
		break
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return kindFile
	case syscall.S_IFDIR:
		return kindDir
	}
	return kindOther
}

// readDirPortable is readDir through the os package, for systems whose
// dirent layout parseDirents does not know.
func (wk *worker) readDirPortable(path string) ([]dirent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	wk.ents = wk.ents[:0]
	for _, e := range entries {
		k := kindOther
		switch t := e.Type(); {
		case t.IsRegular():
			k = kindFile
		case t.IsDir():
			k = kindDir
		}
		wk.ents = append(wk.ents, dirent{name: []byte(e.Name()), kind: k})
	}
	return wk.ents, err
}

// rawOpen is whether openPath calls openat itself: on 64-bit Linux, where
// no O_LARGEFILE flag is needed and the system call number is portable.
const rawOpen = runtime.GOOS == "linux" && unsafe.Sizeof(uintptr(0)) == 8

// openPath opens p, a NUL-terminated path, read-only. syscall.Open would
// copy every path into a new allocation to terminate it; that garbage, one
// piece per file, is enough to make the collector run during a search.
func openPath(p []byte, flags int) (int, error) {
	name := p[:len(p)-1]
	if bytes.IndexByte(name, 0) >= 0 {
		return -1, syscall.EINVAL
	}
	for {
		var fd int
		var err error
		if rawOpen {
			cwd := unix.AT_FDCWD
			r, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&p[0])), uintptr(flags), 0, 0, 0)
			fd = int(r)
			if e != 0 {
				fd, err = -1, e
			}
		} else {
			fd, err = syscall.Open(string(name), flags, 0)
		}
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func readDirent(fd int, p []byte) (int, error) {
	for {
		n, err := syscall.ReadDirent(fd, p)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// searchFile searches one file chunk by chunk. A file with a NUL byte in its
// first 8 KB is binary and skipped. Raw system calls are used because
// os.Open registers every file with the network poller and a finalizer,
// which costs more than searching a small file.
func (wk *worker) searchFile(t *task) (h fileHits, err error) {
	out := &wk.arena
	out.begin()
	defer func() {
		h.out = out.end()
		if h.matches > 0 {
			h.path = t.path()
		}
	}()
	wk.cpath = append(t.appendPath(wk.cpath[:0]), 0)
	path := wk.cpath[:len(wk.cpath)-1]
	fd, err := openPath(wk.cpath, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY)
	if err != nil {
		return h, &fs.PathError{Op: "open", Path: t.path(), Err: err}
	}
	defer syscall.Close(fd)
	b := wk.buf
	filled, line, first, read := 0, 1, true, int64(0)
	for {
		eof := false
		for filled < len(b) {
			n, err := readFD(fd, b[filled:])
			if err != nil {
				return h, &fs.PathError{Op: "read", Path: t.path(), Err: err}
			}
			if n == 0 {
				eof = true
				break
			}
			filled += n
			read += int64(n)
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
				b = growForLine(fd, b, read)
				continue
			}
		}
		line = h.scanChunk(wk.w.m, path, b[:cut], line, out)
		if eof || h.matches >= MaxMatchesPerFile || wk.w.stopped() {
			return h, nil
		}
		filled = copy(b, b[cut:filled])
	}
}

// growForLine returns a bigger copy of b, which is full and holds no line
// end. The new size is what the rest of the file needs (so a line of
// megabytes costs one allocation of its size, not a doubling series whose
// garbage sets off the collector), or twice the old one when the file's
// size is unknown or it has grown. The worker's own buffer is left as it
// was, so one huge line does not make every later read that large.
func growForLine(fd int, b []byte, read int64) []byte {
	size := 2 * len(b)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err == nil && st.Size >= read {
		if rest := st.Size - read; rest < int64(maxInt-len(b)-1) {
			size = max(len(b)+int(rest)+1, len(b)+1)
		}
	}
	nb := make([]byte, size)
	copy(nb, b)
	return nb
}

const maxInt = int(^uint(0) >> 1)

func readFD(fd int, p []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, p)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// scanChunk appends the matching lines of chunk (whole lines, the first of
// which is number line), each prefixed with path, and returns the number of the line after the chunk.
func (h *fileHits) scanChunk(m *matcher, path, chunk []byte, line int, a *arena) int {
	counted := 0
	m.scan(chunk, func(start, end int) bool {
		line += bytes.Count(chunk[counted:start], []byte{'\n'})
		counted = start
		text := bytes.TrimSuffix(chunk[start:end], []byte{'\r'})
		a.reserve(len(path) + len(text) + 24)
		out := a.cur
		out = append(out, path...)
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
