package fileops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"turnstone/internal/tool"
)

func newSearch() *Search { return NewSearch(schemas.MustSpec("search"), SearchOptions{}) }

// tree writes files (name → content) under a new temp dir.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	return dir
}

func TestSearchPrepare(t *testing.T) {
	s := newSearch()
	tests := []struct {
		name   string
		args   tool.Args
		header string
		err    string
	}{
		{"missing query", tool.Args{"path": "."}, "✗ search: missing query", "Error: missing query"},
		{"default path", tool.Args{"query": "foo"}, "⚙ search: /foo/ in .", ""},
		{"path", tool.Args{"query": "a|b", "path": "src"}, "⚙ search: /a|b/ in src", ""},
		{"invalid regex", tool.Args{"query": "a(b"}, "✗ search: invalid regex",
			"Error: invalid regex /a(b/: missing closing ): `a(b`. The search uses Go's RE2 syntax (POSIX extended regex without backreferences or lookaround)."},
		{"backreference", tool.Args{"query": `(a)\1`}, "✗ search: invalid regex",
			"Error: invalid regex /(a)\\1/: invalid escape sequence: `\\1`. The search uses Go's RE2 syntax (POSIX extended regex without backreferences or lookaround)."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, s, tc.args)
			if p.Header != tc.header || p.Err != tc.err || p.NeedsApproval {
				t.Fatalf("got %q %q approval=%v", p.Header, p.Err, p.NeedsApproval)
			}
			if tc.err == "" && (len(p.Preview) != 1 || p.Preview[0].Style != tool.StyleDim || "⚙ search: "+p.Preview[0].Text != tc.header) {
				t.Fatalf("preview %+v", p.Preview)
			}
		})
	}
}

func TestSearchHomeExpansion(t *testing.T) {
	home := tree(t, map[string]string{"notes.txt": "needle\n"})
	t.Setenv("HOME", home)
	res := call(t, newSearch(), tool.Args{"query": "needle", "path": "~"})
	if res.Output != home+"/notes.txt:1:needle" {
		t.Fatalf("got %q", res.Output)
	}
}

func TestSearchMatching(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.go":       "package a\nfunc Foo() {}\nfunc bar() {}\n",
		"sub/b.txt":  "Foo\r\nfoo\nFOO",
		"sub/c.md":   "nothing here\n",
		"z/deep/d.c": "int foo_bar;\n",
	})
	tests := []struct {
		name, query, want string
	}{
		{"literal", "Foo", "a.go:2:func Foo() {}\nsub/b.txt:1:Foo"},
		{"regex", "^func [a-z]+", "a.go:3:func bar() {}"},
		{"alternation", "FOO|bar\\(", "a.go:3:func bar() {}\nsub/b.txt:3:FOO"},
		{"case-insensitive flag", "(?i)^foo", "sub/b.txt:1:Foo\nsub/b.txt:2:foo\nsub/b.txt:3:FOO"},
		{"dollar before CR does not match (like grep)", "Foo$", ""},
		{"word boundary \\< \\>", `\<foo\>`, "sub/b.txt:2:foo"},
		{"{,n} interval", "o{,1}_bar", "z/deep/d.c:1:int foo_bar;"},
		{"posix class", "^[[:upper:]]+$", "sub/b.txt:3:FOO"},
		{"no match", "xyzzy", ""},
		{"no cross-line match", "here[^x]nothing", ""},
		{"empty lines not invented", "^$", ""},
		{"leading star literal", "*", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, newSearch(), tool.Args{"query": tc.query, "path": dir})
			want := "(no matches)"
			if tc.want != "" {
				lines := strings.Split(tc.want, "\n")
				for i, l := range lines {
					lines[i] = dir + "/" + l
				}
				want = strings.Join(lines, "\n")
			}
			if res.Output != want || res.IsError {
				t.Fatalf("got %q\nwant %q", res.Output, want)
			}
		})
	}
}

