package fileops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"turnstone/internal/tool"
)

// MaxMatchesPerFile is the per-file cap on matching lines (grep -m 200).
const MaxMatchesPerFile = 200

// SearchOptions configures search.
type SearchOptions struct {
	// Timeout bounds one search; 0 means DefaultTimeout.
	Timeout time.Duration
	// Workers is the number of files searched in parallel; 0 means
	// GOMAXPROCS.
	Workers int
}

// Search finds lines matching a regular expression under a path
// (behavior.md §2.6), in Go rather than by running grep.
type Search struct {
	spec tool.Spec
	opts SearchOptions
}

var _ tool.Tool = (*Search)(nil)

// NewSearch builds the search tool from its spec.
func NewSearch(spec tool.Spec, opts SearchOptions) *Search {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Search{spec: spec, opts: opts}
}

// Spec returns the tool's schema.
func (s *Search) Spec() tool.Spec { return s.spec }

// Prepare compiles the pattern so a bad one is reported before anything runs.
func (s *Search) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	query := call.Args.String("query")
	if query == "" {
		return tool.Fail(failHeader("search", "missing query"), "Error: missing query")
	}
	root := call.Args.String("path")
	if root == "" {
		root = "."
	}
	root = ExpandHome(root)
	m, err := compilePattern(query)
	if err != nil {
		return tool.Fail(failHeader("search", "invalid regex"),
			fmt.Sprintf("Error: invalid regex /%s/: %v. The search uses Go's RE2 syntax (POSIX extended regex without backreferences or lookaround).", query, err))
	}
	label := fmt.Sprintf("/%s/ in %s", query, root)
	return &tool.Prepared{
		Header:  okHeader("search", label),
		Preview: tool.Preview{{Style: tool.StyleDim, Text: label}},
		Run: func(ctx context.Context, _ tool.Emit) tool.Result {
			return s.run(ctx, m, root)
		},
	}
}

func (s *Search) run(ctx context.Context, m *matcher, root string) tool.Result {
	tctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := searchPath(tctx, m, root, s.opts.Workers)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return tool.ErrorResult(fmt.Sprintf("Error: %s not found", root))
		}
		return tool.ErrorResult(fmt.Sprintf("Search error: %s: %s", root, describeErr(err)))
	}
	out := strings.TrimRight(res.out, "\n")
	summary := "no matches"
	if res.matches > 0 {
		summary = fmt.Sprintf("%d matches", res.matches)
	}
	if out == "" {
		out = "(no matches)"
	}
	if len(out) > 500 {
		summary += fmt.Sprintf(" (%d chars)", len(out))
	}
	if len(res.unreadable) > 0 {
		out += fmt.Sprintf("\n[%d paths could not be read, e.g. %s]", len(res.unreadable), res.unreadable[0])
	}
	switch {
	case ctx.Err() != nil:
		return partialError(out, "[search interrupted; results are partial]")
	case tctx.Err() != nil:
		return partialError(out, fmt.Sprintf("[search timed out after %s; results are partial]", seconds(s.opts.Timeout)))
	}
	return tool.Result{Output: out, Summary: summary}
}

// matcher finds matching lines in a buffer of whole lines. Three strategies,
// fastest first: a plain literal (finder, no regexp at all); a literal
// every match must contain, used to find candidate lines that the regexp then
// checks; the regexp over the whole buffer. Each found line is confirmed by
// matching the regexp against that line alone, so a match can never span
// lines (RE2's [^x] and \s also match "\n").
type matcher struct {
	re      *regexp.Regexp // (?m) so ^ and $ work at line boundaries
	literal []byte         // the pattern is exactly this literal
	needle  []byte         // every match contains this literal
	find    finder         // finds literal or needle
}

// compilePattern accepts POSIX extended regex as grep -E does, as far as RE2
// allows: see translateERE.
func compilePattern(query string) (*matcher, error) {
	expr := translateERE(query)
	_, err := regexp.Compile(expr) // for an error message without the (?m)
	if err == nil {
		_, err = regexp.Compile("(?m)" + expr)
	}
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: `%s`", se.Code, se.Expr)
		}
		return nil, err
	}
	m := &matcher{re: regexp.MustCompile("(?m)" + expr)}
	if parsed, err := syntax.Parse(expr, syntax.Perl); err == nil {
		parsed = parsed.Simplify()
		if parsed.Op == syntax.OpLiteral && parsed.Flags&syntax.FoldCase == 0 {
			m.literal = []byte(string(parsed.Rune))
			m.find = newFinder(m.literal)
		} else if n := requiredLiteral(parsed); len(n) >= 2 {
			m.needle = []byte(n)
			m.find = newFinder(m.needle)
		}
	}
	return m, nil
}

// requiredLiteral returns a case-sensitive literal that every match of re
// contains ("" if none is known): the longest run of literals in a
// concatenation, looking through groups and repetitions of at least one.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, run := "", ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run += string(sub.Rune)
				continue
			}
			if len(run) > len(best) {
				best = run
			}
			run = ""
			if c := requiredLiteral(sub); len(c) > len(best) {
				best = c
			}
		}
		if len(run) > len(best) {
			best = run
		}
		return best
	}
	return ""
}

