package info

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"turnstone/internal/tool"
)

const testKey = "tvly-SECRET-0123456789"

// tavily is a local stand-in for the Tavily API that records requests.
type tavily struct {
	mu     sync.Mutex
	auth   []string
	bodies []map[string]any
	paths  []string
	reply  func(w http.ResponseWriter, r *http.Request)
}

func newTavily(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) (*tavily, *httptest.Server) {
	t.Helper()
	tv := &tavily{reply: reply}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		tv.mu.Lock()
		tv.auth = append(tv.auth, r.Header.Get("Authorization"))
		tv.bodies = append(tv.bodies, body)
		tv.paths = append(tv.paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		tv.mu.Unlock()
		tv.reply(w, r)
	}))
	t.Cleanup(srv.Close)
	return tv, srv
}

func jsonReply(v any) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

func newSearch(t *testing.T, key, base string) *WebSearch {
	t.Helper()
	t.Setenv("TAVILY_API_KEY", "")
	return NewWebSearch(schemas(t).MustSpec("web_search"), WebSearchOptions{Key: key, BaseURL: base})
}

func TestWebSearchRequestAndOutput(t *testing.T) {
	tv, srv := newTavily(t, jsonReply(map[string]any{
		"query":  "go generics",
		"answer": "Go added generics in 1.18.",
		"results": []map[string]any{
			{"title": "Go 1.18 release notes", "url": "https://go.dev/doc/go1.18", "content": "Go 1.18 includes generics.", "score": 0.9},
			{"title": "Tutorial", "url": "https://go.dev/doc/tutorial/generics", "content": strings.Repeat("x", 600)},
		},
	}))
	s := newSearch(t, testKey, srv.URL+"/")
	p := prepare(t, s, tool.Args{"query": "  go generics ", "max_results": 3.0, "topic": "news"})
	if p.Header != "⚙ web_search: go generics" || !p.NeedsApproval || p.ApprovalLabel != "web_search" {
		t.Fatalf("header %q approval %v label %q", p.Header, p.NeedsApproval, p.ApprovalLabel)
	}
	if len(p.Preview) != 1 || p.Preview[0].Text != "go generics" {
		t.Fatalf("preview %+v", p.Preview)
	}
	r, _ := run(t, p)
	want := "Answer: Go added generics in 1.18.\n\n" +
		"1. [Go 1.18 release notes](https://go.dev/doc/go1.18)\n   Go 1.18 includes generics.\n" +
		"2. [Tutorial](https://go.dev/doc/tutorial/generics)\n   " + strings.Repeat("x", 500)
	if r.IsError || r.Output != want {
		t.Fatalf("got %v\n%q\nwant\n%q", r.IsError, r.Output, want)
	}
	if r.Summary != "2 results" {
		t.Errorf("summary %q", r.Summary)
	}
	if tv.paths[0] != "POST /search application/json" || tv.auth[0] != "Bearer "+testKey {
		t.Errorf("request %q auth %q", tv.paths[0], tv.auth[0])
	}
	wantBody := map[string]any{"query": "go generics", "max_results": float64(3), "topic": "news", "include_answer": true}
	if fmt.Sprint(tv.bodies[0]) != fmt.Sprint(wantBody) {
		t.Errorf("body %v, want %v", tv.bodies[0], wantBody)
	}
}

func TestWebSearchArguments(t *testing.T) {
	tv, srv := newTavily(t, jsonReply(map[string]any{"results": []any{}}))
	s := newSearch(t, testKey, srv.URL)
	tests := []struct {
		args  tool.Args
		max   float64
		topic string
	}{
		{tool.Args{"query": "q"}, 5, "general"},
		{tool.Args{"query": "q", "max_results": 0.0}, 5, "general"},
		{tool.Args{"query": "q", "max_results": 50.0}, 20, "general"},
		{tool.Args{"query": "q", "max_results": -3.0}, 1, "general"},
		{tool.Args{"query": "q", "max_results": "7"}, 7, "general"},
		{tool.Args{"query": "q", "max_results": 2.9}, 2, "general"},
		{tool.Args{"query": "q", "max_results": "many"}, 5, "general"},
		{tool.Args{"query": "q", "topic": "finance"}, 5, "finance"},
		{tool.Args{"query": "q", "topic": " News "}, 5, "news"},
		{tool.Args{"query": "q", "topic": "sports"}, 5, "general"},
	}
	for i, tt := range tests {
		r, _ := run(t, prepare(t, s, tt.args))
		if r.IsError || r.Output != "No results for 'q'." {
			t.Fatalf("%v: %v %q", tt.args, r.IsError, r.Output)
		}
		b := tv.bodies[i]
		if b["max_results"] != tt.max || b["topic"] != tt.topic {
			t.Errorf("%v: sent max_results %v topic %v, want %v %v", tt.args, b["max_results"], b["topic"], tt.max, tt.topic)
		}
	}
	p := prepare(t, s, tool.Args{"query": "  "})
	if p.Err != "Error: no query provided" || p.Header != "✗ web_search: empty query" {
		t.Errorf("empty query: %q %q", p.Header, p.Err)
	}
}

