package compute

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// isolation names how the child is confined.
type isolation string

const (
	isolationBwrap   isolation = "bubblewrap"
	isolationUnshare isolation = "unshare"
	isolationNone    isolation = "none"
)

// nobody is the uid/gid the sandbox runs as when turnstone itself is root:
// RLIMIT_NPROC is not enforced for real root, and root could open device
// nodes and root-owned files.
const nobody = 65534

// sandbox is one way of starting a confined process.
type sandbox struct {
	kind isolation
	// tool is the absolute path of bwrap or unshare ("" for none).
	tool string
	// dropToNobody runs the whole sandbox as uid/gid 65534.
	dropToNobody bool
}

func (s sandbox) String() string {
	if s.dropToNobody {
		return string(s.kind) + " (as uid 65534)"
	}
	return string(s.kind)
}

// scratchInside is where the scratch directory appears inside the sandbox.
const scratchInside = "/scratch"

// workspace is the per-call directory tree: base holds work (the scratch
// directory, the only writable place) and root (the unshare mode's new
// root). The whole tree is removed after the call.
type workspace struct {
	base, work, root string
}

func newWorkspace(owner int) (*workspace, error) {
	base, err := os.MkdirTemp("", "turnstone-math-")
	if err != nil {
		return nil, fmt.Errorf("create math scratch directory: %w", err)
	}
	ws := &workspace{base: base, work: filepath.Join(base, "work"), root: filepath.Join(base, "root")}
	err = errors.Join(os.Chmod(base, 0o711), os.Mkdir(ws.work, 0o700), os.Mkdir(ws.root, 0o755))
	if err == nil && owner >= 0 {
		err = os.Chown(ws.work, owner, owner)
	}
	if err != nil {
		ws.remove()
		return nil, fmt.Errorf("prepare math scratch directory %s: %w", base, err)
	}
	return ws, nil
}

func (ws *workspace) remove() { _ = os.RemoveAll(ws.base) }

// cwd is the scratch directory as the child sees it.
func (s sandbox) cwd(ws *workspace) string {
	if s.kind == isolationNone {
		return ws.work
	}
	return scratchInside
}

// owner is the uid the scratch directory must belong to (-1: unchanged).
func (s sandbox) owner() int {
	if s.dropToNobody {
		return nobody
	}
	return -1
}

