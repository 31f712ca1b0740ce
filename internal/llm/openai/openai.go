// Package openai is the llm.Provider for OpenAI-compatible chat-completions
// endpoints (vLLM, llama.cpp, NVIDIA NIM, Ollama, OpenAI itself).
//
// It is hand-written on net/http instead of using an SDK because several
// compatible servers omit tool_calls[].index in stream deltas, which SDK
// accumulators turn into one merged call, and because servers put reasoning
// into non-standard fields (reasoning_content, reasoning) that typed SDK
// structs drop (see research/go-deps.md).
//
// Retries: a call is retried (llm.RetryPolicy) on 429, 5xx and transport
// errors until the first delta has been shown to the user; after that a
// failure ends the call. This fixes the Python original, whose lazy stream
// generators were never retried (behavior.md §1.8).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"turnstone/internal/llm"
)

// DefaultBaseURL is used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// EffortParam says how Request.ReasoningEffort is put on the wire.
type EffortParam string

const (
	// EffortAuto sends chat_template_kwargs, except to api.openai.com, which
	// rejects unknown fields and gets a top-level reasoning_effort.
	EffortAuto EffortParam = ""
	// EffortTemplateKwargs sends "chat_template_kwargs": {"reasoning_effort": e}
	// (vLLM and SGLang chat templates read it).
	EffortTemplateKwargs EffortParam = "chat_template_kwargs"
	// EffortTopLevel sends "reasoning_effort": e (OpenAI reasoning models).
	EffortTopLevel EffortParam = "reasoning_effort"
	// EffortOmit never sends the effort.
	EffortOmit EffortParam = "none"
)

// Options configures a Provider.
type Options struct {
	// BaseURL is the API root including the version, e.g.
	// "http://localhost:8000/v1"; requests go to BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when non-empty. It is
	// never logged or put into an error message.
	APIKey string
	// HTTPClient defaults to a client without an overall timeout (streams
	// may run for minutes); cancel the context to stop a call.
	HTTPClient *http.Client
	// Retry is the retry policy. The zero value means llm.DefaultRetry;
	// set Retries to -1 to disable retries.
	Retry llm.RetryPolicy
	// EffortParam selects how the reasoning effort is sent.
	EffortParam EffortParam
	// ExtraBody is merged into every request body last (free-form request
	// extras from configuration, e.g. "top_p" or "chat_template_kwargs").
	ExtraBody map[string]any
	// Headers are added to every request (e.g. OpenRouter's HTTP-Referer).
	Headers http.Header
	// Capabilities reports what a model supports (native web search,
	// temperature); see capabilities.go. Default:
	// llm.LookupCapabilities(model, nil).
	Capabilities func(model string) llm.Capabilities
}

// Provider talks to one OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Provider struct {
	opts        Options
	endpoint    string
	client      *http.Client
	retry       llm.RetryPolicy
	effortParam EffortParam
	// shown is the endpoint for messages, with any password masked.
	shown string
	// official is true for api.openai.com, which rejects fields that
	// self-hosted servers need (max_tokens next to max_completion_tokens).
	official bool
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for opts.
func New(opts Options) *Provider {
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	p := &Provider{
		opts:        opts,
		endpoint:    base + "/chat/completions",
		shown:       redactURL(base + "/chat/completions"),
		client:      opts.HTTPClient,
		retry:       opts.Retry,
		effortParam: opts.EffortParam,
	}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.retry == (llm.RetryPolicy{}) {
		p.retry = llm.DefaultRetry
	}
	if u, err := url.Parse(base); err == nil && u.Hostname() == "api.openai.com" {
		p.official = true
	}
	if p.effortParam == EffortAuto {
		p.effortParam = EffortTemplateKwargs
		if p.official {
			p.effortParam = EffortTopLevel
		}
	}
	return p
}

// Name returns "openai".
func (p *Provider) Name() string { return "openai" }

// Stream performs a streaming chat completion; see llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	body, err := p.body(req, true)
	if err != nil {
		return llm.Response{}, err
	}
	var resp llm.Response
	info := func(s string) { onDelta(llm.Delta{Info: s}) }
	err = p.retry.Do(ctx, info, func(ctx context.Context) error {
		hr, err := p.post(ctx, body, true)
		if err != nil {
			return err
		}
		defer hr.Body.Close()
		if isJSON(hr.Header.Get("Content-Type")) {
			// The server ignored "stream": true and answered in one piece.
			resp, err = p.readCompletion(ctx, hr.Body)
			if err == nil {
				deliverWhole(resp, onDelta)
			}
			return err
		}
		s := newStreamState(onDelta)
		resp, err = s.read(ctx, hr.Body)
		return err
	})
	return resp, p.finalError(ctx, err)
}