func TestSearchPathsAsGiven(t *testing.T) {
	dir := tree(t, map[string]string{"x/y.txt": "hit\n"})
	t.Chdir(dir)
	for path, want := range map[string]string{
		".":       "./x/y.txt:1:hit",
		"x":       "x/y.txt:1:hit",
		"x/":      "x/y.txt:1:hit",
		"x/y.txt": "x/y.txt:1:hit",
	} {
		res := call(t, newSearch(), tool.Args{"query": "hit", "path": path})
		if res.Output != want {
			t.Errorf("path %q: got %q, want %q", path, res.Output, want)
		}
	}
	res := call(t, newSearch(), tool.Args{"query": "hit"})
	if res.Output != "./x/y.txt:1:hit" || res.Summary != "1 matches" {
		t.Errorf("default path: %q %q", res.Output, res.Summary)
	}
}

func TestSearchSummaryAndOrder(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%02d/f.txt", 29-i)] = "m\nm\n"
	}
	files["d-x/f.txt"] = "m\n"
	dir := tree(t, files)
	res := call(t, newSearch(), tool.Args{"query": "m", "path": dir})
	lines := strings.Split(res.Output, "\n")
	if len(lines) != 61 || lines[0] != dir+"/d-x/f.txt:1:m" || lines[1] != dir+"/d00/f.txt:1:m" ||
		lines[2] != dir+"/d00/f.txt:2:m" || lines[60] != dir+"/d29/f.txt:2:m" {
		t.Fatalf("order: %v", lines[:3])
	}
	if res.Summary != fmt.Sprintf("61 matches (%d chars)", len(res.Output)) {
		t.Fatalf("summary %q", res.Summary)
	}
	res = call(t, newSearch(), tool.Args{"query": "nope", "path": dir})
	if res.Summary != "no matches" || res.Output != "(no matches)" {
		t.Fatalf("got %q %q", res.Output, res.Summary)
	}
}

func TestSearchPerFileCap(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	// A long file read in several chunks keeps exact line numbers.
	long := strings.Repeat(strings.Repeat("x", 99)+"\n", 5000) + "late hit\n"
	dir := tree(t, map[string]string{"many.txt": b.String(), "few.txt": "hit\n", "long.txt": long})
	res := call(t, newSearch(), tool.Args{"query": "hit", "path": dir})
	lines := strings.Split(res.Output, "\n")
	if len(lines) != 202 || lines[1] != dir+"/long.txt:5001:late hit" || lines[201] != dir+"/many.txt:200:hit 199" {
		t.Fatalf("%d lines: %q ... %q", len(lines), lines[1], lines[len(lines)-1])
	}
}

func TestSearchSkips(t *testing.T) {
	dir := tree(t, map[string]string{
		"text.txt":         "needle\n",
		"bin.dat":          "needle\x00\n",
		".hidden/h.txt":    "needle\n",
		".env":             "needle\n",
		".git/config":      "needle\n",
		".hg/store":        "needle\n",
		".svn/entries":     "needle\n",
		"sub/.git/HEAD":    "needle\n",
		"late-nul.txt":     strings.Repeat("a\n", 5000) + "needle\x00\n",
		"invalid-utf8.txt": "needle \xff\n",
		"sub/visible.txt":  "needle\n",
	})
	if err := os.Symlink(filepath.Join(dir, "text.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	res := call(t, newSearch(), tool.Args{"query": "needle", "path": dir})
	want := []string{".env:1:needle", ".hidden/h.txt:1:needle", "invalid-utf8.txt:1:needle \uFFFD",
		"late-nul.txt:5001:needle\x00", "sub/visible.txt:1:needle", "text.txt:1:needle"}
	for i := range want {
		want[i] = dir + "/" + want[i]
	}
	if res.Output != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s", res.Output)
	}
	// A binary file named directly is skipped too.
	if res := call(t, newSearch(), tool.Args{"query": "needle", "path": filepath.Join(dir, "bin.dat")}); res.Output != "(no matches)" {
		t.Fatalf("binary root: %q", res.Output)
	}
}

func TestSearchErrors(t *testing.T) {
	dir := t.TempDir()
	res := call(t, newSearch(), tool.Args{"query": "x", "path": filepath.Join(dir, "nope")})
	if !res.IsError || res.Output != "Error: "+filepath.Join(dir, "nope")+" not found" {
		t.Fatalf("got %q", res.Output)
	}
	if res := call(t, newSearch(), tool.Args{"query": "x", "path": "/dev/null"}); !res.IsError ||
		res.Output != "Search error: /dev/null: not a regular file or directory" {
		t.Fatalf("device: %q", res.Output)
	}
	if os.Geteuid() != 0 {
		d := tree(t, map[string]string{"ok.txt": "x\n", "locked/f.txt": "x\n"})
		if err := os.Chmod(filepath.Join(d, "locked"), 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(filepath.Join(d, "locked"), 0o755)
		res := call(t, newSearch(), tool.Args{"query": "x", "path": d})
		want := d + "/ok.txt:1:x\n[1 paths could not be read, e.g. " + d + "/locked: open: permission denied]"
		if res.Output != want || res.IsError {
			t.Fatalf("got %q", res.Output)
		}
	}
}

func TestSearchTimeoutKeepsPartialResults(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "hit\n"})
	s := NewSearch(schemas.MustSpec("search"), SearchOptions{Timeout: time.Nanosecond})
	res := call(t, s, tool.Args{"query": "hit", "path": dir})
	if !res.IsError || !strings.HasSuffix(res.Output, "[search timed out after 1ns; results are partial]") {
		t.Fatalf("got %q", res.Output)
	}
	p := prepare(t, newSearch(), tool.Args{"query": "hit", "path": dir})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := p.Run(ctx, nil); !res.IsError || !strings.HasSuffix(res.Output, "[search interrupted; results are partial]") {
		t.Fatalf("got %q", res.Output)
	}
}

