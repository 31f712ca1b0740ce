package llm

import (
	"strings"
	"testing"
	"time"
)

func TestAPIErrorTextAndRetryable(t *testing.T) {
	cases := []struct {
		err       APIError
		want      string
		retryable bool
	}{
		{APIError{Provider: "openai", Message: "dial tcp: refused"}, "openai endpoint unreachable: dial tcp: refused", true},
		{APIError{Provider: "openai", Status: 401, Message: "bad key"}, "HTTP 401: bad key (check --api-key", false},
		{APIError{Provider: "anthropic", Status: 404, Message: "no model"}, "(check --base-url and --model)", false},
		{APIError{Provider: "anthropic", Status: 529, Message: "overloaded"}, "HTTP 529: overloaded", true},
		{APIError{Provider: "openai", Status: 429, Message: "slow down"}, "HTTP 429", true},
		{APIError{Provider: "openai", Status: 400, Message: "bad"}, "HTTP 400: bad", false},
	}
	for _, c := range cases {
		if got := c.err.Error(); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q lacks %q", c.err, got, c.want)
		}
		if c.err.Retryable() != c.retryable {
			t.Errorf("%+v: retryable %v", c.err, c.err.Retryable())
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Wed, 02 Dec 2026 10:00:05 GMT": 5 * time.Second,
		"Wed, 02 Dec 2026 09:00:00 GMT": 0,
	}
	for in, want := range cases {
		if got := ParseRetryAfter(in, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
