// Package compute holds the math tool: Python with sympy, numpy and scipy,
// run from an embedded harness inside a sandbox (no network, no view of the
// user's files, one scratch directory, CPU, memory, process and file-size
// limits, and a timeout that kills the process group).
package compute

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"turnstone/internal/tool"
)

//go:embed harness.py
var harnessSource string

// Defaults for MathOptions.
const (
	DefaultTimeout      = 120 * time.Second
	DefaultMemoryLimit  = 2 << 30  // address space; numpy and scipy need several hundred MB of mappings
	DefaultFileLimit    = 64 << 20 // largest file the code may write
	DefaultMaxProcesses = 32       // per sandbox user; forks and threads both count
	// outputChars caps what the harness keeps of printed text; the engine's
	// truncation (behavior.md §1.7) then bounds what the model sees.
	outputChars = 4 << 20
)

// MathOptions configures the math tool. Zero values mean the defaults.
type MathOptions struct {
	// Python is the interpreter (`[tools] python`). Empty: the first of
	// python3 on PATH, /usr/bin/python3, /usr/local/bin/python3 that can
	// import sympy.
	Python string
	// Timeout is the wall-clock limit (the session's tool timeout); the CPU
	// time limit is the same number of seconds.
	Timeout time.Duration
	// MemoryLimit is the child's address-space limit in bytes.
	MemoryLimit int64
	// AllowUnsandboxed runs Python without isolation (still with the
	// resource limits, the clean environment and the scratch directory as
	// its working directory) when neither bubblewrap nor unshare works.
	// Without it the tool refuses to run there.
	AllowUnsandboxed bool
}

// Math is the math tool.
type Math struct {
	spec tool.Spec
	opts MathOptions

	mu    sync.Mutex
	env   *mathEnv
	noBox error // cached: no sandbox works (detected once)
}

// mathEnv is what the first call finds out and later calls reuse.
type mathEnv struct {
	python *interpreter
	box    sandbox
}

var _ tool.Tool = (*Math)(nil)

// NewMath builds the math tool from its embedded spec
// (tool.MustLoadSchemas().MustSpec("math")). Nothing is probed until the
// first call runs.
func NewMath(spec tool.Spec, opts MathOptions) *Math {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	return &Math{spec: spec, opts: opts}
}

// Spec implements tool.Tool.
func (m *Math) Spec() tool.Spec { return m.spec }

// Prepare implements tool.Tool (behavior.md §2.1 and §2.8).
func (m *Math) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	code := codeArg(call.Args)
	if code == "" {
		return tool.Fail("✗ math: empty code", "Error: no code provided")
	}
	n := len([]rune(code))
	return &tool.Prepared{
		Header:        fmt.Sprintf("⚙ math: (%d chars)", n),
		Preview:       preview(code, n),
		NeedsApproval: true,
		ApprovalLabel: "math",
		Run: func(ctx context.Context, _ tool.Emit) tool.Result {
			return m.run(ctx, code)
		},
	}
}

// codeArg reads `code`; a list of lines (as some models send) is joined
// with newlines, as the original does.
func codeArg(args tool.Args) string {
	if lines, ok := args["code"].([]any); ok {
		parts := make([]string, len(lines))
		for i, l := range lines {
			parts[i] = tool.Args{"l": l}.String("l")
		}
		return strings.Join(parts, "\n")
	}
	return args.String("code")
}

// preview is the first 300 characters indented by 4, and a total when cut.
func preview(code string, n int) tool.Preview {
	shown := code
	if n > 300 {
		shown = string([]rune(code)[:300])
	}
	var p tool.Preview
	for _, l := range strings.Split(shown, "\n") {
		p = append(p, tool.Line{Text: "    " + l})
	}
	if n > 300 {
		p = append(p, tool.Line{Text: fmt.Sprintf("... (%d chars total)", n)})
	}
	return p
}

// run executes code and turns the outcome into model text.
func (m *Math) run(ctx context.Context, code string) tool.Result {
	env, err := m.environment(ctx)
	if err != nil {
		return tool.ErrorResult("Error:\n" + err.Error())
	}
	output, ok := m.execute(ctx, env, code)
	if !ok {
		return tool.ErrorResult("Error:\n" + output)
	}
	if output == "" {
		output = "(no output)"
	}
	return tool.Result{Output: output}
}

// environment finds the interpreter and the sandbox on first use. A missing
// interpreter is retried on the next call (installing the packages fixes it
// without a restart); the sandbox verdict is kept for the tool's lifetime.
func (m *Math) environment(ctx context.Context) (*mathEnv, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.env != nil {
		return m.env, nil
	}
	if m.noBox != nil {
		return nil, m.noBox
	}
	py, err := findInterpreter(ctx, m.opts.Python)
	if err != nil {
		return nil, err
	}
	box, err := chooseSandbox(ctx, py, m.opts.AllowUnsandboxed)
	if err != nil {
		if ctx.Err() == nil {
			m.noBox = err
		}
		return nil, err
	}
	m.env = &mathEnv{python: py, box: box}
	return m.env, nil
}

