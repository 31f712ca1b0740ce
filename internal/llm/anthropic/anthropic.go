// Package anthropic is the llm.Provider for the Anthropic Messages API
// (POST /v1/messages, streamed as server-sent events).
//
// It is written on net/http rather than anthropic-sdk-go: assistant content
// blocks are kept as raw JSON and replayed verbatim (thinking signatures,
// server-tool results with encrypted content, block kinds newer than any SDK
// release), malformed partial tool input must reach the engine's argument
// rescue as raw text, and retries follow llm.RetryPolicy with visible info
// lines. All three are easier with raw JSON than through the SDK's typed
// accumulator, and the adapter stays free of the SDK's build cost.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"turnstone/internal/llm"
)

// DefaultBaseURL is the public Anthropic API.
const DefaultBaseURL = "https://api.anthropic.com"

// apiVersion is the anthropic-version header the wire shapes follow.
const apiVersion = "2023-06-01"

// Options configures a Provider.
type Options struct {
	// BaseURL is the API root, with or without a trailing /v1
	// (default DefaultBaseURL). Requests go to {BaseURL}/v1/messages.
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// HTTPClient defaults to a client without an overall timeout (streams
	// can run for minutes; cancel through the context).
	HTTPClient *http.Client
	// Retry governs retries of 429, 5xx and 529 answers and connection
	// errors before the first delta. The zero value means llm.DefaultRetry;
	// Retries < 0 disables retrying.
	Retry llm.RetryPolicy
	// Capabilities reports what a model supports (native web search, max
	// output). Default: llm.LookupCapabilities(model, nil).
	Capabilities func(model string) llm.Capabilities
}

// Provider speaks the Anthropic Messages API.
type Provider struct {
	endpoint string
	apiKey   string
	client   *http.Client
	retry    llm.RetryPolicy
	caps     func(string) llm.Capabilities
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for opts.
func New(opts Options) *Provider {
	base := strings.TrimRight(strings.TrimSpace(opts.BaseURL), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	endpoint := base + "/v1/messages"
	if strings.HasSuffix(base, "/v1") {
		endpoint = base + "/messages"
	}
	p := &Provider{endpoint: endpoint, apiKey: opts.APIKey, client: opts.HTTPClient, retry: opts.Retry, caps: opts.Capabilities}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.retry == (llm.RetryPolicy{}) {
		p.retry = llm.DefaultRetry
	}
	if p.caps == nil {
		p.caps = func(model string) llm.Capabilities { return llm.LookupCapabilities(model, nil) }
	}
	return p
}

// Name returns "anthropic".
func (p *Provider) Name() string { return llm.ProviderAnthropic }

// Stream performs a streaming Messages call. Failures before the first
// delta are retried by the provider's RetryPolicy; after it they end the
// call.
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
		delivered := false
		emit := func(d llm.Delta) {
			delivered = true
			onDelta(d)
		}
		r, err := p.streamOnce(ctx, body, emit)
		if err != nil && delivered {
			return finalError{err} // output reached the user: never retry
		}
		resp = r
		return err
	})
	var fe finalError
	if errors.As(err, &fe) {
		err = fe.err
	}
	return resp, err
}

// nonStreamingMaxTokens is the largest max_tokens the API serves without
// streaming; longer calls must stream (the API rejects them otherwise).
const nonStreamingMaxTokens = 21333

// Complete performs a non-streaming Messages call. Calls allowed more than
// nonStreamingMaxTokens are streamed and collected instead, without deltas.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if maxTokens(req.MaxTokens, p.caps(req.Model)) > nonStreamingMaxTokens {
		return p.Stream(ctx, req, nil)
	}
	body, err := p.body(req, false)
	if err != nil {
		return llm.Response{}, err
	}
	var resp llm.Response
	err = p.retry.Do(ctx, nil, func(ctx context.Context) error {
		httpResp, err := p.post(ctx, body)
		if err != nil {
			return err
		}
		defer httpResp.Body.Close()
		data, err := io.ReadAll(httpResp.Body)
		if err != nil {
			return p.transportError(ctx, fmt.Errorf("reading response: %w", err))
		}
		resp, err = decodeMessage(data)
		return err
	})
	return resp, err
}

