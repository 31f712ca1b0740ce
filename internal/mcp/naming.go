package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolName is the longest function name providers accept (OpenAI and
// Anthropic both allow [a-zA-Z0-9_-]{1,64}).
const maxToolName = 64

// defaultHashLen is the length of the hex suffix added to names that had to
// be changed; collisions that survive it get a longer one.
const defaultHashLen = 8

// rawName is the name before any provider rules: mcp__{server}__{tool}.
func rawName(server, tool string) string { return "mcp__" + server + "__" + tool }

// safeName reports whether s is a valid provider function name.
func safeName(s string) bool {
	if s == "" || len(s) > maxToolName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			return false
		}
	}
	return true
}

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// exposedName is the name a model sees for a server's tool. A name that is
// already safe is kept as is. Otherwise every unsafe byte becomes '_', the
// result is cut to fit, and a hash of the original (server, tool) pair is
// appended, so the name depends only on that pair (stable across refreshes
// and restarts) and two different tools never share it.
func exposedName(server, tool string, hashLen int) string {
	raw := rawName(server, tool)
	if hashLen <= 0 && safeName(raw) {
		return raw
	}
	if hashLen <= 0 {
		hashLen = defaultHashLen
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if safeByte(raw[i]) {
			b.WriteByte(raw[i])
		} else {
			b.WriteByte('_')
		}
	}
	base := b.String()
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := hex.EncodeToString(sum[:])
	if hashLen > len(suffix) {
		hashLen = len(suffix)
	}
	suffix = suffix[:hashLen]
	if keep := maxToolName - 1 - len(suffix); len(base) > keep {
		base = base[:keep]
	}
	return base + "_" + suffix
}

// nameAssigner hands out exposed names without collisions. Names are
// assigned in snapshot order, so the result is deterministic for a given
// list of servers and tools.
type nameAssigner struct {
	used  map[string]bool
	pairs map[string]bool
}

func newNameAssigner() *nameAssigner {
	return &nameAssigner{used: map[string]bool{}, pairs: map[string]bool{}}
}

// assign returns a unique exposed name for (server, tool), or "" when the
// pair cannot be named (an empty tool name).
func (a *nameAssigner) assign(server, tool string) string {
	pair := server + "\x00" + tool
	if tool == "" || a.pairs[pair] {
		// A server that lists one name twice: the first one wins.
		return ""
	}
	a.pairs[pair] = true
	for _, n := range []int{0, defaultHashLen, 16, 32, 64} {
		name := exposedName(server, tool, n)
		if !a.used[name] {
			a.used[name] = true
			return name
		}
	}
	return "" // 64 hex digits of SHA-256 collided: not reachable in practice""
}
