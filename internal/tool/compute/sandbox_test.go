package compute

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// escape reaches the real os module without an import statement, a
// blocked call or a visible dunder attribute: getattr with string names
// slips past the original tool's static checks. It shows that the import
// filter is not the security boundary, so every test below that uses it
// exercises the sandbox itself.
const escape = `_o = getattr(getattr((), '__class__'), '__base__')
_w = [c for c in getattr(_o, '__subclasses__')() if getattr(c, '__name__') == '_wrap_close'][0]
g = getattr(getattr(_w, '__init__'), '__globals__')
imp = getattr(g['sys'].modules['_frozen_importlib'], '__import__')
def attempt(f):
    try:
        return 'OK ' + str(f())
    except BaseException as e:
        return 'FAILED ' + type(e).__name__ + ': ' + str(e)
`

// boxedMath is a math tool pinned to one sandbox.
func boxedMath(t *testing.T, box sandbox, timeout time.Duration) *Math {
	t.Helper()
	base := sharedMath(t)
	py := base.env.python
	if err := probeSandbox(context.Background(), box, py); err != nil {
		t.Skipf("sandbox %s unavailable: %v", box, err)
	}
	m := newTestMath(MathOptions{Timeout: timeout})
	m.env = &mathEnv{python: py, box: box}
	return m
}

func TestEscapeWorksWithoutSandbox(t *testing.T) {
	m := boxedMath(t, sandbox{kind: isolationNone}, 30*time.Second)
	r := runCode(t, m, escape+"print(attempt(lambda: type(g['getpid']())))")
	if r.Output != "OK <class 'int'>" {
		t.Fatalf("the getattr escape should reach os (it is what the sandbox must contain): %q", r.Output)
	}
}

// TestSandboxContainment runs the same escape attempts in every sandbox
// this machine offers.
func TestSandboxContainment(t *testing.T) {
	cands := candidates()
	if len(cands) == 0 {
		t.Skip("neither bwrap nor unshare is installed")
	}
	for _, box := range cands {
		t.Run(strings.ReplaceAll(box.String(), " ", "_"), func(t *testing.T) {
			m := boxedMath(t, box, 60*time.Second)
			testContainment(t, m)
		})
	}
}

