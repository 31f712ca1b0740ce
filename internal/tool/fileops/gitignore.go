package fileops

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// This file is a small .gitignore matcher (gitignore(5)): blank lines and
// "#" comments, "\" escapes, trailing-space trimming, "!" negation, trailing
// "/" for directories only, patterns with a slash anchored to their file's
// directory, "*", "?", "[...]" (with "[!...]"), and "**" as a whole path
// component (leading, inner, trailing). Not supported: POSIX classes such as
// [[:alpha:]], core.ignoreCase and the global core.excludesFile.

// ignoreRule is one parsed pattern line.
type ignoreRule struct {
	negate   bool
	dirOnly  bool
	anchored bool     // had a slash: matched against the path below the file's dir
	literal  bool     // no wildcard: compared as a string
	glob     string   // unanchored: matched against the base name
	comps    []string // anchored: the pattern split on "/"
	whole    string   // anchored literal: the whole pattern
}

// ignoreFile is the rules of one .gitignore (or info/exclude) and the
// directory they apply to, relative to the work tree root ("" for the root).
type ignoreFile struct {
	base  string
	rules []ignoreRule
}

// ignoreChain is the stack of ignore files that apply in a directory, the
// deepest first; a deeper file overrides a shallower one, and within a file
// the last matching rule wins.
type ignoreChain struct {
	file   *ignoreFile
	parent *ignoreChain
}

func (c *ignoreChain) push(f *ignoreFile) *ignoreChain {
	if f == nil || len(f.rules) == 0 {
		return c
	}
	return &ignoreChain{file: f, parent: c}
}

// ignored reports whether the entry at rel (slash-separated, relative to the
// work tree root) is excluded.
func (c *ignoreChain) ignored(rel string, isDir bool) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for ; c != nil; c = c.parent {
		f := c.file
		sub := rel
		if f.base != "" {
			if !strings.HasPrefix(rel, f.base+"/") {
				continue
			}
			sub = rel[len(f.base)+1:]
		}
		for i := len(f.rules) - 1; i >= 0; i-- {
			if r := &f.rules[i]; r.matches(sub, name, isDir) {
				return !r.negate
			}
		}
	}
	return false
}

func (r *ignoreRule) matches(sub, name string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	switch {
	case !r.anchored && r.literal:
		return name == r.glob
	case !r.anchored:
		return globMatch(r.glob, name)
	case r.literal:
		return sub == r.whole
	default:
		return matchComps(r.comps, sub)
	}
}

// matchComps matches a slash-separated path against pattern components,
// "**" standing for any number of whole components (at least one when it is
// the last component: "dir/**" matches what is inside dir, not dir).
func matchComps(pat []string, p string) bool {
	if len(pat) == 0 {
		return p == ""
	}
	if pat[0] == "**" {
		if len(pat) == 1 {
			return p != ""
		}
		for {
			if matchComps(pat[1:], p) {
				return true
			}
			if p == "" {
				return false
			}
			if i := strings.IndexByte(p, '/'); i >= 0 {
				p = p[i+1:]
			} else {
				p = ""
			}
		}
	}
	if p == "" {
		return false
	}
	comp, rest := p, ""
	if i := strings.IndexByte(p, '/'); i >= 0 {
		comp, rest = p[:i], p[i+1:]
	}
	return globMatch(pat[0], comp) && matchComps(pat[1:], rest)
}

// globMatch matches one path component; a malformed pattern matches nothing.
func globMatch(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// parseIgnore parses gitignore text; base is the directory the file sits in,
// relative to the work tree root.
func parseIgnore(data []byte, base string) *ignoreFile {
	f := &ignoreFile{base: base}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if r, ok := parseRule(sc.Text()); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

func parseRule(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	switch {
	case line[0] == '!':
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	line = strings.ReplaceAll(line, "[!", "[^")
	r.literal = !strings.ContainsAny(line, `*?[\`)
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
		r.whole = line
		r.comps = strings.Split(line, "/")
		return r, true
	}
	r.glob = line
	return r, true
}

// trimTrailingSpaces drops trailing spaces that are not escaped with "\".
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// loadIgnoreFile reads and parses one ignore file; a missing file is nil.
func loadIgnoreFile(file, base string) *ignoreFile {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return parseIgnore(data, base)
}

// gitDir is the metadata directory of the work tree rooted at root, following
// a ".git" file ("gitdir: ...", used by worktrees and submodules) and a
// worktree's "commondir" (where info/exclude lives).
func gitDir(root string) string {
	dotgit := filepath.Join(root, ".git")
	st, err := os.Stat(dotgit)
	if err != nil {
		return ""
	}
	dir := dotgit
	if !st.IsDir() {
		data, err := os.ReadFile(dotgit)
		if err != nil {
			return ""
		}
		s := strings.TrimSpace(string(data))
		if !strings.HasPrefix(s, "gitdir:") {
			return ""
		}
		dir = strings.TrimSpace(strings.TrimPrefix(s, "gitdir:"))
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
	}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		return common
	}
	return dir
}

// repoChain starts the ignore chain of a work tree rooted at root with its
// info/exclude (the lowest-precedence source this matcher reads).
func repoChain(root string) *ignoreChain {
	var c *ignoreChain
	if gd := gitDir(root); gd != "" {
		c = c.push(loadIgnoreFile(filepath.Join(gd, "info", "exclude"), ""))
	}
	return c
}

// ignoreStart finds the work tree containing dir (an absolute directory)
// and returns the chain in force in dir — info/exclude plus the .gitignore
// files of dir's ancestors up to the work tree root, excluding dir's own,
// which the walk reads — and dir's path relative to the root. inRepo is
// false outside a work tree; a dir that is itself a work tree root is left
// to the walk (it sees the .git entry).
func ignoreStart(dir string) (chain *ignoreChain, rel string, inRepo bool) {
	root := ""
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if root == "" {
		return nil, "", false
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return nil, "", false
	}
	relOS, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, "", false
	}
	rel = filepath.ToSlash(relOS)
	chain = repoChain(root)
	chain = chain.push(loadIgnoreFile(filepath.Join(root, ".gitignore"), ""))
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		base := strings.Join(parts[:i], "/")
		chain = chain.push(loadIgnoreFile(filepath.Join(root, filepath.FromSlash(base), ".gitignore"), base))
	}
	return chain, rel, true
}