// body encodes the wire request for req.
func (p *Provider) body(req llm.Request, stream bool) ([]byte, error) {
	w := buildRequest(req, p.caps(req.Model))
	w.Stream = stream
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding anthropic request for model %q: %w", req.Model, err)
	}
	return b, nil
}

// streamOnce sends one streaming request and assembles its events.
func (p *Provider) streamOnce(ctx context.Context, body []byte, emit func(llm.Delta)) (llm.Response, error) {
	httpResp, err := p.post(ctx, body)
	if err != nil {
		return llm.Response{}, err
	}
	defer httpResp.Body.Close()
	a := newAssembler(emit)
	var bad *badEvent
	err = readEvents(httpResp.Body, func(data []byte) error {
		if err := ctx.Err(); err != nil { // no output after Ctrl-C
			return err
		}
		err := a.event(data)
		var ae *llm.APIError
		if err == nil || errors.Is(err, errStop) || errors.As(err, &ae) {
			return err // errStop ends the stream; an API error event keeps its status
		}
		bad = &badEvent{err}
		return bad
	})
	switch {
	case err == nil:
		return a.response()
	case bad != nil && ctx.Err() == nil:
		// Not a network failure: the endpoint sent something that is not
		// the Messages stream, and sending the request again will not help.
		return llm.Response{}, fmt.Errorf("anthropic stream from %s is not a Messages API stream (%v): check --base-url and --provider", p.endpoint, bad.err)
	}
	var ae *llm.APIError
	if errors.As(err, &ae) || ctx.Err() != nil {
		return llm.Response{}, p.transportError(ctx, err)
	}
	return llm.Response{}, p.transportError(ctx, fmt.Errorf("reading stream: %w", err))
}

// post sends body and returns a 2xx response, or an *llm.APIError.
func (p *Provider) post(ctx context.Context, body []byte) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request to %s: %w", p.endpoint, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Anthropic-Version", apiVersion)
	if p.apiKey != "" {
		hr.Header.Set("X-Api-Key", p.apiKey)
	}
	resp, err := p.client.Do(hr)
	if err != nil {
		return nil, p.transportError(ctx, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return nil, &llm.APIError{
		Provider:   llm.ProviderAnthropic,
		Status:     resp.StatusCode,
		Message:    errorMessage(data, resp.Status),
		RetryAfter: llm.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
}

// transportError turns a failed connection or read into a retryable
// APIError, unless the caller cancelled (then the context error wins).
func (p *Provider) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic request to %s: %w", p.endpoint, ctx.Err())
	}
	var ae *llm.APIError
	if errors.As(err, &ae) {
		return err
	}
	return &llm.APIError{Provider: llm.ProviderAnthropic, Message: err.Error()}
}

// finalError marks a failure after output reached the user; it hides the
// APIError from RetryPolicy so the call is not repeated.
type finalError struct{ err error }

func (e finalError) Error() string { return e.err.Error() }

// errorMessage extracts error.message from an Anthropic error body, falling
// back to the body text or the HTTP status.
func errorMessage(body []byte, status string) string {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		if len(s) > 500 {
			s = s[:500] + "…"
		}
		return s
	}
	return status
}

// streamErrorStatus maps the error type of an in-stream error event to the
// HTTP status the same error would have had before streaming began.
func streamErrorStatus(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "overloaded_error":
		return 529
	default:
		return http.StatusInternalServerError
	}
}

// badEvent marks an event the assembler could not use.
type badEvent struct{ err error }

func (b *badEvent) Error() string { return b.err.Error() }
