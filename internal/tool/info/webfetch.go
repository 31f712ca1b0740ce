package info

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"turnstone/internal/llm"
	"turnstone/internal/netguard"
	"turnstone/internal/tool"
)

// Web fetch defaults.
const (
	DefaultFetchMaxBytes = 5 << 20
	DefaultFetchTimeout  = 30 * time.Second
	// extractWindow is the text sent to the model: pages longer than twice
	// this keep their first and last extractWindow characters.
	extractWindow    = 25_000
	extractMaxTokens = 2000
	extractTemp      = 0.2
	userAgent        = "turnstone/1.0"
)

// ExtractionSystemPrompt is the system message of the extraction call.
const ExtractionSystemPrompt = "You are a web content extraction assistant. Answer the question using only the page content provided. " +
	"Be concise and factual. If the page does not contain the answer, say so plainly instead of guessing."

// ModelSource returns the session's current provider and model; web_fetch
// asks it on every call, so a /model switch is followed.
type ModelSource func() (llm.Provider, string)

// WebFetchOptions configure web_fetch.
type WebFetchOptions struct {
	// Client performs the GET. It must be SSRF-safe; nil means
	// netguard.NewClient with private addresses blocked.
	Client *http.Client
	// Model gives the provider and model that answer the question.
	Model ModelSource
	// MaxBytes caps the download; 0 means DefaultFetchMaxBytes.
	MaxBytes int64
	// Timeout bounds the HTTP fetch (not the extraction call); 0 means
	// DefaultFetchTimeout. Wire the session's tool timeout here.
	Timeout time.Duration
}

// WebFetch fetches a page and has the model answer a question about it.
type WebFetch struct {
	spec tool.Spec
	opts WebFetchOptions
}

var _ tool.Tool = (*WebFetch)(nil)

// NewWebFetch returns the web_fetch tool; spec is schemas.MustSpec("web_fetch").
func NewWebFetch(spec tool.Spec, opts WebFetchOptions) *WebFetch {
	if opts.Client == nil {
		opts.Client = netguard.NewClient(netguard.Options{})
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultFetchMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultFetchTimeout
	}
	return &WebFetch{spec: spec, opts: opts}
}

// Spec implements tool.Tool.
func (f *WebFetch) Spec() tool.Spec { return f.spec }

// Prepare validates the URL and question; it does no network I/O (the
// address check happens when the connection is dialed).
func (f *WebFetch) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	raw := strings.TrimSpace(call.Args.String("url"))
	question := strings.TrimSpace(call.Args.String("question"))
	if raw == "" {
		return failed("web_fetch", "no URL", "Error: no URL provided")
	}
	if question == "" {
		return failed("web_fetch", "no question", "Error: no question provided")
	}
	lower := strings.ToLower(raw)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return failed("web_fetch", "not an http(s) URL",
			"Error: URL must start with http:// or https:// (got '"+cutDots(raw, 200)+"')")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return failed("web_fetch", "invalid URL", "Error: Invalid URL: "+err.Error())
	}
	if u.Hostname() == "" {
		return failed("web_fetch", "invalid URL", "Error: Invalid URL: no hostname")
	}
	short, _ := cut(raw, 80)
	return &tool.Prepared{
		Header: header("web_fetch", short),
		Preview: tool.Preview{
			{Text: raw},
			{Style: tool.StyleDim, Text: "    Q: " + cutDots(question, 200)},
		},
		NeedsApproval: true,
		ApprovalLabel: "web_fetch",
		Run: func(ctx context.Context, emit tool.Emit) tool.Result {
			return f.run(ctx, emit, raw, question)
		},
	}
}

func (f *WebFetch) run(ctx context.Context, emit tool.Emit, rawURL, question string) tool.Result {
	page, res, ok := f.fetch(ctx, rawURL)
	if !ok {
		return res
	}
	if strings.TrimSpace(page.text) == "" {
		return tool.Result{Output: "(empty response from URL)", Summary: "empty page"}
	}
	n := utf8.RuneCountInString(page.text)
	if emit != nil {
		emit(fmt.Sprintf("fetched %d chars, extracting...", n))
	}
	answer, err := f.extract(ctx, rawURL, question, page.text, n)
	if err != nil {
		return tool.ErrorResult("Extraction failed (page was fetched but summarization errored): " + err.Error())
	}
	if answer == "" {
		answer = "(no answer)"
	}
	if page.truncated {
		answer += "\n\n" + page.note + " The answer is based on the first " + sizeLabel(f.opts.MaxBytes) + " only."
	}
	return tool.Result{Output: answer, Summary: fmt.Sprintf("%d chars fetched", n)}
}

type fetchedPage struct {
	text      string
	truncated bool
	note      string
}