func TestTranslateERE(t *testing.T) {
	for in, want := range map[string]string{
		`\<word\>`:      `\bword\b`,
		`a{,3}`:         `a{0,3}`,
		`*x`:            `\*x`,
		`[\<]`:          `[\<]`,
		`[]{,]x`:        `[]{,]x`,
		`[[:alpha:]\<]`: `[[:alpha:]\<]`,
		"a\nb":          `(?:a)|(?:b)`,
		`\.`:            `\.`,
	} {
		if got := translateERE(in); got != want {
			t.Errorf("translateERE(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatcherStrategies(t *testing.T) {
	for q, want := range map[string][2]string{
		"func main":        {"func main", ""},
		`errors\.New\("x+`: {"", `errors.New("`},
		`(?i)foo`:          {"", ""},
		`[a-z]+Error\(`:    {"", "Error("},
		`(abc|abd)`:        {"", "ab"},
		`(a|b)c`:           {"", ""},
		`x(yz)+`:           {"", "yz"},
	} {
		m, err := compilePattern(q)
		if err != nil {
			t.Fatal(err)
		}
		// a one-byte needle is not worth it
		if string(m.literal) != want[0] || (string(m.needle) != want[1] && !(len(want[1]) < 2 && m.needle == nil)) {
			t.Errorf("%q: literal %q needle %q, want %q %q", q, m.literal, m.needle, want[0], want[1])
		}
	}
}

func BenchmarkSearchGOROOT(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command")
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no GOROOT/src")
	}
	for _, q := range []string{"func main", `errors\.New\("[a-z]+`, "xyzzyplugh", "err"} {
		m, err := compilePattern(q)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				if _, err := searchPath(context.Background(), m, root, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestFinderAgreesWithBytesIndex(t *testing.T) {
	lits := []string{"a", "ab", "err", "func main", `errors.New("`, "xyzzyplugh", "aaa", "zz", "é", "\x00x", "Nn"}
	hay := []string{"", "a", "b", "ab", "ba", "aab", "xx errors.New(\"x\")", "errors.New(errors.New(\"",
		"func mai func main", "zzz", "résumé", "x\x00x", "NNn", "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeerr"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 { // random text over a small alphabet, so literals occur
		b := make([]byte, rng.IntN(200))
		for i := range b {
			const alphabet = "aberz Nn\"(.wo"
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		hay = append(hay, string(b))
	}
	for _, l := range lits {
		f := newFinder([]byte(l))
		for _, h := range hay {
			for _, from := range []int{0, 1} {
				if from > len(h) {
					continue
				}
				if got, want := f.index([]byte(h[from:])), strings.Index(h[from:], l); got != want {
					t.Fatalf("index(%q in %q) = %d, want %d", l, h[from:], got, want)
				}
			}
		}
	}
	if f := newFinder([]byte(`errors.New("`)); f.rare != 'N' {
		t.Errorf("rare byte of errors.New(\": %q", f.rare)
	}
}