// command builds the process for argv (interpreter first) inside the sandbox.
func (s sandbox) command(in *interpreter, ws *workspace, argv []string) *exec.Cmd {
	var cmd *exec.Cmd
	switch s.kind {
	case isolationBwrap:
		cmd = exec.Command(s.tool, append(bwrapArgs(in, ws), argv...)...)
	case isolationUnshare:
		args := []string{"--user", "--map-root-user", "--net", "--pid", "--fork", "--mount",
			"--ipc", "--uts", "--kill-child", "--", "/bin/sh", "-c", unshareScript(in, ws), "sh"}
		cmd = exec.Command(s.tool, append(args, argv...)...)
	default:
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Dir = ws.work
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.dropToNobody {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
	}
	return cmd
}

// systemRoots are bound read-only (or recreated as the same symlink) so
// that the interpreter and its shared libraries resolve. /etc is not bound:
// only the three files the dynamic loader and libraries need.
var (
	systemRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
	systemFiles = []string{"/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"}
)

func bwrapArgs(in *interpreter, ws *workspace) []string {
	// --cap-drop ALL: when turnstone runs as root and the sandbox cannot
	// drop to nobody, bwrap would otherwise keep every capability.
	a := []string{"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"}
	for _, r := range systemRoots {
		if t, err := os.Readlink(r); err == nil {
			a = append(a, "--symlink", t, r)
		} else if st, err := os.Stat(r); err == nil && st.IsDir() {
			a = append(a, "--ro-bind", r, r)
		}
	}
	for _, f := range systemFiles {
		a = append(a, "--ro-bind-try", f, f)
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev",
		"--bind", ws.work, scratchInside, "--bind", ws.work, "/tmp")
	for _, d := range extraDirs(in) {
		a = append(a, "--ro-bind", d, d)
	}
	return append(a, "--remount-ro", "/", "--chdir", scratchInside, "--")
}

// extraDirs are the interpreter's directories outside the system roots.
func extraDirs(in *interpreter) []string {
	var out []string
	for _, d := range in.Dirs {
		if underAny(d, systemRoots) || underAny(d, out) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// unshareScript builds the new root the way bwrap would, from a shell
// running as root of a fresh user namespace: a tmpfs root with read-only
// binds of the system directories, minimal /dev, the scratch directory,
// then chroot and drop every capability before exec'ing the interpreter.
func unshareScript(in *interpreter, ws *workspace) string {
	q := shellQuote
	var b strings.Builder
	b.WriteString("set -e\nR=" + q(ws.root) + "\n")
	b.WriteString("mount -t tmpfs -o mode=755,size=1m turnstone-math \"$R\"\n")
	roBind := func(src string, dir bool) {
		dst := `"$R"` + q(src)
		if dir {
			b.WriteString("mkdir -p " + dst + "\n")
		} else {
			b.WriteString("mkdir -p \"$(dirname " + dst + ")\"; touch " + dst + "\n")
		}
		b.WriteString("mount --rbind " + q(src) + " " + dst + "; mount -o remount,bind,ro " + dst + "\n")
	}
	for _, r := range systemRoots {
		if t, err := os.Readlink(r); err == nil {
			b.WriteString("ln -s " + q(t) + ` "$R"` + q(r) + "\n")
		} else if st, err := os.Stat(r); err == nil && st.IsDir() {
			roBind(r, true)
		}
	}
	for _, f := range systemFiles {
		if st, err := os.Stat(f); err == nil {
			roBind(f, st.IsDir())
		}
	}
	for _, d := range extraDirs(in) {
		roBind(d, true)
	}
	b.WriteString("mkdir -p \"$R/dev\" \"$R/proc\" \"$R" + scratchInside + "\" \"$R/tmp\"\n")
	for _, n := range []string{"null", "zero", "full", "random", "urandom"} {
		b.WriteString("touch \"$R/dev/" + n + "\"; mount --bind /dev/" + n + " \"$R/dev/" + n + "\"\n")
	}
	b.WriteString("mount -t proc proc \"$R/proc\" 2>/dev/null || true\n")
	b.WriteString("mount --bind " + q(ws.work) + " \"$R" + scratchInside + "\"\n")
	b.WriteString("mount --bind " + q(ws.work) + " \"$R/tmp\"\n")
	b.WriteString("mount -o remount,bind,ro \"$R\"\n")
	b.WriteString("exec " + q(firstExisting("/usr/sbin/chroot", "/sbin/chroot", "/usr/bin/chroot")) + " \"$R\" " +
		q(firstExisting("/usr/bin/setpriv", "/bin/setpriv")) + " --no-new-privs --inh-caps=-all --bounding-set=-all -- \"$@\"\n")
	return b.String()
}

func firstExisting(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return paths[0]
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// cleanEnv is the child's whole environment: nothing of the parent's.
// home is the scratch directory as the child sees it (also TMPDIR).
func cleanEnv(home string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"HOME=" + home,
		"TMPDIR=" + home,
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONIOENCODING=utf-8",
		"OPENBLAS_NUM_THREADS=1",
		"OMP_NUM_THREADS=1",
		"MKL_NUM_THREADS=1",
		"NUMEXPR_NUM_THREADS=1",
	}
}

// run is one sandboxed execution.
type run struct {
	Stdin   string
	Timeout time.Duration
}

// outcome is what a run produced.
type outcome struct {
	// Result is what the child wrote to file descriptor 3.
	Result []byte
	// Log is the child's stdout and stderr (capped), for diagnostics.
	Log      string
	TimedOut bool
	// Err is the exit error, if the process did not exit 0.
	Err error
}

// Output caps: the result channel is bounded by the harness's own cap;
// these only keep a misbehaving child from exhausting the parent.
const (
	maxResultBytes = 64 << 20
	maxLogBytes    = 64 << 10
)

// execute starts cmd, feeds it stdin, collects fd 3, and kills the whole
// process group on timeout or cancellation, and again after it exits so no
// stray descendant survives.
func execute(ctx context.Context, cmd *exec.Cmd, r run) (outcome, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return outcome{}, fmt.Errorf("create result pipe: %w", err)
	}
	defer rd.Close()
	log := &cappedBuffer{max: maxLogBytes}
	cmd.Stdin = strings.NewReader(r.Stdin)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{wr}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		wr.Close()
		return outcome{}, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	wr.Close()
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

	result := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(rd, maxResultBytes))
		result <- b
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var out outcome
	timer := time.NewTimer(r.Timeout)
	defer timer.Stop()
	select {
	case out.Err = <-waited:
	case <-timer.C:
		out.TimedOut = true
		killGroup()
		out.Err = <-waited
	case <-ctx.Done():
		killGroup()
		<-waited
		return outcome{}, ctx.Err()
	}
	killGroup()
	select {
	case out.Result = <-result:
	case <-time.After(cmd.WaitDelay):
		rd.Close()
		out.Result = <-result
	}
	out.Log = log.String()
	return out, nil
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// candidates lists the sandboxes to try, best first.
func candidates() []sandbox {
	root := os.Geteuid() == 0
	var out []sandbox
	for _, k := range []isolation{isolationBwrap, isolationUnshare} {
		name := "bwrap"
		if k == isolationUnshare {
			name = "unshare"
		}
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if root {
			out = append(out, sandbox{kind: k, tool: p, dropToNobody: true})
		}
		out = append(out, sandbox{kind: k, tool: p})
	}
	return out
}

// probeSandbox checks that s can start the interpreter, with network and
// home hidden. It returns a short reason when it cannot.
func probeSandbox(ctx context.Context, s sandbox, in *interpreter) error {
	ws, err := newWorkspace(s.owner())
	if err != nil {
		return err
	}
	defer ws.remove()
	const check = `import os, sys
os.write(3, b"ok " + str(len(os.listdir("/"))).encode())`
	cmd := s.command(in, ws, []string{in.Path, "-I", "-c", check})
	cmd.Env = cleanEnv(s.cwd(ws))
	out, err := execute(ctx, cmd, run{Timeout: 20 * time.Second})
	if err != nil {
		return err
	}
	if out.Err != nil || !strings.HasPrefix(string(out.Result), "ok ") {
		msg := strings.TrimSpace(out.Log)
		if out.Err != nil {
			msg = strings.TrimSpace(out.Err.Error() + ": " + msg)
		}
		return fmt.Errorf("%s: %s", s, firstLines(msg, 3))
	}
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}
