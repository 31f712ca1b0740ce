package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"turnstone/internal/llm"
)

// An answer that is not a Messages stream (a web page, garbage events)
// fails at once with advice and is not retried as if the network failed.
func TestNonMessagesAnswerIsNotRetried(t *testing.T) {
	for name, body := range map[string]string{
		"web page":  "<html><body>login</body></html>",
		"bad event": "event: message_start\ndata: {not json\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				fmt.Fprint(w, body)
			}))
			defer srv.Close()
			p := New(Options{BaseURL: srv.URL, APIKey: "k", Retry: llm.RetryPolicy{Retries: 3, Base: time.Millisecond}})
			_, err := p.Stream(context.Background(), llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 100}, nil)
			if err == nil || !strings.Contains(err.Error(), "--base-url") || strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("err = %v", err)
			}
			if hits.Load() != 1 {
				t.Fatalf("retried %d times", hits.Load()-1)
			}
		})
	}
}
