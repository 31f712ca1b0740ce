package openai

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

// A password in the base URL never shows up in an error.
func TestErrorsMaskEndpointPassword(t *testing.T) {
	p := New(Options{BaseURL: "http://user:s3cret@127.0.0.1:1/v1", Retry: llm.RetryPolicy{Retries: -1}})
	_, err := p.Stream(context.Background(), llm.Request{Model: "m"}, nil)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("err = %v", err)
	}
}

// A web page where the API should be fails at once with advice, unretried.
func TestHTMLPageIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>Please log in</body></html>")
	}))
	defer srv.Close()
	p := New(Options{BaseURL: srv.URL, Retry: llm.RetryPolicy{Retries: 3, Base: time.Millisecond}})
	_, err := p.Stream(context.Background(), llm.Request{Model: "m"}, nil)
	if err == nil || !strings.Contains(err.Error(), "web page") || !strings.Contains(err.Error(), "--base-url") {
		t.Fatalf("err = %v", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("retried %d times", hits.Load()-1)
	}
}
