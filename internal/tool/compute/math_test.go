package compute

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"turnstone/internal/tool"
)

func newTestMath(opts MathOptions) *Math {
	return NewMath(tool.MustLoadSchemas().MustSpec("math"), opts)
}

// runCode prepares and runs code through the tool, as the engine would.
func runCode(t *testing.T, m *Math, code string) tool.Result {
	t.Helper()
	p := m.Prepare(context.Background(), tool.Call{ID: "c1", Name: "math", Args: tool.Args{"code": code}})
	if p.Err != "" {
		t.Fatalf("prepare failed: %s", p.Err)
	}
	return p.Run(context.Background(), func(string) {})
}

// shared is one tool instance for the package's tests, so the sandbox and
// interpreter are probed once, as in a session.
var shared struct {
	once sync.Once
	m    *Math
	err  error
}

func sharedMath(t *testing.T) *Math {
	t.Helper()
	shared.once.Do(func() {
		shared.m = newTestMath(MathOptions{Timeout: 60 * time.Second})
		_, shared.err = shared.m.Isolation(context.Background())
	})
	if shared.err != nil {
		t.Skipf("math tool unavailable here: %v", shared.err)
	}
	return shared.m
}

func TestPrepare(t *testing.T) {
	m := newTestMath(MathOptions{})
	if !m.Spec().AutoApprove || m.Spec().Name != "math" {
		t.Fatalf("spec = %+v", m.Spec())
	}
	long := strings.Repeat("é", 301)
	tests := []struct {
		name        string
		args        tool.Args
		header, err string
		preview     string
	}{
		{name: "empty", args: tool.Args{"code": ""}, header: "✗ math: empty code", err: "Error: no code provided"},
		{name: "missing", args: tool.Args{}, header: "✗ math: empty code", err: "Error: no code provided"},
		{name: "short", args: tool.Args{"code": "x = 1\nprint(x)"}, header: "⚙ math: (14 chars)", preview: "    x = 1\n    print(x)"},
		{name: "long counts characters", args: tool.Args{"code": long}, header: "⚙ math: (301 chars)",
			preview: "    " + strings.Repeat("é", 300) + "\n... (301 chars total)"},
		{name: "list of lines", args: tool.Args{"code": []any{"a = 2", "a"}}, header: "⚙ math: (7 chars)", preview: "    a = 2\n    a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := m.Prepare(context.Background(), tool.Call{Name: "math", Args: tc.args})
			if p.Header != tc.header || p.Err != tc.err {
				t.Fatalf("header %q err %q; want %q %q", p.Header, p.Err, tc.header, tc.err)
			}
			if tc.err != "" {
				if p.NeedsApproval || p.Run != nil {
					t.Fatalf("error item must not need approval or run: %+v", p)
				}
				return
			}
			if !p.NeedsApproval || p.ApprovalLabel != "math" {
				t.Fatalf("approval = %v %q", p.NeedsApproval, p.ApprovalLabel)
			}
			if got := p.Preview.String(); got != tc.preview {
				t.Fatalf("preview = %q, want %q", got, tc.preview)
			}
		})
	}
}

