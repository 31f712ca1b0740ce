package tool

import (
	"fmt"
	"unicode/utf8"
)

// Truncate bounds s to limit characters (runes): the first limit/2 and the
// last limit/2 are kept with a note of what was cut between them
// (behavior.md §1.7). limit <= 0 means no bound.
func Truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	half := limit / 2
	head := runePrefix(s, half)
	tail := runeSuffix(s, half)
	return fmt.Sprintf("%s\n\n... [%d chars truncated — output exceeded %d char limit] ...\n\n%s", head, n-2*half, limit, tail)
}

func runePrefix(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func runeSuffix(s string, n int) string {
	i := len(s)
	for c := 0; c < n && i > 0; c++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
