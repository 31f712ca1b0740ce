package fileops

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"turnstone/internal/tool"
)

// direntRecord builds one linux_dirent64 record, padded to 8 bytes as the
// kernel does.
func direntRecord(ino uint64, typ byte, name string) []byte {
	n := 19 + len(name) + 1
	n = (n + 7) &^ 7
	rec := make([]byte, n)
	binary.NativeEndian.PutUint64(rec[0:8], ino)
	binary.NativeEndian.PutUint64(rec[8:16], 42)
	binary.NativeEndian.PutUint16(rec[16:18], uint16(n))
	rec[18] = typ
	copy(rec[19:], name)
	return rec
}

func TestParseDirents(t *testing.T) {
	var buf []byte
	for _, r := range []struct {
		ino  uint64
		typ  byte
		name string
	}{
		{1, syscall.DT_DIR, "."},
		{2, syscall.DT_DIR, ".."},
		{3, syscall.DT_REG, "a.go"},
		{4, syscall.DT_DIR, "sub"},
		{5, syscall.DT_LNK, "link"},
		{6, syscall.DT_UNKNOWN, "odd"},
		{0, syscall.DT_REG, "removed"},
		{7, syscall.DT_FIFO, "fifo"},
		{8, syscall.DT_REG, strings.Repeat("n", 255)},
		{9, syscall.DT_REG, "..."},
	} {
		buf = append(buf, direntRecord(r.ino, r.typ, r.name)...)
	}
	whole := len(buf)
	buf = append(buf, direntRecord(10, syscall.DT_REG, "truncated")[:20]...)
	got := parseDirents(buf, nil)
	want := []dirent{
		{[]byte("a.go"), kindFile}, {[]byte("sub"), kindDir}, {[]byte("link"), kindOther},
		{[]byte("odd"), kindUnknown}, {[]byte("fifo"), kindOther},
		{bytes.Repeat([]byte("n"), 255), kindFile}, {[]byte("..."), kindFile},
	}
	equal := func(a, b dirent) bool { return bytes.Equal(a.name, b.name) && a.kind == b.kind }
	if !slices.EqualFunc(got, want, equal) {
		t.Fatalf("got %q", got)
	}
	// A record length that overruns the buffer or is shorter than the header
	// stops the parse instead of reading out of bounds or looping.
	bad := slices.Clone(buf[:whole])
	binary.NativeEndian.PutUint16(bad[16:18], 0)
	if got := parseDirents(bad, nil); len(got) != 0 {
		t.Fatalf("zero reclen: %q", got)
	}
	binary.NativeEndian.PutUint16(bad[16:18], uint16(whole+1))
	if got := parseDirents(bad, nil); len(got) != 0 {
		t.Fatalf("long reclen: %q", got)
	}
	if got := parseDirents(nil, nil); len(got) != 0 {
		t.Fatalf("empty: %q", got)
	}
}

// kinds lists a directory with readDir as "name kind" lines, sorted.
func kinds(t *testing.T, wk *worker, dir string) []string {
	t.Helper()
	ents, err := wk.readDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, fmt.Sprintf("%s %d", e.name, e.kind))
	}
	slices.Sort(out)
	return out
}

func TestReadDirMatchesOS(t *testing.T) {
	dir := t.TempDir()
	// Enough long names to need several getdents calls and a bigger buffer.
	for i := range 1500 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 120))), "")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	osEnts, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range osEnts {
		k := kindOther
		switch {
		case e.Type().IsRegular():
			k = kindFile
		case e.IsDir():
			k = kindDir
		}
		want = append(want, fmt.Sprintf("%s %d", e.Name(), k))
	}
	slices.Sort(want)
	var wk worker
	if got := kinds(t, &wk, dir); !slices.Equal(got, want) {
		t.Fatalf("readDir: %d entries, os.ReadDir: %d", len(got), len(want))
	}
	// The buffers are reused: a second, small listing sees only its own.
	if got := kinds(t, &wk, filepath.Join(dir, "sub")); len(got) != 0 {
		t.Fatalf("sub: %q", got)
	}
	if got, _ := wk.readDirPortable(dir); len(got) != len(want) {
		t.Fatalf("portable: %d entries", len(got))
	}
}

func TestReadDirErrors(t *testing.T) {
	dir := tree(t, map[string]string{"f.txt": "x"})
	var wk worker
	for _, tc := range []struct {
		path string
		err  error
	}{
		{filepath.Join(dir, "missing"), fs.ErrNotExist},
		{filepath.Join(dir, "f.txt"), syscall.ENOTDIR},
	} {
		_, err := wk.readDir(tc.path)
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Op != "open" || pe.Path != tc.path || !errors.Is(err, tc.err) {
			t.Errorf("%s: got %v", tc.path, err)
		}
	}
}

