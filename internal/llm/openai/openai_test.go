package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"turnstone/internal/llm"
)

func errAs(err error, target **llm.APIError) bool { return errors.As(err, target) }

// fastRetry keeps the production schedule's shape with tiny waits.
var fastRetry = llm.RetryPolicy{Retries: 3, Base: 10 * time.Millisecond, MaxRetryAfter: 30 * time.Millisecond}

// scripted answers the n-th request with handlers[n] (the last repeats).
func scripted(t *testing.T, handlers ...http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		handlers[min(i, len(handlers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(code int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

func okStream(text string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse(content(text), delta(`{}`, "stop")))
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		handlers []http.HandlerFunc
		requests int32
		infos    []string
		wantErr  string
	}{
		{
			name:     "503 then success",
			handlers: []http.HandlerFunc{status(503, `{"error":{"message":"warming up"}}`), okStream("hi")},
			requests: 2,
			infos:    []string{"[Retrying in 10ms: HTTP 503]"},
		},
		{
			name:     "429 with Retry-After 0",
			handlers: []http.HandlerFunc{status(429, `{"error":"slow down"}`, "Retry-After", "0"), okStream("hi")},
			requests: 2,
			infos:    []string{"[Retrying in 10ms: HTTP 429]"},
		},
		{
			name:     "Retry-After capped",
			handlers: []http.HandlerFunc{status(429, ``, "Retry-After", "3600"), okStream("hi")},
			requests: 2,
			infos:    []string{"[Retrying in 30ms: HTTP 429]"},
		},
		{
			name:     "gives up after three retries",
			handlers: []http.HandlerFunc{status(500, `{"detail":"boom"}`)},
			requests: 4,
			infos:    []string{"[Retrying in 10ms: HTTP 500]", "[Retrying in 20ms: HTTP 500]", "[Retrying in 40ms: HTTP 500]"},
			wantErr:  "openai endpoint returned HTTP 500: boom",
		},
		{
			name:     "400 is not retried",
			handlers: []http.HandlerFunc{status(400, `{"error":{"message":"bad tool schema","type":"invalid_request_error"}}`)},
			requests: 1,
			wantErr:  "HTTP 400: bad tool schema",
		},
		{
			name: "stream broken before any delta is retried",
			handlers: []http.HandlerFunc{
				func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = io.WriteString(w, "data: "+delta(`{"role":"assistant"}`, "")+"\n\n")
				},
				okStream("hi"),
			},
			requests: 2,
			infos:    []string{"[Retrying in 10ms: connection error]"},
		},
		{
			name: "stream broken after a delta is not retried",
			handlers: []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: "+content("partial")+"\n\n")
			}},
			requests: 1,
			wantErr:  "stream ended before the response was complete",
		},
		{
			name: "5xx error object after a delta is not retried",
			handlers: []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, sse(content("partial"), `{"error":{"message":"engine died","code":500}}`))
			}},
			requests: 1,
			wantErr:  "engine died",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := scripted(t, tt.handlers...)
			var infos []string
			p := New(Options{BaseURL: srv.URL, Retry: fastRetry})
			resp, err := p.Stream(context.Background(), llm.Request{Model: "m"}, func(d llm.Delta) {
				if d.Info != "" {
					infos = append(infos, d.Info)
				}
			})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if tt.wantErr == "" && resp.Message.Content != "hi" {
				t.Errorf("content = %q", resp.Message.Content)
			}
			if got := n.Load(); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			if strings.Join(infos, "|") != strings.Join(tt.infos, "|") {
				t.Errorf("infos = %q, want %q", infos, tt.infos)
			}
		})
	}
}

func TestCompleteRetries(t *testing.T) {
	srv, n := scripted(t, status(502, "Bad Gateway"), status(200, `{"choices":[{"message":{"content":"t"},"finish_reason":"stop"}]}`, "Content-Type", "application/json"))
	resp, err := New(Options{BaseURL: srv.URL, Retry: fastRetry}).Complete(context.Background(), llm.Request{})
	if err != nil || resp.Message.Content != "t" || n.Load() != 2 {
		t.Fatalf("resp %+v err %v requests %d", resp, err, n.Load())
	}
}

func TestErrorMessageShapes(t *testing.T) {
	long := strings.Repeat("x", 400)
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"openai nested", `{"error":{"message":"Invalid API key","type":"auth"}}`, 401, "Invalid API key"},
		{"plain string", `{"error":"model not found"}`, 404, "model not found"},
		{"fastapi detail string", `{"detail":"Not Found"}`, 404, "Not Found"},
		{"fastapi detail list", `{"detail":[{"loc":["body"],"msg":"field required"}]}`, 422, `[{"loc":["body"],"msg":"field required"}]`},
		{"top-level message", `{"message":"quota"}`, 429, "quota"},
		{"html", "<html>502 Bad Gateway</html>", 502, "<html>502 Bad Gateway</html>"},
		{"long text cut at 300", long, 500, strings.Repeat("x", 300) + "…"},
		{"empty body", "", 503, "Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorMessage([]byte(tt.body), tt.status); got != tt.want {
				t.Errorf("errorMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAPIErrorFields(t *testing.T) {
	srv, _ := scripted(t, status(429, `{"error":{"message":"rate limited"}}`, "Retry-After", "7"))
	_, err := New(Options{BaseURL: srv.URL, APIKey: "sk-secret", Retry: llm.RetryPolicy{Retries: -1}}).
		Stream(context.Background(), llm.Request{}, nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %T %v is not an APIError", err, err)
	}
	if ae.Status != 429 || ae.Message != "rate limited" || ae.RetryAfter != 7*time.Second || ae.Provider != "openai" {
		t.Errorf("APIError = %+v", ae)
	}
	if strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("error leaks the key: %v", err)
	}
}

func TestTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var infos int
	_, err := New(Options{BaseURL: url, Retry: llm.RetryPolicy{Retries: 1, Base: time.Millisecond}}).
		Stream(context.Background(), llm.Request{}, func(d llm.Delta) { infos++ })
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 0 {
		t.Fatalf("error = %T %v, want APIError status 0", err, err)
	}
	if infos != 1 || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("infos %d, error %v", infos, err)
	}
}

func TestCancelAbortsHangingStream(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+content("start")+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer once.Do(func() { close(release) })
	ctx, cancel := context.WithCancel(context.Background())
	_, err := New(Options{BaseURL: srv.URL}).Stream(ctx, llm.Request{}, func(d llm.Delta) {
		if d.Content != "" {
			cancel() // the user presses Ctrl-C once output appears
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	srv, n := scripted(t, status(503, "down"))
	ctx, cancel := context.WithCancel(context.Background())
	_, err := New(Options{BaseURL: srv.URL, Retry: llm.RetryPolicy{Retries: 3, Base: time.Hour}}).
		Stream(ctx, llm.Request{}, func(d llm.Delta) {
			if d.Info != "" {
				cancel()
			}
		})
	if !errors.Is(err, context.Canceled) || n.Load() != 1 {
		t.Fatalf("error = %v after %d requests, want context.Canceled after 1", err, n.Load())
	}
}
