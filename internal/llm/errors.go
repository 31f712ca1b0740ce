package llm

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// APIError is an error answer from a model endpoint.
type APIError struct {
	Provider string
	Status   int    // HTTP status, 0 for transport errors
	Message  string // the endpoint's own message, or the transport error
	// RetryAfter is the endpoint's Retry-After hint, 0 when absent.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s endpoint unreachable: %s", e.Provider, e.Message)
	}
	msg := fmt.Sprintf("%s endpoint returned HTTP %d: %s", e.Provider, e.Status, e.Message)
	switch e.Status {
	case 401, 403:
		msg += " (check --api-key, [api] api_key or $OPENAI_API_KEY / $ANTHROPIC_API_KEY)"
	case 404:
		msg += " (check --base-url and --model)"
	}
	return msg
}

// Retryable reports whether the request may succeed if sent again:
// rate limits, server errors (including 529 overload) and transport errors.
func (e *APIError) Retryable() bool {
	return e.Status == 0 || e.Status == 408 || e.Status == 429 || e.Status >= 500
}

// ShortName is the name used in retry info lines ("HTTP 503", "connection error").
func (e *APIError) ShortName() string {
	if e.Status == 0 {
		return "connection error"
	}
	return "HTTP " + strconv.Itoa(e.Status)
}

// IsRetryable reports whether err is an APIError worth retrying.
func IsRetryable(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Retryable()
}

// ParseRetryAfter reads a Retry-After header value in seconds or HTTP-date.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