// Complete performs a non-streaming chat completion; see llm.Provider.
// Reasoning (fields or think tags) is dropped from the returned message.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	body, err := p.body(req, false)
	if err != nil {
		return llm.Response{}, err
	}
	var resp llm.Response
	err = p.retry.Do(ctx, nil, func(ctx context.Context) error {
		hr, err := p.post(ctx, body, false)
		if err != nil {
			return err
		}
		defer hr.Body.Close()
		resp, err = p.readCompletion(ctx, hr.Body)
		return err
	})
	return resp, p.finalError(ctx, err)
}

// post sends the request and returns a 2xx response whose body the caller
// must close. Failures are *llm.APIError (retryable or not) or the context's
// error.
func (p *Provider) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w (check --base-url)", p.shown, err)
	}
	for k, vs := range p.opts.Headers {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	if p.opts.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.opts.APIKey)
	}
	hr, err := p.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("openai request to %s stopped: %w", p.shown, ctx.Err())
		}
		return nil, p.transportError(err)
	}
	if ct := hr.Header.Get("Content-Type"); hr.StatusCode/100 == 2 && strings.HasPrefix(ct, "text/html") {
		// A web page (wrong base URL, a login proxy) is not a model
		// endpoint; retrying will not help.
		defer hr.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(hr.Body, 200))
		return nil, &final{fmt.Errorf("%s answered with a web page (%s), not a chat completion: check --base-url (it should end in /v1 for vLLM, llama.cpp and OpenAI); the page starts %q", p.shown, ct, data)}
	}
	if hr.StatusCode < 200 || hr.StatusCode > 299 {
		defer hr.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(hr.Body, 64<<10))
		return nil, &llm.APIError{
			Provider:   p.Name(),
			Status:     hr.StatusCode,
			Message:    errorMessage(data, hr.StatusCode),
			RetryAfter: retryAfter(hr.Header),
		}
	}
	return hr, nil
}

// transportError turns a network failure into a retryable APIError. The
// URL is dropped from *url.Error (it is the configured endpoint, which the
// caller knows) to keep messages short.
func (p *Provider) transportError(err error) *llm.APIError {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if p.shown != p.endpoint {
		msg = strings.ReplaceAll(msg, p.endpoint, p.shown)
	}
	return &llm.APIError{Provider: p.Name(), Status: 0, Message: fmt.Sprintf("POST %s: %s", p.shown, msg)}
}

// finalError unwraps the non-retryable marker and makes a cancelled call
// report the context's error.
func (p *Provider) finalError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var f *final
	if errors.As(err, &f) {
		err = f.err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("openai request to %s stopped: %w", p.shown, ctxErr)
	}
	return err
}

// final marks an error that must not be retried because output already
// reached the user. It deliberately has no Unwrap, so RetryPolicy.Do does
// not see a retryable APIError inside it; finalError unwraps it.
type final struct{ err error }

func (f *final) Error() string { return f.err.Error() }

func isJSON(contentType string) bool {
	return strings.HasPrefix(strings.TrimSpace(strings.ToLower(contentType)), "application/json")
}

// retryAfter reads OpenAI's retry-after-ms or the standard Retry-After.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.Atoi(h.Get("Retry-After-Ms")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return llm.ParseRetryAfter(h.Get("Retry-After"), time.Now())
}

// errorMessage extracts the endpoint's own message from an error body:
// {"error":{"message":…}}, {"error":"…"}, {"detail":…}, {"message":…},
// else the start of the body text.
func errorMessage(body []byte, status int) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		for _, raw := range []json.RawMessage{v.Error, v.Detail, v.Message} {
			if msg := messageOf(raw); msg != "" {
				return msg
			}
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 300 {
		text = strings.ToValidUTF8(text[:300], "") + "…"
	}
	if text == "" {
		text = http.StatusText(status)
	}
	return text
}

// messageOf reads a message from a JSON string, an object with a "message"
// (or "msg") string, or else returns the compact JSON itself.
func messageOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
		Msg     string `json:"msg"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if obj.Message != "" {
			return obj.Message
		}
		if obj.Msg != "" {
			return obj.Msg
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// redactURL masks a password in u for messages (http://user:***@host/...).
func redactURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	return parsed.Redacted()
}