func TestResolveUnknown(t *testing.T) {
	dir := tree(t, map[string]string{"file": "x", "sub/f": "y"})
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	ents := []dirent{
		{[]byte("file"), kindUnknown}, {[]byte("sub"), kindUnknown}, {[]byte("link"), kindUnknown},
		{[]byte("vanished"), kindUnknown}, {[]byte("known"), kindFile},
	}
	resolveUnknown(dir, ents)
	want := []entryKind{kindFile, kindDir, kindOther, kindOther, kindFile}
	for i, e := range ents {
		if e.kind != want[i] {
			t.Errorf("%s: kind %d, want %d", e.name, e.kind, want[i])
		}
	}
	// The trailing-slash form of a root joins without doubling the slash.
	ents = []dirent{{[]byte("file"), kindUnknown}}
	resolveUnknown(dir+"/", ents)
	if ents[0].kind != kindFile {
		t.Errorf("root with slash: kind %d", ents[0].kind)
	}
}

func TestJoinHits(t *testing.T) {
	var hits []fileHits
	var want strings.Builder
	total := 0
	for i := range 400 {
		out := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i*37%9000)
		out[len(out)-1] = '\n'
		hits = append(hits, fileHits{path: fmt.Sprint(i), out: out, matches: i % 3})
		want.Write(out)
		total += i % 3
	}
	if want.Len() < parallelJoinMin {
		t.Fatalf("test data too small: %d", want.Len())
	}
	for _, workers := range []int{1, 2, 3, 7, 1000} {
		for _, n := range []int{0, 1, 2, len(hits)} {
			got, matches := joinHits(hits[:n], workers)
			var w strings.Builder
			m := 0
			for _, h := range hits[:n] {
				w.Write(h.out)
				m += h.matches
			}
			if got != w.String() || matches != m {
				t.Fatalf("workers %d, %d hits: %d bytes, %d matches; want %d, %d", workers, n, len(got), matches, w.Len(), m)
			}
		}
	}
	if got, m := joinHits(hits, 2); got != want.String() || m != total {
		t.Fatal("mismatch")
	}
}

// TestSearchWorkersAgree searches a tree wide and deep enough for work to
// move between workers and checks that every worker count gives the same
// output (run with -race, this also checks the hand-over).
func TestSearchWorkersAgree(t *testing.T) {
	files := map[string]string{}
	for d := range 40 {
		for f := range 12 {
			files[fmt.Sprintf("d%02d/s%d/f%02d.txt", d, f%3, f)] = fmt.Sprintf("x\nhit %d %d\ny\nhit\n", d, f)
		}
	}
	files["deep/a/b/c/d/e/f/g/h.txt"] = "hit deep\n"
	dir := tree(t, files)
	m, err := compilePattern("hit")
	if err != nil {
		t.Fatal(err)
	}
	var first searchResult
	for i, workers := range []int{1, 2, 3, 8, 64} {
		res, err := searchPath(context.Background(), m, dir, workers)
		if err != nil {
			t.Fatal(err)
		}
		if res.matches != 40*12*2+1 || len(res.unreadable) != 0 {
			t.Fatalf("workers %d: %d matches, unreadable %q", workers, res.matches, res.unreadable)
		}
		if i == 0 {
			first = res
		} else if res.out != first.out {
			t.Fatalf("workers %d: output differs", workers)
		}
	}
	if !strings.HasPrefix(first.out, dir+"/d00/s0/f00.txt:2:hit 0 0\n"+dir+"/d00/s0/f00.txt:4:hit\n") {
		t.Fatalf("order: %.200q", first.out)
	}
}

func TestSearchCancelledStopsWorkers(t *testing.T) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f.txt", i)] = "hit\n"
	}
	dir := tree(t, files)
	m, _ := compilePattern("hit")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Returning at all shows that the waiting workers were woken.
	res, err := searchPath(ctx, m, dir, 4)
	if err != nil || res.matches != 0 {
		t.Fatalf("cancelled search: %v, %d matches", err, res.matches)
	}
}

func TestTaskPath(t *testing.T) {
	for _, tc := range []struct {
		tk   task
		want string
	}{
		{task{name: "."}, "."},
		{task{name: "/abs/file.go"}, "/abs/file.go"},
		{task{parent: ".", name: "x"}, "./x"},
		{task{parent: "src/", name: "x"}, "src/x"},
		{task{parent: "/", name: "etc"}, "/etc"},
		{task{parent: "a/b", name: "c.txt"}, "a/b/c.txt"},
	} {
		if got := tc.tk.path(); got != tc.want {
			t.Errorf("%+v: path %q, want %q", tc.tk, got, tc.want)
		}
		if got := string(tc.tk.appendPath([]byte("pre:"))); got != "pre:"+tc.want {
			t.Errorf("%+v: appendPath %q", tc.tk, got)
		}
	}
}

