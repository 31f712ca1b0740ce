// Command math times the math tool's first result against bare Python.
//
// It reports medians over -n runs of:
//   - the tool's first call (interpreter and sandbox probes included);
//   - print(1+1) through the tool (libraries are loaded only when the code
//     names them, so this one loads none);
//   - print(1+1) through the tool with sympy, numpy and scipy named, so all
//     three load as in the original tool;
//   - bare `python3 -c 'import sympy, numpy, scipy; print(1+1)'` and bare
//     `python3 -c 'print(1+1)'` with the same interpreter, outside any sandbox.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"turnstone/internal/tool"
	"turnstone/internal/tool/compute"
)

func main() {
	n := flag.Int("n", 7, "runs per measurement")
	python := flag.String("python", "", "interpreter (default: the tool's own choice)")
	flag.Parse()
	if err := run(*n, *python); err != nil {
		fmt.Fprintln(os.Stderr, "bench/math:", err)
		os.Exit(1)
	}
}

func run(n int, python string) error {
	ctx := context.Background()
	m := compute.NewMath(tool.MustLoadSchemas().MustSpec("math"), compute.MathOptions{Python: python})
	call := func(code string) (time.Duration, error) {
		start := time.Now()
		p := m.Prepare(ctx, tool.Call{ID: "b", Name: "math", Args: tool.Args{"code": code}})
		r := p.Run(ctx, func(string) {})
		d := time.Since(start)
		if r.IsError || r.Output != "2" {
			return d, fmt.Errorf("tool returned %q", r.Output)
		}
		return d, nil
	}
	first, err := call("print(1+1)")
	if err != nil {
		return err
	}
	iso, err := m.Isolation(ctx)
	if err != nil {
		return err
	}
	py := python
	if py == "" {
		py = pythonOf(iso)
	}
	plain, err := median(n, func() (time.Duration, error) { return call("print(1+1)") })
	if err != nil {
		return err
	}
	all, err := median(n, func() (time.Duration, error) { return call("sympy, np, scipy\nprint(1+1)") })
	if err != nil {
		return err
	}
	bare := func(code string) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			start := time.Now()
			out, err := exec.Command(py, "-c", code).Output()
			if err != nil || string(out) != "2\n" {
				return 0, fmt.Errorf("%s -c %q: %v %q", py, code, err, out)
			}
			return time.Since(start), nil
		}
	}
	bareLibs, err := median(n, bare("import sympy, numpy, scipy; print(1+1)"))
	if err != nil {
		return err
	}
	bareFull, err := median(n, bare("import sympy, numpy, scipy, scipy.integrate, scipy.linalg, scipy.optimize, scipy.special; print(1+1)"))
	if err != nil {
		return err
	}
	barePlain, err := median(n, bare("print(1+1)"))
	if err != nil {
		return err
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%7.1f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("isolation: %s\n", iso)
	fmt.Printf("medians of %d runs\n", n)
	fmt.Printf("tool, first call (probes included)         %s\n", ms(first))
	fmt.Printf("tool, print(1+1)                           %s\n", ms(plain))
	fmt.Printf("tool, print(1+1) with all libraries loaded %s\n", ms(all))
	fmt.Printf("bare python3 -c 'import sympy, numpy, scipy; print(1+1)' %s\n", ms(bareLibs))
	fmt.Printf("bare, also scipy.integrate/linalg/optimize/special       %s\n", ms(bareFull))
	fmt.Printf("bare python3 -c 'print(1+1)'                             %s\n", ms(barePlain))
	fmt.Printf("ratio tool print(1+1) / bare with imports:        %.2fx (goal < 1.5x)\n", ratio(plain, bareLibs))
	fmt.Printf("ratio tool all libraries / bare with imports:     %.2fx\n", ratio(all, bareLibs))
	fmt.Printf("ratio tool all libraries / bare with same imports: %.2fx\n", ratio(all, bareFull))
	fmt.Printf("import share, tool with all libraries: %.0f%%\n", 100*(1-ratio(plain, all)))
	fmt.Printf("import share, bare python:             %.0f%%\n", 100*(1-ratio(barePlain, bareLibs)))
	return nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func median(n int, f func() (time.Duration, error)) (time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		d, err := f()
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

// pythonOf extracts the interpreter path from Isolation's description
// "<sandbox>, python <version> (<path>)".
func pythonOf(iso string) string {
	var i int
	for i = len(iso) - 1; i >= 0 && iso[i] != '('; i-- {
	}
	if i < 0 || iso[len(iso)-1] != ')' {
		return "python3"
	}
	return iso[i+1 : len(iso)-1]
}