func testContainment(t *testing.T, m *Math) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	hostDir := t.TempDir()
	secret := filepath.Join(hostDir, "config.toml")
	if err := os.WriteFile(secret, []byte("api_key = 'sk-secret'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	t.Setenv("OPENAI_API_KEY", "sk-parent-secret")

	tests := []struct {
		name, code string
		want       string // substring of the output
		hostFile   string // must not exist afterwards
	}{
		{name: "socket to host loopback", want: "FAILED",
			code: fmt.Sprintf("print(attempt(lambda: imp('socket').create_connection(('127.0.0.1', %d), 3)))", port)},
		{name: "socket to the internet", want: "FAILED",
			code: "print(attempt(lambda: imp('socket').create_connection(('1.1.1.1', 80), 3)))"},
		{name: "numpy DataSource URL", want: "FAILED",
			code: fmt.Sprintf("print(attempt(lambda: np.lib._datasource.DataSource(None).open('http://127.0.0.1:%d/x').read()))", port)},
		{name: "urllib via real import", want: "FAILED",
			code: fmt.Sprintf("print(attempt(lambda: imp('urllib.request').urlopen('http://127.0.0.1:%d/', timeout=3).read()))", port)},
		{name: "passwd via numpy loadtxt", want: "FAILED",
			code: "print(attempt(lambda: np.loadtxt('/etc/passwd', dtype=str, delimiter='\\n')))"},
		{name: "passwd via os", want: "FAILED FileNotFoundError",
			code: "print(attempt(lambda: g['read'](g['open']('/etc/passwd', g['O_RDONLY']), 100)))"},
		{name: "host file via numpy", want: "FAILED",
			code: fmt.Sprintf("print(attempt(lambda: np.loadtxt(%q, dtype=str)))", secret)},
		{name: "home directory", want: "FAILED",
			code: fmt.Sprintf("print(attempt(lambda: g['listdir'](%q)))", home)},
		{name: "home config", want: "FAILED",
			code: fmt.Sprintf("print(attempt(lambda: g['listdir'](%q)))", filepath.Join(home, ".config"))},
		{name: "etc holds only loader files", want: "OK ['alternatives', 'ld.so.cache', 'localtime']",
			code: "print(attempt(lambda: sorted(g['listdir']('/etc'))))"},
		{name: "write system dir", want: "FAILED",
			code: "print(attempt(lambda: g['open']('/usr/turnstone-evil', g['O_WRONLY'] | g['O_CREAT'])))"},
		{name: "write host dir via numpy", want: "FAILED", hostFile: filepath.Join(hostDir, "evil.txt"),
			code: fmt.Sprintf("print(attempt(lambda: np.savetxt(%q, np.arange(3))))", filepath.Join(hostDir, "evil.txt"))},
		{name: "write root", want: "FAILED",
			code: "print(attempt(lambda: g['open']('/evil', g['O_WRONLY'] | g['O_CREAT'])))"},
		{name: "write scratch and tmp", want: "OK 2.0",
			code: "np.savetxt('a.txt', [1.0])\nnp.savetxt('/tmp/b.txt', [1.0])\nprint(attempt(lambda: np.loadtxt('a.txt') + np.loadtxt('/tmp/b.txt')))"},
		{name: "environment is clean", want: "OK None",
			code: "print(attempt(lambda: g['environ'].get('OPENAI_API_KEY')))"},
		{name: "environment keys", want: "HOME,LANG,MKL_NUM_THREADS,NUMEXPR_NUM_THREADS,OMP_NUM_THREADS,OPENBLAS_NUM_THREADS,PATH,PYTHONDONTWRITEBYTECODE,PYTHONIOENCODING,TMPDIR",
			code: "print(','.join(k for k in sorted(g['environ']) if k not in ('LC_CTYPE', 'PWD')))"},
		{name: "no capabilities", want: "OK ['CapEff:\\t0000000000000000']",
			code: "print(attempt(lambda: [l.strip('\\n') for l in g['fdopen'](g['open']('/proc/self/status', g['O_RDONLY'])) if l.startswith('CapEff')]))"},
		{name: "allocate 10 GB", want: "FAILED MemoryError",
			code: "print(attempt(lambda: len(bytearray(10 * 1024**3))))"},
		{name: "allocate 10 GB numpy", want: "FAILED",
			code: "print(attempt(lambda: np.ones(10 * 1024**3 // 8).sum()))"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCode(t, m, escape+tc.code)
			if !strings.Contains(r.Output, tc.want) {
				t.Fatalf("want %q in output, got (err=%v) %q", tc.want, r.IsError, r.Output)
			}
			if tc.hostFile != "" {
				if _, err := os.Stat(tc.hostFile); err == nil {
					t.Fatalf("the sandbox wrote %s on the host", tc.hostFile)
				}
			}
		})
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the host listener accepted %d connections from the sandbox", n)
	}
	if r := runCode(t, m, "print(1 + 1)"); r.Output != "2" || r.IsError {
		t.Fatalf("tool broken after the escape attempts: %q", r.Output)
	}
}