func TestHarnessBehaviour(t *testing.T) {
	m := sharedMath(t)
	tests := []struct {
		name, code string
		want       string // exact model text, or a prefix when prefix is set
		prefix     bool
		isErr      bool
	}{
		{name: "sympy solve", code: "x = symbols('x')\nprint(solve(x**2 - 4, x))", want: "[-2, 2]"},
		{name: "sympy integrate auto-print", code: "x = symbols('x')\nintegrate(x**2, (x, 0, 3))", want: "9"},
		{name: "sympy module", code: "sympy.factorint(360)", want: "{2: 3, 3: 2, 5: 1}"},
		{name: "numpy", code: "print(int(round(np.linalg.det(np.array([[1, 2], [3, 4]])))))", want: "-2"},
		{name: "numpy alias", code: "numpy.arange(5).sum()", want: "10"},
		{name: "scipy optimize", code: "print(round(optimize.brentq(lambda x: x**2 - 2, 0, 2), 6))", want: "1.414214"},
		{name: "scipy integrate", code: "v, _ = scipy.integrate.quad(lambda x: x, 0, 2)\nround(v, 6)", want: "2.0"},
		{name: "scipy special names", code: "print(gamma(5), comb(5, 2), perm(4, 2))", want: "24.0 10.0 12.0"},
		{name: "stdlib names", code: "print(Fraction(1, 3) + Fraction(1, 6), Decimal('0.1') + Decimal('0.2'), math.factorial(5))", want: "1/2 0.3 120"},
		{name: "auto-print multi-line expression", code: "a = 2\n(a +\n 3)", want: "5"},
		{name: "auto-print same line", code: "a = 7; a * 6", want: "42"},
		{name: "no auto-print when printing", code: "a = 1\nprint('p')\na", want: "p"},
		{name: "no auto-print for statement", code: "a = 1", want: "No output. Add print() to see results."},
		{name: "result alone", code: "result = 6 * 7", want: "42"},
		{name: "result after print", code: "print('hi')\nresult = [1, 2]", want: "hi\nresult = [1, 2]"},
		{name: "result None", code: "result = None", want: "No output. Add print() to see results."},
		{name: "result suppresses auto-print", code: "result = 1\n2 + 2", want: "1"},
		{name: "trailing whitespace trimmed", code: "print('a  \\n\\n')", want: "a"},
		{name: "validation import", code: "import os", want: "Error:\nValidation errors:\n- Import of 'os' is not allowed", isErr: true},
		{name: "validation import dotted", code: "import urllib.request", want: "Error:\nValidation errors:\n- Import of 'urllib.request' is not allowed", isErr: true},
		{name: "validation from-import", code: "from subprocess import run", want: "Error:\nValidation errors:\n- Import from 'subprocess' is not allowed", isErr: true},
		{name: "validation open", code: "open('/etc/passwd').read()", want: "Error:\nValidation errors:\n- Call to 'open' is not allowed", isErr: true},
		{name: "validation dunder", code: "().__class__.__base__.__subclasses__()", want: "Error:\nValidation errors:\n- Access to '__subclasses__' is not allowed\n- Access to '__base__' is not allowed", isErr: true},
		{name: "validation several", code: "import sys\neval('1')\nx.__dict__", want: "Error:\nValidation errors:\n- Import of 'sys' is not allowed\n- Call to 'eval' is not allowed\n- Access to '__dict__' is not allowed", isErr: true},
		{name: "allowed dunders", code: "print((1).__class__.__name__)", want: "int"},
		{name: "syntax error", code: "x = (1 +", want: "Error:\nValidation errors:\n- Syntax error on line 1: '(' was never closed\n  1: x = (1 +\n          ^", isErr: true},
		{name: "syntax error line 2", code: "x = 1\ny = = 2", want: "Error:\nValidation errors:\n- Syntax error on line 2: invalid syntax\n  2: y = = 2\n          ^", isErr: true},
		{name: "runtime import blocked", code: "m = __import__('socket')", want: "Error:\nImportError: Import of 'socket' is blocked\n", prefix: true, isErr: true},
		{name: "allowed runtime import", code: "import statistics\nstatistics.mean([1, 2, 3])", want: "2"},
		{name: "blocked builtin missing at runtime", code: "f = [b for b in [1]]\nprint(vars)", want: "Error:\nNameError: name 'vars' is not defined", prefix: true, isErr: true},
		{name: "exception with traceback", code: "def f():\n    return 1 / 0\nf()", want: "Error:\nZeroDivisionError: division by zero\nTraceback (most recent call last):\n  File \"<code>\", line 3, in <module>", prefix: true, isErr: true},
		{name: "int digit limit", code: "print(10 ** 100001)", want: "Error:\nValueError: Exceeds the limit (100000 digits)", prefix: true, isErr: true},
		{name: "int below digit limit", code: "print(len(str(10 ** 99998)))", want: "99999"},
		{name: "exit is a failure", code: "exit(3)", want: "Error:\nSystemExit: 3", prefix: true, isErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCode(t, m, tc.code)
			ok := r.Output == tc.want
			if tc.prefix {
				ok = strings.HasPrefix(r.Output, tc.want)
			}
			if !ok || r.IsError != tc.isErr {
				t.Fatalf("code %q:\ngot  (err=%v) %q\nwant (err=%v) %q", tc.code, r.IsError, r.Output, tc.isErr, tc.want)
			}
		})
	}
}