// translateERE rewrites the GNU grep -E constructs RE2 lacks into RE2:
// \< and \> become \b, {,n} becomes {0,n}, a leading * is literal, and a
// pattern with newlines is the alternation of its lines (grep reads one
// pattern per line). Bracket expressions are copied untouched. What has no
// RE2 form (backreferences) is left for the compiler to reject.
func translateERE(q string) string {
	if strings.Contains(q, "\n") {
		lines := strings.Split(q, "\n")
		for i, l := range lines {
			lines[i] = "(?:" + translateERE(l) + ")"
		}
		return strings.Join(lines, "|")
	}
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '*' && i == 0:
			b.WriteString(`\*`)
		case c == '\\' && i+1 < len(q):
			switch q[i+1] {
			case '<', '>':
				b.WriteString(`\b`)
			default:
				b.WriteString(q[i : i+2])
			}
			i++
		case c == '[':
			j := bracketEnd(q, i)
			b.WriteString(q[i:j])
			i = j - 1
		case c == '{' && strings.HasPrefix(q[i:], "{,"):
			b.WriteString("{0,")
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// bracketEnd returns the index just past the bracket expression starting at
// q[i] == '[' (a leading ']' or '^]' is literal; [:class:] is skipped whole),
// or len(q) when it is unterminated.
func bracketEnd(q string, i int) int {
	j := i + 1
	if j < len(q) && q[j] == '^' {
		j++
	}
	if j < len(q) && q[j] == ']' {
		j++
	}
	for j < len(q) {
		switch {
		case q[j] == ']':
			return j + 1
		case q[j] == '[' && j+1 < len(q) && (q[j+1] == ':' || q[j+1] == '=' || q[j+1] == '.'):
			if k := strings.Index(q[j+2:], string(q[j+1])+"]"); k >= 0 {
				j += k + 4
				continue
			}
		}
		j++
	}
	return len(q)
}

// scan calls found(lineStart, lineEnd) for each matching line of data, in
// order, until found returns false. data holds whole lines; lineEnd excludes
// the "\n".
func (m *matcher) scan(data []byte, found func(start, end int) bool) {
	for pos := 0; pos < len(data); {
		var at int
		switch {
		case m.literal != nil || m.needle != nil:
			i := m.find.index(data[pos:])
			if i < 0 {
				return
			}
			at = pos + i
		default:
			loc := m.re.FindIndex(data[pos:])
			if loc == nil {
				return
			}
			at = pos + loc[0]
		}
		if at == len(data) && data[at-1] == '\n' {
			return // an empty match after the last line end is not a line
		}
		start := bytes.LastIndexByte(data[pos:at], '\n') + 1 + pos
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += at
		}
		if (m.literal != nil || m.re.Match(data[start:end])) && !found(start, end) {
			return
		}
		pos = end + 1
	}
}

// compareSlashed orders paths component by component ("a/b" before "a-b").
func compareSlashed(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == filepath.Separator {
			return -1
		}
		if cb == filepath.Separator {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// childPath joins a directory as the caller named it and an entry name, the
// way grep -r prints it ("." + "x" is "./x", "src/" + "x" is "src/x").
func childPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// vcsDirs are never searched.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

// finder finds a literal by looking for its rarest byte with IndexByte
// (vectorised) and comparing the literal around each hit, as ripgrep's
// memchr-based search does. bytes.Index looks for the first byte instead,
// and for a common one ("e" of `errors\.New`) it stops at nearly every
// word; it then falls back to a byte-by-byte comparison.
type finder struct {
	lit  []byte
	rare byte // the byte of lit that is rarest in typical text
	off  int  // its index in lit
}

func newFinder(lit []byte) finder {
	f := finder{lit: lit}
	best := -1
	for i, c := range lit {
		if r := byteRank(c); best < 0 || r > best {
			best, f.rare, f.off = r, c, i
		}
	}
	return f
}

// index returns the index of the first occurrence of the literal in s, or
// -1.
func (f *finder) index(s []byte) int {
	n := len(f.lit)
	if n == 0 {
		return 0
	}
	last := len(s) - n + f.off // the last place the rare byte can be
	for i := f.off; i <= last; i++ {
		j := bytes.IndexByte(s[i:last+1], f.rare)
		if j < 0 {
			return -1
		}
		i += j
		if start := i - f.off; bytes.Equal(s[start:start+n], f.lit) {
			return start
		}
	}
	return -1
}

// commonBytes lists the bytes of source code and prose, most frequent
// first (a rough order; bytes not listed are taken as rarest).
const commonBytes = " e\tt\nariosnlcdhupmfg.,;y()=_\"bwvk-:/{}0x1>*'[]CSIETARNDLMPO<2&#!+F3B45HG9$%|6W87UVK\\@Y^XJ?QZ~`jqz"

// byteRank is higher the rarer c is.
func byteRank(c byte) int {
	if i := strings.IndexByte(commonBytes, c); i >= 0 {
		return i
	}
	return len(commonBytes)
}