// TestForkBomb: processes are capped (RLIMIT_NPROC inside a fresh user
// namespace; when turnstone runs as root the sandbox runs as uid 65534,
// because the kernel does not apply the limit to root).
func TestForkBomb(t *testing.T) {
	m := sharedMath(t)
	if os.Geteuid() == 0 && !m.env.box.dropToNobody {
		t.Skipf("sandbox %s runs as root; RLIMIT_NPROC is not enforced there", m.env.box)
	}
	code := escape + `
n = 0
err = ''
for i in range(500):
    try:
        pid = g['fork']()
    except OSError as e:
        err = str(e)
        break
    if pid == 0:
        # A real bomb: every child forks too, then sleeps.
        try:
            g['fork']()
        except OSError:
            pass
        imp('time').sleep(30)
        g['_exit'](0)
    n += 1
print(n < 500, err)
`
	r := runCode(t, m, code)
	if r.IsError || !strings.HasPrefix(r.Output, "True ") || !strings.Contains(r.Output, "Resource temporarily unavailable") {
		t.Fatalf("fork bomb not contained: (err=%v) %q", r.IsError, r.Output)
	}
	if r := runCode(t, m, "print(1 + 1)"); r.Output != "2" {
		t.Fatalf("tool broken after fork bomb: %q", r.Output)
	}
}

// TestTimeoutKillsProcessGroup: a child process started by the code must
// not survive the timeout.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	for _, box := range append(candidates(), sandbox{kind: isolationNone}) {
		t.Run(strings.ReplaceAll(box.String(), " ", "_"), func(t *testing.T) {
			m := boxedMath(t, box, 2*time.Second)
			marker := fmt.Sprintf("%d.%d", 1000+time.Now().UnixNano()%1000, time.Now().UnixNano()%1000000)
			code := escape + fmt.Sprintf(`
if g['fork']() == 0:
    g['execv']('/bin/sleep', ['sleep', '%s'])
while True:
    pass
`, marker)
			r := runCode(t, m, code)
			if !r.IsError || r.Output != "Error:\nExecution timed out after 2s" {
				t.Fatalf("got (err=%v) %q", r.IsError, r.Output)
			}
			if pids := processesWith(marker); len(pids) > 0 {
				t.Fatalf("processes survived the timeout: %v", pids)
			}
			m.opts.Timeout = 30 * time.Second
			if r := runCode(t, m, "print(1 + 1)"); r.Output != "2" {
				t.Fatalf("tool broken after timeout: %q", r.Output)
			}
		})
	}
}

// processesWith lists pids whose command line contains s.
func processesWith(s string) []string {
	var out []string
	deadline := time.Now().Add(2 * time.Second)
	for {
		out = out[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && strings.Contains(string(b), s) && !strings.Contains(string(b), "go test") {
				out = append(out, e.Name())
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCancelKillsChild(t *testing.T) {
	m := sharedMath(t)
	p := m.Prepare(context.Background(), toolCall("while True:\n    pass"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(500 * time.Millisecond); cancel() }()
	r := p.Run(ctx, func(string) {})
	if !r.IsError || !strings.Contains(r.Output, "Execution interrupted") {
		t.Fatalf("got %q", r.Output)
	}
}

func TestRefusesWithoutSandbox(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap, no unshare
	m := newTestMath(MathOptions{Python: "/usr/bin/python3"})
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	r := runCode(t, m, "print(1)")
	if !r.IsError || !strings.Contains(r.Output, "apt-get install bubblewrap") || !strings.Contains(r.Output, "allow_unsandboxed") {
		t.Fatalf("got %q", r.Output)
	}
	// The verdict is cached: the second call does not probe again.
	if m.noBox == nil {
		t.Fatal("sandbox verdict not cached")
	}

	m = newTestMath(MathOptions{Python: "/usr/bin/python3", AllowUnsandboxed: true})
	t.Setenv("OPENAI_API_KEY", "sk-parent-secret")
	r = runCode(t, m, escape+"print(attempt(lambda: g['environ'].get('OPENAI_API_KEY')), g['getcwd']().startswith(g['environ']['HOME']))")
	if r.IsError || r.Output != "OK None True" {
		t.Fatalf("unsandboxed run: (err=%v) %q", r.IsError, r.Output)
	}
	if iso, _ := m.Isolation(context.Background()); !strings.HasPrefix(iso, "none") {
		t.Fatalf("isolation = %q", iso)
	}
}