func TestNameArena(t *testing.T) {
	var a nameArena
	var names []string
	var want []string
	buf := make([]byte, 0, 300)
	for i := range 2000 { // several blocks
		buf = fmt.Appendf(buf[:0], "%04d-%s", i, strings.Repeat("n", i%250))
		names = append(names, a.store(buf))
		want = append(want, string(buf))
	}
	long := bytes.Repeat([]byte("L"), nameBlock+1) // larger than a block
	names = append(names, a.store(long))
	want = append(want, string(long))
	copy(buf[:cap(buf)], "overwritten") // the caller's buffer is reused
	if !slices.Equal(names, want) {
		t.Fatal("stored names changed")
	}
	if a.store(nil) != "" {
		t.Fatal("empty name")
	}
}

func TestOpenPath(t *testing.T) {
	dir := tree(t, map[string]string{"f.txt": "content"})
	cstr := func(s string) []byte { return append([]byte(s), 0) }
	fd, err := openPath(cstr(filepath.Join(dir, "f.txt")), syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	n, _ := syscall.Read(fd, b)
	syscall.Close(fd)
	if string(b[:n]) != "content" {
		t.Fatalf("read %q", b[:n])
	}
	for _, tc := range []struct {
		path []byte
		want error
	}{
		{cstr(filepath.Join(dir, "missing")), syscall.ENOENT},
		{cstr(filepath.Join(dir, "f.txt") + "\x00tail"), syscall.EINVAL},
		{cstr(filepath.Join(dir, "f.txt")), syscall.ENOTDIR}, // O_DIRECTORY below
	} {
		fd, err := openPath(tc.path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_DIRECTORY)
		if !errors.Is(err, tc.want) {
			if err == nil {
				syscall.Close(fd)
			}
			t.Errorf("%q: got %v, want %v", tc.path, err, tc.want)
		}
	}
}

func TestArenaKeepsOutputAcrossBlocks(t *testing.T) {
	var a arena
	var outs [][]byte
	var want []string
	line := []byte(strings.Repeat("y", 1000) + "\n")
	for i := range 12000 { // about 12 MB: the first block and big ones
		a.begin()
		for range 1 + i%3 {
			a.reserve(len(line))
			a.cur = append(a.cur, line...)
		}
		outs = append(outs, a.end())
		want = append(want, strings.Repeat(string(line), 1+i%3))
	}
	for i := range outs {
		if string(outs[i]) != want[i] {
			t.Fatalf("file %d: output changed", i)
		}
	}
	if cap(a.cur) < bigArenaBlock {
		t.Fatalf("last block %d bytes, want a big one", cap(a.cur))
	}
}

func TestHugePageHint(t *testing.T) {
	// Only a hint: any length and alignment must be accepted, and the
	// memory stays ordinary, writable memory.
	for _, n := range []int{0, 1, hugePage, 2*hugePage + 4097, 9 * hugePage} {
		b := make([]byte, n)
		hugePageHint(b)
		hugePageHint(b[min(n, 4097):])
		for i := 0; i < n; i += 4096 {
			b[i] = 1
		}
	}
}

func TestSearchLineLongerThanBuffer(t *testing.T) {
	long := strings.Repeat("z", 3*chunkSize+17)
	dir := tree(t, map[string]string{
		"long.txt":  "first\n" + long + "needle\n" + "needle after\n",
		"nonl.txt":  long + "needle", // no final newline
		"exact.txt": strings.Repeat("q", chunkSize-7) + "needle",
	})
	res := call(t, newSearch(), tool.Args{"query": "needle", "path": dir})
	want := dir + "/exact.txt:1:" + strings.Repeat("q", chunkSize-7) + "needle\n" +
		dir + "/long.txt:2:" + long + "needle\n" +
		dir + "/long.txt:3:needle after\n" +
		dir + "/nonl.txt:1:" + long + "needle"
	if res.Output != want {
		t.Fatalf("got %d bytes, want %d", len(res.Output), len(want))
	}
}

func TestGrowForLine(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, filepath.Join(dir, "f"), strings.Repeat("x", 1000))
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	b := bytes.Repeat([]byte("x"), 100)
	// 100 of 1000 bytes read: room for the other 900 and one more byte, so
	// the next read can see the end of the file.
	nb := growForLine(fd, b, 100)
	if len(nb) != 100+900+1 || !bytes.Equal(nb[:100], b) {
		t.Fatalf("known size: len %d", len(nb))
	}
	// All read (the buffer was exactly full): one more byte is enough.
	if nb := growForLine(fd, b, 1000); len(nb) != 101 {
		t.Fatalf("all read: len %d", len(nb))
	}
	// More read than fstat reports (the file grew, or a /proc-like file that
	// reports size 0): doubling.
	if nb := growForLine(fd, b, 5000); len(nb) != 200 {
		t.Fatalf("grown file: len %d", len(nb))
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	if nb := growForLine(p[0], b, 100); len(nb) != 200 {
		t.Fatalf("pipe: len %d", len(nb))
	}
}
