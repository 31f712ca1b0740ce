// Package secrets knows which environment variables carry turnstone's own
// credentials, so that child processes the model controls (bash, MCP
// servers) never inherit them, and redacts known secret values from text.
package secrets

import (
	"slices"
	"strings"
)

// envNames are the variables turnstone reads credentials from.
var envNames = []string{
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TAVILY_API_KEY",
	"TURNSTONE_AUTH_TOKEN", "TURNSTONE_JWT_SECRET", "TURNSTONE_CHANNEL_AUTH_TOKEN",
}

// EnvNames returns the names of the credential variables.
func EnvNames() []string { return slices.Clone(envNames) }

// ScrubEnv returns env without turnstone's credential variables.
func ScrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(envNames, k) {
			out = append(out, kv)
		}
	}
	return out
}

// minLen keeps short values ("dummy", "x") from redacting ordinary words.
const minLen = 8

// Redactor replaces known secret values with "[redacted]".
type Redactor struct {
	values []string
}

// NewRedactor redacts the given values; empty and short ones are ignored.
func NewRedactor(values ...string) *Redactor {
	r := &Redactor{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= minLen && !slices.Contains(r.values, v) {
			r.values = append(r.values, v)
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(r.values, func(a, b string) int { return len(b) - len(a) })
	return r
}

// Redact replaces every known secret in s.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}
