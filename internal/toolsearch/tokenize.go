package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize splits text into lower-case index terms. Words break on anything
// that is not a letter or digit (so `_ - . /`, whitespace and punctuation all
// separate, and "[MCP: github]" gives mcp, github), and camelCase and
// HTTPServer-style runs are split at their case changes. Apostrophes inside a
// word are dropped rather than splitting it ("don't" gives dont). No
// stemming or stop-word removal happens here; see analyzer.
func Tokenize(s string) []string {
	var out []string
	scan(s, nil, func(w []byte) { out = append(out, string(w)) })
	return out
}

// scan calls emit with each lower-cased word of s (the Tokenize rules). The
// slice passed to emit is reused: emit must copy what it keeps. buf is
// scratch space and is returned for reuse.
func scan(s string, buf []byte, emit func([]byte)) []byte {
	buf = buf[:0]
	flush := func() {
		if len(buf) > 0 {
			emit(buf)
			buf = buf[:0]
		}
	}
	var prev rune // previous rune of the current word, 0 at a word start
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf { // ASCII fast path
			i++
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				buf = append(buf, c)
				prev = rune(c)
			case c >= 'A' && c <= 'Z':
				if prev != 0 && caseBreak(prev, s[i:]) {
					flush()
				}
				buf = append(buf, c+('a'-'A'))
				prev = rune(c)
			case c == '\'':
				// keep "don't" one word
			default:
				flush()
				prev = 0
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '’':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if prev != 0 && unicode.IsUpper(r) && caseBreak(prev, s[i:]) {
				flush()
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			prev = r
		default:
			flush()
			prev = 0
		}
	}
	flush()
	return buf
}

// caseBreak reports whether an upper-case rune that follows prev starts a
// new word: after a lower-case letter or digit (getS3Object), or as the last
// capital of an acronym followed by lower case (HTTPServer). A lone plural
// "s" after an acronym (IDs, URLs) does not count as a word.
func caseBreak(prev rune, rest string) bool {
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	if !unicode.IsUpper(prev) {
		return false
	}
	next, size := utf8.DecodeRuneInString(rest)
	if !unicode.IsLower(next) {
		return false
	}
	if next == 's' {
		after, _ := utf8.DecodeRuneInString(rest[size:])
		if after == utf8.RuneError || !unicode.IsLetter(after) {
			return false
		}
	}
	return true
}

// stopWords are function words that carry no tool meaning in a query like
// "list the open issues assigned to me". Verbs such as get, list and create
// stay: they are the core of tool names.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true,
	"for": true, "and": true, "or": true, "is": true, "are": true, "was": true, "be": true,
	"by": true, "with": true, "my": true, "me": true, "i": true, "it": true, "its": true,
	"this": true, "that": true, "these": true, "those": true, "from": true, "at": true,
	"as": true, "into": true, "our": true, "your": true, "you": true, "we": true,
	"please": true, "can": true, "could": true, "would": true, "should": true, "will": true,
	"do": true, "does": true, "did": true, "what": true, "which": true, "how": true,
	"so": true, "then": true, "than": true, "there": true, "here": true, "also": true,
	"just": true, "some": true, "any": true, "if": true, "when": true, "whether": true,
	"has": true, "have": true, "been": true, "being": true, "not": true, "no": true,
}

// stem is a light suffix stripper, deliberately far weaker than Porter: it
// conflates plurals and -ed/-ing forms (issues, issue; created, creating,
// creates, create) and leaves everything else alone. It works in place and
// returns a prefix of w (possibly with its last byte changed).
func stem(w []byte) []byte {
	if len(w) <= 3 || !isASCIILower(w) {
		return w
	}
	switch {
	case hasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-2]
		w[len(w)-1] = 'y'
		return w
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"), string(w) == "news":
		// access, status, analysis, news: not plurals
	case hasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case hasSuffix(w, "ing") && len(w) >= 7:
		w = undouble(w[:len(w)-3])
	case hasSuffix(w, "ed") && len(w) >= 5 && !hasSuffix(w, "eed"):
		w = undouble(w[:len(w)-2])
	}
	if len(w) >= 4 && hasSuffix(w, "e") && !hasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

func hasSuffix(w []byte, suffix string) bool {
	return len(w) >= len(suffix) && string(w[len(w)-len(suffix):]) == suffix
}

// undouble turns "gett" into "get" and "stopp" into "stop", keeping ll, ss
// and zz (pull, pass, buzz) intact.
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILower(w []byte) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// analyzer turns text into index terms for one index configuration.
type analyzer struct {
	legacy    bool
	stem      bool
	stopWords bool
}

// each calls emit with every term of s; the slice is reused between calls.
// The legacy analyzer reproduces the original tokenizer (split on
// [_\-./\s]+, lower-case, punctuation kept) so the benchmark can compare.
func (a analyzer) each(s string, buf []byte, emit func([]byte)) []byte {
	if a.legacy {
		for _, t := range legacyTokenize(s) {
			emit([]byte(t))
		}
		return buf
	}
	return scan(s, buf, func(w []byte) {
		if a.stopWords && stopWords[string(w)] {
			return
		}
		if a.stem {
			w = stem(w)
		}
		emit(w)
	})
}

// terms is each collected into strings, for queries and tests.
func (a analyzer) terms(s string) []string {
	var out []string
	a.each(s, nil, func(w []byte) { out = append(out, string(w)) })
	return out
}

func legacyTokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == '/' || unicode.IsSpace(r)
	})
}