// fetch GETs the page and turns it into text; on failure it returns the
// error result and false.
func (f *WebFetch) fetch(ctx context.Context, rawURL string) (fetchedPage, tool.Result, bool) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fetchedPage{}, tool.ErrorResult("Error fetching URL: " + err.Error()), false
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	resp, err := f.opts.Client.Do(req)
	if err != nil {
		return fetchedPage{}, tool.ErrorResult(fetchError(err, f.opts.Timeout)), false
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fetchedPage{}, tool.ErrorResult(fmt.Sprintf("Fetch failed: HTTP %d (%s returned %s; check the URL or try another page)", resp.StatusCode, resp.Request.URL, resp.Status)), false
	}
	ct := resp.Header.Get("Content-Type")
	mediaType, params, _ := mime.ParseMediaType(ct)
	kind := classifyContent(mediaType)
	br := bufio.NewReaderSize(resp.Body, 512)
	if kind == contentUnknown {
		// No or a vague Content-Type: judge by the first bytes, as a
		// browser does, before downloading the rest.
		head, _ := br.Peek(512)
		mediaType, params, _ = mime.ParseMediaType(http.DetectContentType(head))
		if kind = classifyContent(mediaType); kind == contentUnknown {
			kind = contentRefused
		}
		if ct == "" {
			ct = "(none; the content looks like " + mediaType + ")"
		}
	}
	if kind == contentRefused {
		return fetchedPage{}, tool.ErrorResult(fmt.Sprintf("Fetch refused: %s returned content type %s, which web_fetch cannot read as text", rawURL, ct)), false
	}
	body, truncated, err := readCapped(br, f.opts.MaxBytes)
	if err != nil {
		return fetchedPage{}, tool.ErrorResult(fetchError(err, f.opts.Timeout)), false
	}
	body = decodeText(body, params["charset"])
	text := string(body)
	if kind == contentHTML {
		text = HTMLToText(body, resp.Request.URL)
	}
	page := fetchedPage{text: text, truncated: truncated}
	if truncated {
		page.note = "[page truncated at " + sizeLabel(f.opts.MaxBytes) + "]"
		page.text += "\n\n" + page.note
	}
	return page, tool.Result{}, true
}

// fetchError phrases a transport failure; a blocked address is reported
// as the guard states it.
func fetchError(err error, timeout time.Duration) string {
	var blocked *netguard.BlockedError
	switch {
	case errors.As(err, &blocked):
		return "Fetch failed: " + blocked.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("Fetch failed: timed out after %s", timeout)
	case errors.Is(err, context.Canceled):
		return "Fetch failed: cancelled"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return "Fetch failed: " + err.Error()
}

type contentKind int

const (
	contentUnknown contentKind = iota
	contentHTML
	contentText
	contentRefused
)

func classifyContent(mediaType string) contentKind {
	switch {
	case mediaType == "":
		return contentUnknown
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		return contentHTML
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/javascript", mediaType == "application/x-javascript",
		mediaType == "application/ecmascript", mediaType == "application/yaml",
		mediaType == "application/x-yaml", mediaType == "application/toml",
		mediaType == "application/x-ndjson":
		return contentText
	case mediaType == "application/octet-stream", mediaType == "binary/octet-stream":
		return contentUnknown
	}
	return contentRefused
}

// readCapped reads at most max bytes and says whether the body was longer.
// A cut in the middle of a UTF-8 sequence is trimmed back.
func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) <= max {
		return b, false, nil
	}
	b = b[:max]
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				b = b[:len(b)-i]
			}
			break
		}
	}
	return b, true, nil
}

// windows1252 maps bytes 0x80-0x9F; browsers decode ISO-8859-1 labelled
// pages as windows-1252 too.
var windows1252 = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}

// decodeText returns the body as UTF-8: Latin-1 family charsets are
// converted, anything else is read as UTF-8 with invalid bytes replaced.
func decodeText(b []byte, charset string) []byte {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252", "x-cp1252":
		if !utf8.Valid(b) {
			out := make([]byte, 0, len(b)+len(b)/8)
			for _, c := range b {
				switch {
				case c < 0x80:
					out = append(out, c)
				case c < 0xA0:
					out = utf8.AppendRune(out, windows1252[c-0x80])
				default:
					out = utf8.AppendRune(out, rune(c))
				}
			}
			return out
		}
	}
	if !utf8.Valid(b) {
		return bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return b
}

// sizeLabel prints a byte count the way the docs do ("5 MB").
func sizeLabel(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// extract makes the one non-streaming model call of behavior §2.9.
func (f *WebFetch) extract(ctx context.Context, pageURL, question, text string, n int) (string, error) {
	if f.opts.Model == nil {
		return "", errors.New("no model is configured for extraction")
	}
	provider, model := f.opts.Model()
	if provider == nil {
		return "", errors.New("no model is configured for extraction")
	}
	temp := extractTemp
	req := llm.Request{
		Model:  model,
		System: ExtractionSystemPrompt,
		Messages: []llm.Message{{
			Role:    llm.RoleUser,
			Content: ExtractionPrompt(pageURL, question, text, n),
		}},
		MaxTokens:   extractMaxTokens,
		Temperature: &temp,
	}
	resp, err := provider.Complete(ctx, req)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(resp.Message.Text()), nil
}

// ExtractionPrompt is the user message of the extraction call: text longer
// than 50,000 characters keeps its first and last 25,000, with a note of
// what was left out; n is the full text's length in characters.
func ExtractionPrompt(pageURL, question, text string, n int) string {
	if n > 2*extractWindow {
		runes := []rune(text)
		text = string(runes[:extractWindow]) +
			fmt.Sprintf("\n\n... [%d chars omitted] ...\n\n", n-2*extractWindow) +
			string(runes[n-extractWindow:])
	}
	return fmt.Sprintf("Page URL: %s\nPage content (%d chars):\n\n%s\n\n---\nQuestion: %s", pageURL, n, text, question)
}