// chooseSandbox returns the first working sandbox, or isolation "none" when
// allowed, or an error that says how to install bubblewrap.
func chooseSandbox(ctx context.Context, py *interpreter, allowUnsandboxed bool) (sandbox, error) {
	var reasons []string
	for _, c := range candidates() {
		err := probeSandbox(ctx, c, py)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return sandbox{}, ctx.Err()
		}
		reasons = append(reasons, err.Error())
	}
	if allowUnsandboxed {
		return sandbox{kind: isolationNone}, nil
	}
	why := "neither bwrap nor unshare is installed"
	if len(reasons) > 0 {
		why = "no sandbox works here (" + strings.Join(reasons, "; ") + ")"
	}
	return sandbox{}, fmt.Errorf("the math tool runs Python only inside a sandbox, and %s. "+
		"Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) "+
		"and allow unprivileged user namespaces, or set [tools] allow_unsandboxed = true to run the code "+
		"without isolation (it could then read your files and use the network)", why)
}

// harnessConfig is argv[1] of the harness.
type harnessConfig struct {
	ResultFD     int    `json:"result_fd"`
	Cwd          string `json:"cwd"`
	CPUSeconds   int    `json:"cpu_seconds"`
	MemoryBytes  int64  `json:"memory_bytes"`
	MaxProcesses int    `json:"max_processes"`
	FileBytes    int64  `json:"file_bytes"`
	OutputChars  int    `json:"output_chars"`
}

func (m *Math) config(cwd string) harnessConfig {
	return harnessConfig{
		ResultFD:     3,
		Cwd:          cwd,
		CPUSeconds:   int(math.Ceil(m.opts.Timeout.Seconds())),
		MemoryBytes:  m.opts.MemoryLimit,
		MaxProcesses: DefaultMaxProcesses,
		FileBytes:    DefaultFileLimit,
		OutputChars:  outputChars,
	}
}

// execute runs the harness once in a fresh scratch directory and returns
// the text and whether the run succeeded.
func (m *Math) execute(ctx context.Context, env *mathEnv, code string) (string, bool) {
	ws, err := newWorkspace(env.box.owner())
	if err != nil {
		return err.Error(), false
	}
	defer ws.remove()
	cfg, err := json.Marshal(m.config(env.box.cwd(ws)))
	if err != nil {
		return fmt.Sprintf("encode harness config: %v", err), false
	}
	cmd := env.box.command(env.python, ws, []string{env.python.Path, "-I", "-c", harnessSource, string(cfg)})
	cmd.Env = cleanEnv(env.box.cwd(ws))
	out, err := execute(ctx, cmd, run{Stdin: code, Timeout: m.opts.Timeout})
	if err != nil {
		return fmt.Sprintf("Execution interrupted: %v", err), false
	}
	if out.TimedOut {
		return "Execution timed out after " + seconds(m.opts.Timeout) + "s", false
	}
	var res struct {
		OK     bool   `json:"ok"`
		Output string `json:"output"`
	}
	if len(out.Result) == 0 || json.Unmarshal(out.Result, &res) != nil {
		return m.noResult(out), false
	}
	return res.Output, res.OK
}

// noResult explains a child that died before reporting.
func (m *Math) noResult(out outcome) string {
	msg := "Execution failed with no output"
	switch sig := signalOf(out.Err); {
	case sig == syscall.SIGXCPU:
		msg += fmt.Sprintf(" (CPU time limit of %ss exceeded)", seconds(m.opts.Timeout))
	case sig == syscall.SIGKILL || sig == syscall.SIGSEGV:
		msg += fmt.Sprintf(" (the process was killed by %v, often from exceeding the memory limit)", sig)
	case out.Err != nil:
		msg += fmt.Sprintf(" (%v)", out.Err)
	}
	if log := strings.TrimSpace(out.Log); log != "" {
		msg += "\n" + lastLines(log, 20)
	}
	return msg
}

// signalOf is the signal that ended the child: directly, or as reported by
// a sandbox wrapper through an exit code of 128+n.
func signalOf(err error) syscall.Signal {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	if c := ee.ExitCode(); c > 128 && c < 128+65 {
		return syscall.Signal(c - 128)
	}
	return 0
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// seconds formats a timeout the way the messages show it: "120", "0.5".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Isolation describes the sandbox the tool uses, probing it if needed; for
// `turnstone doctor`-style diagnostics and the docs' claims in tests.
func (m *Math) Isolation(ctx context.Context) (string, error) {
	env, err := m.environment(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s, python %s (%s)", env.box, env.python.Version, env.python.Path), nil
}
