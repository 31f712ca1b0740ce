package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RetryPolicy says how often and how long to wait between attempts.
type RetryPolicy struct {
	// Retries is the number of retries after the first attempt (default 3).
	Retries int
	// Base is the first backoff (default 1 s); it doubles each retry.
	Base time.Duration
	// MaxRetryAfter caps an endpoint's Retry-After hint (default 30 s).
	MaxRetryAfter time.Duration
}

// DefaultRetry is 3 retries with 1, 2, 4 s backoff, Retry-After honoured up to 30 s.
var DefaultRetry = RetryPolicy{Retries: 3, Base: time.Second, MaxRetryAfter: 30 * time.Second}

// Do calls attempt until it succeeds, fails with a non-retryable error, or
// the retries run out. Before each wait it reports "[Retrying in Ns: reason]"
// through info (which may be nil). attempt must not have delivered any output
// to the user when it returns a retryable error.
func (p RetryPolicy) Do(ctx context.Context, info func(string), attempt func(ctx context.Context) error) error {
	if p.Base <= 0 {
		p.Base = time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 30 * time.Second
	}
	var err error
	for i := 0; ; i++ {
		err = attempt(ctx)
		if err == nil || i >= p.Retries || !IsRetryable(err) || ctx.Err() != nil {
			return err
		}
		wait := p.Base << i
		var ae *APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			wait = min(ae.RetryAfter, p.MaxRetryAfter)
		}
		if info != nil {
			name := "error"
			if ae != nil {
				name = ae.ShortName()
			}
			info(fmt.Sprintf("[Retrying in %s: %s]", fmtWait(wait), name))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func fmtWait(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return d.Round(10 * time.Millisecond).String()
}
