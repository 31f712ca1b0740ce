package compute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// defaultPythons are tried in order when no interpreter is configured; the
// first that can import sympy wins.
var defaultPythons = []string{"python3", "/usr/bin/python3", "/usr/local/bin/python3"}

// installHint names the Debian packages the tool needs.
const installHint = "apt-get install python3-sympy python3-numpy python3-scipy"

// interpreter is a probed Python.
type interpreter struct {
	// Path is what gets executed (possibly a venv symlink).
	Path    string
	Version string
	// Dirs are the absolute directories the interpreter reads from (prefixes
	// and sys.path entries); the sandbox binds them read-only.
	Dirs []string
	// Libs records which optional libraries were found.
	Libs map[string]bool
}

// probeScript prints what the sandbox needs to know about an interpreter.
// It uses find_spec, not import, so a probe costs tens of milliseconds.
const probeScript = `import json, os, sys, importlib.util as u
dirs = [p for p in sys.path if os.path.isabs(p)]
dirs += [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
dirs += [os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(sys.executable)]
print(json.dumps({"version": sys.version.split()[0], "dirs": dirs, "executable": sys.executable,
  "libs": {m: u.find_spec(m) is not None for m in ("sympy", "numpy", "scipy")}}))`

// probeInterpreter runs probeScript with the interpreter at path.
func probeInterpreter(ctx context.Context, path string) (*interpreter, error) {
	resolved, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("python interpreter %q not found: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, resolved, "-I", "-c", probeScript)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("probe python interpreter %s: %w: %s", resolved, err, strings.TrimSpace(stderr.String()))
	}
	var p struct {
		Version    string          `json:"version"`
		Executable string          `json:"executable"`
		Dirs       []string        `json:"dirs"`
		Libs       map[string]bool `json:"libs"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, fmt.Errorf("probe python interpreter %s: unexpected output %q: %w", resolved, out, err)
	}
	if !strings.HasPrefix(p.Version, "3.") {
		return nil, fmt.Errorf("python interpreter %s is version %s; the math tool needs Python 3", resolved, p.Version)
	}
	// sys.executable, not the path we ran: wrappers such as pyenv shims
	// are shell scripts that cannot run inside the sandbox.
	exe := p.Executable
	if !filepath.IsAbs(exe) {
		if exe, err = filepath.Abs(resolved); err != nil {
			return nil, fmt.Errorf("resolve python interpreter %s: %w", resolved, err)
		}
	}
	return &interpreter{Path: exe, Version: p.Version, Dirs: existingDirs(p.Dirs), Libs: p.Libs}, nil
}

// findInterpreter returns the configured interpreter, or else the first
// default candidate that has sympy, numpy and scipy, or else the first that
// has sympy.
func findInterpreter(ctx context.Context, configured string) (*interpreter, error) {
	if configured != "" {
		return probeInterpreter(ctx, configured)
	}
	var tried []string
	var withSympy *interpreter
	for _, c := range defaultPythons {
		in, err := probeInterpreter(ctx, c)
		if err != nil {
			if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, os.ErrNotExist) {
				tried = append(tried, err.Error())
			}
			continue
		}
		if in.Libs["sympy"] && in.Libs["numpy"] && in.Libs["scipy"] {
			return in, nil
		}
		if in.Libs["sympy"] && withSympy == nil {
			withSympy = in
		}
		tried = append(tried, in.Path+" (no sympy)")
	}
	if withSympy != nil {
		return withSympy, nil
	}
	return nil, fmt.Errorf("no Python 3 interpreter with sympy found (tried %s; candidates %s): install the Debian packages (%s) or set [tools] python in config.toml",
		strings.Join(tried, ", "), strings.Join(defaultPythons, ", "), installHint)
}

// existingDirs keeps absolute, existing directories, resolved through
// symlinks and without duplicates or directories nested in one another.
func existingDirs(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range in {
		if !filepath.IsAbs(d) {
			continue
		}
		for _, p := range []string{filepath.Clean(d), resolveLinks(d)} {
			if p == "" || seen[p] {
				continue
			}
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				continue
			}
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func resolveLinks(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}
