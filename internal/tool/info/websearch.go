package info

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"turnstone/internal/tool"
)

// Web search defaults.
const (
	DefaultTavilyBaseURL = "https://api.tavily.com"
	DefaultSearchTimeout = 30 * time.Second
	defaultMaxResults    = 5
	maxMaxResults        = 20
	snippetChars         = 500
	maxSearchBody        = 4 << 20
)

var searchTopics = map[string]bool{"general": true, "news": true, "finance": true}

// WebSearchOptions configure web_search.
type WebSearchOptions struct {
	// Key is the Tavily API key ([api] tavily_key); "" falls back to the
	// TAVILY_API_KEY environment variable, read once by NewWebSearch.
	Key string
	// BaseURL is the Tavily endpoint ([api] tavily_base_url); "" means
	// DefaultTavilyBaseURL. Requests go to {BaseURL}/search.
	BaseURL string
	// Client sends the request; nil means a plain http.Client (the user
	// chose the endpoint, so no address filtering applies).
	Client *http.Client
	// Timeout bounds one search; 0 means DefaultSearchTimeout. Wire the
	// session's tool timeout here.
	Timeout time.Duration
	// ConfigPath names the config file in the missing-key message; ""
	// means $XDG_CONFIG_HOME/turnstone/config.toml (default
	// ~/.config/turnstone/config.toml).
	ConfigPath string
}

// WebSearch searches the web through the Tavily API.
//
// Provider-native search (Anthropic's server-side web_search, OpenAI search
// models) replaces this tool at the provider boundary: the adapter drops the
// web_search function definition and adds its own, so calls never reach
// this tool. Nothing here needs to know about it.
type WebSearch struct {
	spec tool.Spec
	opts WebSearchOptions
}

var _ tool.Tool = (*WebSearch)(nil)

// NewWebSearch returns the web_search tool; spec is schemas.MustSpec("web_search").
func NewWebSearch(spec tool.Spec, opts WebSearchOptions) *WebSearch {
	opts.Key = strings.TrimSpace(opts.Key)
	if opts.Key == "" {
		opts.Key = strings.TrimSpace(os.Getenv("TAVILY_API_KEY"))
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultTavilyBaseURL
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultSearchTimeout
	}
	if opts.ConfigPath == "" {
		opts.ConfigPath = DefaultConfigPath()
	}
	return &WebSearch{spec: spec, opts: opts}
}

// DefaultConfigPath is $XDG_CONFIG_HOME/turnstone/config.toml, or
// ~/.config/turnstone/config.toml when XDG_CONFIG_HOME is unset.
func DefaultConfigPath() string {
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "turnstone", "config.toml")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "turnstone", "config.toml")
	}
	return "~/.config/turnstone/config.toml"
}

// Spec implements tool.Tool.
func (s *WebSearch) Spec() tool.Spec { return s.spec }

// Prepare validates the query and options.
func (s *WebSearch) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	query := strings.TrimSpace(call.Args.String("query"))
	if query == "" {
		return failed("web_search", "empty query", "Error: no query provided")
	}
	if s.opts.Key == "" {
		return failed("web_search", "no Tavily API key", "Error: web_search is not configured: no Tavily API key. "+
			"Set tavily_key under [api] in "+s.opts.ConfigPath+", or set the TAVILY_API_KEY environment variable, then restart. "+
			"Until then, use web_fetch to read a page whose URL you know.")
	}
	maxResults := defaultMaxResults
	if n, ok, err := call.Args.Int("max_results"); ok && err == nil && n != 0 {
		maxResults = min(max(n, 1), maxMaxResults)
	}
	topic := strings.ToLower(strings.TrimSpace(call.Args.String("topic")))
	if !searchTopics[topic] {
		topic = "general"
	}
	short, _ := cut(query, 80)
	return &tool.Prepared{
		Header:        header("web_search", short),
		Preview:       tool.Preview{{Text: cutDots(query, 200)}},
		NeedsApproval: true,
		ApprovalLabel: "web_search",
		Run: func(ctx context.Context, _ tool.Emit) tool.Result {
			return s.run(ctx, query, maxResults, topic)
		},
	}
}

type tavilyRequest struct {
	Query         string `json:"query"`
	MaxResults    int    `json:"max_results"`
	Topic         string `json:"topic"`
	IncludeAnswer bool   `json:"include_answer"`
}

type tavilyResponse struct {
	Answer  string `json:"answer"`
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

func (s *WebSearch) run(ctx context.Context, query string, maxResults int, topic string) tool.Result {
	resp, err := s.search(ctx, tavilyRequest{Query: query, MaxResults: maxResults, Topic: topic, IncludeAnswer: true})
	if err != nil {
		return tool.ErrorResult(s.redact("Tavily search failed: " + err.Error()))
	}
	var parts []string
	if a := strings.TrimSpace(resp.Answer); a != "" {
		parts = append(parts, "Answer: "+a)
	}
	if len(resp.Results) > 0 {
		lines := make([]string, len(resp.Results))
		for i, r := range resp.Results {
			snippet, _ := cut(strings.TrimSpace(r.Content), snippetChars)
			lines[i] = fmt.Sprintf("%d. [%s](%s)\n   %s", i+1, r.Title, r.URL, snippet)
		}
		parts = append(parts, strings.Join(lines, "\n"))
	}
	if len(parts) == 0 {
		return tool.Result{Output: "No results for '" + query + "'.", Summary: "0 results"}
	}
	return tool.Result{Output: s.redact(strings.Join(parts, "\n\n")), Summary: fmt.Sprintf("%d results", len(resp.Results))}
}

func (s *WebSearch) search(ctx context.Context, body tavilyRequest) (*tavilyResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.opts.BaseURL+"/search", bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build request for %s/search: %w", s.opts.BaseURL, err)
	}
	req.Header.Set("Authorization", "Bearer "+s.opts.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("timed out after %s", s.opts.Timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Redact before quoting, which could otherwise hide the key.
		return nil, fmt.Errorf("HTTP %d%s", resp.StatusCode, apiErrorDetail([]byte(s.redact(string(data)))))
	}
	var out tavilyResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("unreadable response (%s): %w", cutDots(s.redact(string(data)), 200), err)
	}
	return &out, nil
}

// apiErrorDetail pulls a message out of an error body ({"detail":{"error":
// "..."}} is Tavily's shape), or quotes the start of the body.
func apiErrorDetail(data []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
		Error  string          `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil {
		var d struct {
			Error string `json:"error"`
		}
		var ds string
		switch {
		case json.Unmarshal(e.Detail, &d) == nil && d.Error != "":
			return ": " + d.Error
		case json.Unmarshal(e.Detail, &ds) == nil && ds != "":
			return ": " + ds
		case e.Error != "":
			return ": " + e.Error
		}
	}
	if t := strings.TrimSpace(string(data)); t != "" {
		return ": " + strconv.Quote(cutDots(t, 300))
	}
	return ""
}

// redact keeps the API key out of anything the model or the user sees, such
// as an error body that echoes the request.
func (s *WebSearch) redact(text string) string {
	if s.opts.Key == "" {
		return text
	}
	return strings.ReplaceAll(text, s.opts.Key, "[redacted]")
}
