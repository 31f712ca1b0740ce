package fileops

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"turnstone/internal/tool"
)

func TestIgnoreRules(t *testing.T) {
	tests := []struct {
		pattern, path string
		dir, want     bool
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "deep/dir/a.log", false, true},
		{"*.log", "a.logx", false, false},
		{"build/", "build", true, true},
		{"build/", "build", false, false},
		{"build/", "src/build", true, true},
		{"/root.txt", "root.txt", false, true},
		{"/root.txt", "sub/root.txt", false, false},
		{"doc/*.txt", "doc/a.txt", false, true},
		{"doc/*.txt", "doc/sub/a.txt", false, false},
		{"doc/*.txt", "x/doc/a.txt", false, false},
		{"**/gen", "gen", true, true},
		{"**/gen", "a/b/gen", true, true},
		{"a/**/z", "a/z", false, true},
		{"a/**/z", "a/b/c/z", false, true},
		{"a/**", "a/x/y", false, true},
		{"a/**", "a", true, false},
		{"file?.c", "file1.c", false, true},
		{"file[0-9].c", "file7.c", false, true},
		{"file[!0-9].c", "filex.c", false, true},
		{"file[!0-9].c", "file7.c", false, false},
		{`\#hash`, "#hash", false, true},
		{`\!bang`, "!bang", false, true},
		{`trail\ `, "trail ", false, true},
		{"spaces   ", "spaces", false, true},
	}
	for _, tc := range tests {
		r, ok := parseRule(tc.pattern)
		if !ok {
			t.Fatalf("%q did not parse", tc.pattern)
		}
		name := tc.path[strings.LastIndexByte(tc.path, '/')+1:]
		if got := r.matches(tc.path, name, tc.dir); got != tc.want {
			t.Errorf("%q vs %q (dir %v): got %v, want %v", tc.pattern, tc.path, tc.dir, got, tc.want)
		}
	}
	for _, line := range []string{"", "# comment", "   ", "/"} {
		if _, ok := parseRule(line); ok {
			t.Errorf("%q should be skipped", line)
		}
	}
}

// searchFiles returns the sorted relative paths of files with a match.
func searchFiles(t *testing.T, root, query string) []string {
	t.Helper()
	res := call(t, newSearch(), tool.Args{"query": query, "path": root})
	if res.Output == "(no matches)" {
		return nil
	}
	var files []string
	for _, l := range strings.Split(res.Output, "\n") {
		p := l[:strings.Index(l, ":")]
		files = append(files, strings.TrimPrefix(p, root+"/"))
	}
	sort.Strings(files)
	return files
}

func TestSearchGitignore(t *testing.T) {
	dir := tree(t, map[string]string{
		".git/HEAD":           "ref: refs/heads/main\n",
		".git/info/exclude":   "excluded.txt\n",
		".gitignore":          "*.log\n!keep.log\nbuild/\n/top.txt\nnested/**/deep.txt\n",
		"a.txt":               "hit\n",
		"x.log":               "hit\n",
		"keep.log":            "hit\n",
		"excluded.txt":        "hit\n",
		"top.txt":             "hit\n",
		"sub/top.txt":         "hit\n",
		"build/out.txt":       "hit\n",
		"sub/build/out.txt":   "hit\n",
		"sub/build.txt":       "hit\n",
		"nested/a/b/deep.txt": "hit\n",
		"nested/deep.txt":     "hit\n",
		"sub/.gitignore":      "local.txt\n!x.log\n",
		"sub/local.txt":       "hit\n",
		"sub/x.log":           "hit\n",
		"other/local.txt":     "hit\n",
		"inner/.git/HEAD":     "x\n",
		"inner/.gitignore":    "own.txt\n",
		"inner/own.txt":       "hit\n",
		"inner/x.log":         "hit\n", // the outer *.log does not reach into a nested repository
		".hidden.txt":         "hit\n",
	})
	got := searchFiles(t, dir, "hit")
	want := []string{".hidden.txt", "a.txt", "inner/x.log", "keep.log", "other/local.txt",
		"sub/build.txt", "sub/top.txt", "sub/x.log"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	// Searching inside the work tree applies the ancestors' rules.
	got = searchFiles(t, filepath.Join(dir, "sub"), "hit")
	want = []string{"build.txt", "top.txt", "x.log"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("from sub: got %v, want %v", got, want)
	}
	// A file named explicitly is searched even if ignored.
	if got := searchFiles(t, filepath.Join(dir, "x.log"), "hit"); len(got) != 1 {
		t.Fatalf("explicit ignored file: %v", got)
	}
}

func TestSearchGitfileWorktree(t *testing.T) {
	// A ".git" file pointing elsewhere (worktrees, submodules) still marks a
	// work tree, and its info/exclude is read from the common dir.
	meta := tree(t, map[string]string{
		"worktrees/wt/commondir": "../..\n",
		"info/exclude":           "secret.txt\n",
	})
	dir := tree(t, map[string]string{
		".git":       "gitdir: " + filepath.Join(meta, "worktrees", "wt") + "\n",
		".gitignore": "*.tmp\n",
		"a.txt":      "hit\n",
		"b.tmp":      "hit\n",
		"secret.txt": "hit\n",
	})
	if got := searchFiles(t, dir, "hit"); strings.Join(got, " ") != "a.txt" {
		t.Fatalf("got %v", got)
	}
}
