package info

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/netguard"
	"turnstone/internal/tool"
)

// fakeModel is an llm.Provider that records Complete requests.
type fakeModel struct {
	mu     sync.Mutex
	reqs   []llm.Request
	answer string
	err    error
}

func (f *fakeModel) Name() string { return "fake" }

func (f *fakeModel) Stream(context.Context, llm.Request, func(llm.Delta)) (llm.Response, error) {
	return llm.Response{}, errors.New("web_fetch must not stream")
}

func (f *fakeModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return llm.Response{}, f.err
	}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: f.answer}, FinishReason: llm.FinishStop}, nil
}

func (f *fakeModel) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.reqs...)
}

type fakeDNS map[string][]netip.Addr

func (d fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := d[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func newFetch(t *testing.T, client *http.Client, model *fakeModel, maxBytes int64) *WebFetch {
	t.Helper()
	return NewWebFetch(schemas(t).MustSpec("web_fetch"), WebFetchOptions{
		Client:   client,
		Model:    func() (llm.Provider, string) { return model, "fake-model-1" },
		MaxBytes: maxBytes,
	})
}

func fetchRun(t *testing.T, f *WebFetch, url, question string) (tool.Result, []string) {
	t.Helper()
	return run(t, prepare(t, f, tool.Args{"url": url, "question": question}))
}

func TestWebFetchPrepare(t *testing.T) {
	f := newFetch(t, nil, &fakeModel{}, 0)
	tests := []struct {
		args   tool.Args
		header string
		err    string
	}{
		{tool.Args{"question": "q"}, "✗ web_fetch: no URL", "Error: no URL provided"},
		{tool.Args{"url": "  ", "question": "q"}, "✗ web_fetch: no URL", "Error: no URL provided"},
		{tool.Args{"url": "https://example.com"}, "✗ web_fetch: no question", "Error: no question provided"},
		{tool.Args{"url": "https://example.com", "question": " \n"}, "✗ web_fetch: no question", "Error: no question provided"},
		{tool.Args{"url": "ftp://example.com/x", "question": "q"}, "✗ web_fetch: not an http(s) URL",
			"Error: URL must start with http:// or https:// (got 'ftp://example.com/x')"},
		{tool.Args{"url": "file:///etc/passwd", "question": "q"}, "✗ web_fetch: not an http(s) URL",
			"Error: URL must start with http:// or https:// (got 'file:///etc/passwd')"},
		{tool.Args{"url": "http://", "question": "q"}, "✗ web_fetch: invalid URL", "Error: Invalid URL: no hostname"},
		{tool.Args{"url": "https:///path", "question": "q"}, "✗ web_fetch: invalid URL", "Error: Invalid URL: no hostname"},
		{tool.Args{"url": "http://exa mple.com/", "question": "q"}, "✗ web_fetch: invalid URL", ""},
	}
	for _, tt := range tests {
		p := prepare(t, f, tt.args)
		if p.Header != tt.header || p.Run != nil || p.NeedsApproval {
			t.Errorf("%v: header %q (want %q), run set %v", tt.args, p.Header, tt.header, p.Run != nil)
		}
		if tt.err != "" && p.Err != tt.err || p.Err == "" {
			t.Errorf("%v: err %q, want %q", tt.args, p.Err, tt.err)
		}
	}

	long := "https://example.com/" + strings.Repeat("a", 100)
	q := strings.Repeat("why ", 60)
	p := prepare(t, f, tool.Args{"url": "  " + long + " ", "question": q})
	if p.Err != "" || !p.NeedsApproval || p.ApprovalLabel != "web_fetch" {
		t.Fatalf("valid call: err %q approval %v label %q", p.Err, p.NeedsApproval, p.ApprovalLabel)
	}
	if p.Header != "⚙ web_fetch: "+long[:80] {
		t.Errorf("header %q", p.Header)
	}
	wantPreview := tool.Preview{{Text: long}, {Style: tool.StyleDim, Text: "    Q: " + q[:200] + "..."}}
	if fmt.Sprint(p.Preview) != fmt.Sprint(wantPreview) {
		t.Errorf("preview %+v\nwant %+v", p.Preview, wantPreview)
	}
}

// Blocked by default: the default client is the netguard one.
func TestWebFetchBlocksInternalAddresses(t *testing.T) {
	var hits atomic.Int32
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "internal secret")
	})
	mux.HandleFunc("/public", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://internal.test:"+port+"/", http.StatusFound)
	})
	// allowed.test resolves to a public-looking address; the dial for that
	// address is routed to the local server, standing in for the internet.
	const publicIP = "93.184.216.34"
	dns := fakeDNS{
		"internal.test": {netip.MustParseAddr("127.0.0.1")},
		"allowed.test":  {netip.MustParseAddr(publicIP)},
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if strings.HasPrefix(addr, publicIP+":") {
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		}
		return d.DialContext(ctx, network, addr)
	}
	model := &fakeModel{answer: "leaked"}
	def := newFetch(t, nil, model, 0)
	guarded := newFetch(t, netguard.NewClient(netguard.Options{Resolver: dns, Dial: dial}), model, 0)
	tests := []struct {
		name    string
		f       *WebFetch
		url     string
		mention string
	}{
		{"loopback literal", def, srv.URL + "/", "127.0.0.1 (loopback"},
		{"name resolving to 127.0.0.1", guarded, "http://internal.test:" + port + "/", "internal.test resolves to 127.0.0.1"},
		{"redirect from allowed host", guarded, "http://allowed.test:" + port + "/public", "internal.test resolves to 127.0.0.1"},
		{"IPv6 loopback", def, "http://[::1]:" + port + "/", "::1 (loopback"},
		{"0x7f.1 literal", def, "http://0x7f.1:" + port + "/", "0x7f.1 is 127.0.0.1"},
		{"decimal literal", def, "http://2130706433:" + port + "/", "2130706433 is 127.0.0.1"},
		{"short literal", def, "http://127.1:" + port + "/", "127.1 is 127.0.0.1"},
		{"metadata", def, "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := fetchRun(t, tt.f, tt.url, "what is the secret?")
			if !r.IsError || !strings.HasPrefix(r.Output, "Fetch failed: blocked: ") || !strings.Contains(r.Output, tt.mention) {
				t.Fatalf("got %v %q; want a blocked error mentioning %q", r.IsError, r.Output, tt.mention)
			}
		})
	}
	if hits.Load() != 0 || len(model.requests()) != 0 {
		t.Fatalf("internal server hits %d, model calls %d; want none", hits.Load(), len(model.requests()))
	}
	r, _ := fetchRun(t, def, srv.URL+"/", "q")
	if !strings.Contains(r.Output, "web_fetch_allow_private = true") {
		t.Errorf("blocked message does not say how to allow: %q", r.Output)
	}
}