func TestWebSearchMissingKey(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	s := newSearch(t, "", "http://127.0.0.1:9")
	p := prepare(t, s, tool.Args{"query": "q"})
	if p.Header != "✗ web_search: no Tavily API key" || p.Run != nil {
		t.Fatalf("header %q", p.Header)
	}
	for _, want := range []string{"tavily_key", "[api]", "/cfg/turnstone/config.toml", "TAVILY_API_KEY", "web_fetch"} {
		if !strings.Contains(p.Err, want) {
			t.Errorf("missing-key message lacks %q: %s", want, p.Err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/someone")
	if got := DefaultConfigPath(); got != "/home/someone/.config/turnstone/config.toml" {
		t.Errorf("DefaultConfigPath() = %q", got)
	}
}

func TestWebSearchKeyFromEnvironment(t *testing.T) {
	tv, srv := newTavily(t, jsonReply(map[string]any{"answer": "yes"}))
	t.Setenv("TAVILY_API_KEY", "tvly-from-env")
	s := NewWebSearch(schemas(t).MustSpec("web_search"), WebSearchOptions{BaseURL: srv.URL})
	r, _ := run(t, prepare(t, s, tool.Args{"query": "q"}))
	if r.IsError || r.Output != "Answer: yes" || tv.auth[0] != "Bearer tvly-from-env" {
		t.Fatalf("got %v %q auth %q", r.IsError, r.Output, tv.auth[0])
	}
	// The configured key wins over the environment.
	s = NewWebSearch(schemas(t).MustSpec("web_search"), WebSearchOptions{Key: testKey, BaseURL: srv.URL})
	run(t, prepare(t, s, tool.Args{"query": "q"}))
	if tv.auth[1] != "Bearer "+testKey {
		t.Fatalf("auth %q", tv.auth[1])
	}
}

// The key never reaches the model or the user, even when the endpoint
// echoes it back.
func TestWebSearchRedactsKey(t *testing.T) {
	tests := []struct {
		name  string
		reply func(w http.ResponseWriter, r *http.Request)
		err   bool
		want  string
	}{
		{"json error detail", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"detail":{"error":"Unauthorized: invalid API key %s"}}`, testKey)
		}, true, "Tavily search failed: HTTP 401: Unauthorized: invalid API key [redacted]"},
		{"plain text echo", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "upstream rejected header %q", r.Header.Get("Authorization"))
		}, true, "Tavily search failed: HTTP 502: "},
		{"unreadable body", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "<html>proxy login for %s</html>", testKey)
		}, true, "Tavily search failed: unreadable response"},
		{"echo in results", jsonReply(map[string]any{
			"answer":  "your key is " + testKey,
			"results": []map[string]any{{"title": testKey, "url": "https://x/" + testKey, "content": testKey}},
		}), false, "Answer: your key is [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newTavily(t, tt.reply)
			r, _ := run(t, prepare(t, newSearch(t, testKey, srv.URL), tool.Args{"query": "q"}))
			if r.IsError != tt.err || !strings.HasPrefix(r.Output, tt.want) {
				t.Fatalf("got %v %q, want prefix %q", r.IsError, r.Output, tt.want)
			}
			if strings.Contains(r.Output, testKey) || strings.Contains(r.Output, "SECRET") {
				t.Fatalf("key leaked: %q", r.Output)
			}
		})
	}
}

func TestWebSearchTransportError(t *testing.T) {
	_, srv := newTavily(t, jsonReply(nil))
	url := srv.URL
	srv.Close()
	r, _ := run(t, prepare(t, newSearch(t, testKey, url), tool.Args{"query": "q"}))
	if !r.IsError || !strings.HasPrefix(r.Output, "Tavily search failed: ") || strings.Contains(r.Output, testKey) {
		t.Fatalf("got %v %q", r.IsError, r.Output)
	}
}