func TestTracebackHasNoHarnessFrames(t *testing.T) {
	m := sharedMath(t)
	r := runCode(t, m, "raise ValueError('boom')")
	if !r.IsError || strings.Contains(r.Output, "harness") || strings.Contains(r.Output, "builtins.exec") {
		t.Fatalf("got %q", r.Output)
	}
	if !strings.Contains(r.Output, "raise ValueError('boom')") {
		t.Fatalf("traceback lacks the source line: %q", r.Output)
	}
}

// TestMissingLibraryNamesDebianPackage uses a venv without system packages,
// which has neither sympy nor numpy.
func TestMissingLibraryNamesDebianPackage(t *testing.T) {
	sharedMath(t)
	dir := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot create a venv: %v: %s", err, out)
	}
	m := newTestMath(MathOptions{Python: filepath.Join(dir, "bin", "python3"), Timeout: 60 * time.Second})
	if _, err := m.Isolation(context.Background()); err != nil {
		t.Skipf("venv interpreter cannot run in a sandbox here: %v", err)
	}
	for lib, code := range map[string]string{"numpy": "np.zeros(2)", "sympy": "x = symbols('x')", "scipy": "special.gamma(3)"} {
		r := runCode(t, m, code)
		if !r.IsError || !strings.Contains(r.Output, "NameError") || !strings.Contains(r.Output, "python3-"+lib) {
			t.Errorf("%s: got %q", lib, r.Output)
		}
	}
	if r := runCode(t, m, "print(math.sqrt(16))"); r.Output != "4.0" {
		t.Errorf("stdlib still works: %q", r.Output)
	}
}

func TestNoInterpreterNamesPackages(t *testing.T) {
	m := newTestMath(MathOptions{Python: "/nonexistent/python3"})
	r := runCode(t, m, "print(1)")
	if !r.IsError || !strings.Contains(r.Output, "/nonexistent/python3") {
		t.Fatalf("got %q", r.Output)
	}
	t.Setenv("PATH", t.TempDir())
	_, err := findInterpreter(context.Background(), "")
	if err != nil && !strings.Contains(err.Error(), "python3-sympy python3-numpy python3-scipy") {
		t.Fatalf("error does not name the packages: %v", err)
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{120 * time.Second: "120", 1500 * time.Millisecond: "1.5"} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestScratchRemoved(t *testing.T) {
	m := sharedMath(t)
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "turnstone-math-*"))
	marker := fmt.Sprintf("marker-%d", time.Now().UnixNano())
	r := runCode(t, m, fmt.Sprintf("np.savetxt(%q, np.arange(3))\nprint(np.loadtxt(%q).sum())", marker, marker))
	if r.Output != "3.0" {
		t.Fatalf("writing in the scratch directory failed: %q", r.Output)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "turnstone-math-*"))
	for _, d := range after {
		if _, err := os.Stat(filepath.Join(d, "work", marker)); err == nil {
			t.Fatalf("scratch directory %s survived the call (before: %v)", d, before)
		}
	}
}

func toolCall(code string) tool.Call {
	return tool.Call{ID: "c1", Name: "math", Args: tool.Args{"code": code}}
}