func privateClient() *http.Client { return netguard.NewClient(netguard.Options{AllowPrivate: true}) }

func TestWebFetchHTMLExtraction(t *testing.T) {
	var ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.Header.Get("User-Agent"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Release notes</title><script>track("x")</script></head><body>
<nav><a href="/">Home</a></nav><main><h1>Version 2.0</h1><p>Released on <b>1 May</b>. See <a href="/changes">the changes</a>.</p></main>
<footer>footer text</footer></body></html>`)
	}))
	defer srv.Close()
	model := &fakeModel{answer: "  It was released on 1 May.\n"}
	f := newFetch(t, privateClient(), model, 0)
	r, emitted := fetchRun(t, f, srv.URL+"/notes", "When was 2.0 released?")
	if r.IsError || r.Output != "It was released on 1 May." {
		t.Fatalf("got %v %q", r.IsError, r.Output)
	}
	if ua.Load() != "turnstone/1.0" {
		t.Errorf("User-Agent %v", ua.Load())
	}
	text := "Title: Release notes\n\n# Version 2.0\n\nReleased on 1 May. See the changes (" + srv.URL + "/changes)."
	n := len([]rune(text))
	if len(emitted) != 1 || emitted[0] != fmt.Sprintf("fetched %d chars, extracting...", n) {
		t.Errorf("emitted %q", emitted)
	}
	if r.Summary != fmt.Sprintf("%d chars fetched", n) {
		t.Errorf("summary %q", r.Summary)
	}
	reqs := model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	req := reqs[0]
	if req.Model != "fake-model-1" || req.System != ExtractionSystemPrompt || req.MaxTokens != 2000 ||
		req.Temperature == nil || *req.Temperature != 0.2 || len(req.Tools) != 0 || req.ReasoningEffort != "" {
		t.Errorf("request %+v", req)
	}
	want := fmt.Sprintf("Page URL: %s/notes\nPage content (%d chars):\n\n%s\n\n---\nQuestion: When was 2.0 released?", srv.URL, n, text)
	if len(req.Messages) != 1 || req.Messages[0].Role != llm.RoleUser || req.Messages[0].Content != want {
		t.Errorf("messages %+v\nwant user message %q", req.Messages, want)
	}
}

func TestWebFetchContentTypes(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	serve := func(path, ct string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if ct == "" {
				w.Header()["Content-Type"] = nil // no header, no sniffing by net/http
			} else {
				w.Header().Set("Content-Type", ct)
			}
			w.Write(body)
		})
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 100)...)
	serve("/json", "application/json", []byte(`{"version": "1.2.3", "html": "<b>kept</b>"}`))
	serve("/text", "text/plain", []byte("plain <b>text</b> stays"))
	serve("/latin1", "text/plain; charset=ISO-8859-1", []byte("caf\xe9 \x93quoted\x94"))
	serve("/png", "image/png", png)
	serve("/pdf", "application/pdf", []byte("%PDF-1.7 ..."))
	serve("/none-binary", "", png)
	serve("/none-html", "", []byte("<!DOCTYPE html><html><body><p>sniffed html</p></body></html>"))
	serve("/octet-text", "application/octet-stream", []byte("just text in a vague type"))
	serve("/empty", "text/html", []byte("  <html><body> </body></html>"))
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })

	tests := []struct {
		path    string
		isError bool
		output  string // exact model text ("" = not checked)
		content string // expected page text inside the prompt
	}{
		{"/json", false, "", `{"version": "1.2.3", "html": "<b>kept</b>"}`},
		{"/text", false, "", "plain <b>text</b> stays"},
		{"/latin1", false, "", "café “quoted”"},
		{"/none-html", false, "", "sniffed html"},
		{"/octet-text", false, "", "just text in a vague type"},
		{"/png", true, "Fetch refused: " + srv.URL + "/png returned content type image/png, which web_fetch cannot read as text", ""},
		{"/pdf", true, "Fetch refused: " + srv.URL + "/pdf returned content type application/pdf, which web_fetch cannot read as text", ""},
		{"/none-binary", true, "Fetch refused: " + srv.URL + "/none-binary returned content type (none; the content looks like image/png), which web_fetch cannot read as text", ""},
		{"/empty", false, "(empty response from URL)", ""},
		{"/missing", true, "Fetch failed: HTTP 404 (" + srv.URL + "/missing returned 404 Not Found; check the URL or try another page)", ""},
		{"/error", true, "Fetch failed: HTTP 503 (" + srv.URL + "/error returned 503 Service Unavailable; check the URL or try another page)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			model := &fakeModel{answer: "ok"}
			r, _ := fetchRun(t, newFetch(t, privateClient(), model, 0), srv.URL+tt.path, "q")
			if r.IsError != tt.isError || tt.output != "" && r.Output != tt.output {
				t.Fatalf("got %v %q", r.IsError, r.Output)
			}
			reqs := model.requests()
			if tt.content == "" {
				if len(reqs) != 0 {
					t.Fatalf("model called for %s", tt.path)
				}
				return
			}
			if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[0].Content, "\n\n"+tt.content+"\n\n---\n") {
				t.Fatalf("prompt does not carry %q: %+v", tt.content, reqs)
			}
		})
	}
}

func TestWebFetchSizeCap(t *testing.T) {
	body := strings.Repeat("0123456789", 300) // 3000 bytes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	model := &fakeModel{answer: "partial answer"}
	r, _ := fetchRun(t, newFetch(t, privateClient(), model, 1024), srv.URL, "q")
	if r.IsError || r.Output != "partial answer\n\n[page truncated at 1 KB] The answer is based on the first 1 KB only." {
		t.Fatalf("got %v %q", r.IsError, r.Output)
	}
	prompt := model.requests()[0].Messages[0].Content
	want := body[:1024] + "\n\n[page truncated at 1 KB]"
	if !strings.Contains(prompt, fmt.Sprintf("Page content (%d chars):\n\n%s\n\n---", len(want), want)) {
		t.Fatalf("prompt %q", prompt)
	}
	// The default cap is 5 MB, and the note says so.
	if got := "[page truncated at " + sizeLabel(DefaultFetchMaxBytes) + "]"; got != "[page truncated at 5 MB]" {
		t.Errorf("default note %q", got)
	}
}

func TestWebFetchLongPageWindows(t *testing.T) {
	head := strings.Repeat("h", 25_000)
	middle := strings.Repeat("m", 10_000)
	tail := strings.Repeat("é", 25_000) // multi-byte: windows count characters
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, head+middle+tail)
	}))
	defer srv.Close()
	model := &fakeModel{answer: "a"}
	if r, _ := fetchRun(t, newFetch(t, privateClient(), model, 0), srv.URL+"/big", "q?"); r.IsError {
		t.Fatal(r.Output)
	}
	want := "Page URL: " + srv.URL + "/big\nPage content (60000 chars):\n\n" + head +
		"\n\n... [10000 chars omitted] ...\n\n" + tail + "\n\n---\nQuestion: q?"
	if got := model.requests()[0].Messages[0].Content; got != want {
		t.Fatalf("prompt has %d bytes, want %d; start %q", len(got), len(want), got[:80])
	}
}

func TestWebFetchExtractionOutcomes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "some page")
	}))
	defer srv.Close()
	r, _ := fetchRun(t, newFetch(t, privateClient(), &fakeModel{err: errors.New("HTTP 500: overloaded")}, 0), srv.URL, "q")
	if !r.IsError || r.Output != "Extraction failed (page was fetched but summarization errored): HTTP 500: overloaded" {
		t.Errorf("provider error: %v %q", r.IsError, r.Output)
	}
	r, _ = fetchRun(t, newFetch(t, privateClient(), &fakeModel{answer: "  \n"}, 0), srv.URL, "q")
	if r.IsError || r.Output != "(no answer)" {
		t.Errorf("empty answer: %v %q", r.IsError, r.Output)
	}
	noModel := NewWebFetch(schemas(t).MustSpec("web_fetch"), WebFetchOptions{Client: privateClient()})
	r, _ = fetchRun(t, noModel, srv.URL, "q")
	if !r.IsError || !strings.HasPrefix(r.Output, "Extraction failed (page was fetched but summarization errored): ") {
		t.Errorf("no model: %v %q", r.IsError, r.Output)
	}
}

func TestWebFetchFollowsModelSwitch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "text")
	}))
	defer srv.Close()
	a, b := &fakeModel{answer: "from a"}, &fakeModel{answer: "from b"}
	current, name := a, "model-a"
	f := NewWebFetch(schemas(t).MustSpec("web_fetch"), WebFetchOptions{
		Client: privateClient(),
		Model:  func() (llm.Provider, string) { return current, name },
	})
	if r, _ := fetchRun(t, f, srv.URL, "q"); r.Output != "from a" {
		t.Fatalf("got %q", r.Output)
	}
	current, name = b, "model-b"
	if r, _ := fetchRun(t, f, srv.URL, "q"); r.Output != "from b" || b.requests()[0].Model != "model-b" {
		t.Fatalf("got %q", r.Output)
	}
}
