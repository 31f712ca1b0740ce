package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"turnstone/internal/llm"
)

// streamState assembles one streamed answer and forwards display deltas.
type streamState struct {
	onDelta   func(llm.Delta)
	think     llm.ThinkSplitter
	content   strings.Builder
	calls     callAssembler
	usage     llm.Usage
	finish    string
	done      bool // [DONE] seen
	delivered bool // a content or reasoning delta reached onDelta
	sources   []wireAnnotation
}

func newStreamState(onDelta func(llm.Delta)) *streamState {
	return &streamState{onDelta: onDelta}
}

// read consumes the SSE body until [DONE] or EOF. Errors before the first
// delivered delta are retryable APIErrors where the cause is transient;
// after it they are wrapped in *final.
func (s *streamState) read(ctx context.Context, body io.Reader) (llm.Response, error) {
	err := s.readEvents(ctx, body)
	if err == nil && !s.done && s.finish == "" {
		err = &llm.APIError{Provider: "openai", Message: "stream ended before the response was complete (no finish_reason and no [DONE])"}
	}
	if err != nil {
		if ctx.Err() != nil {
			return llm.Response{}, ctx.Err()
		}
		if s.delivered {
			return llm.Response{}, &final{err}
		}
		return llm.Response{}, err
	}
	for _, d := range s.think.Flush() {
		s.deliver(d)
	}
	s.deliverSources()
	calls := s.calls.result()
	return llm.Response{
		Message: llm.Message{
			Role:      llm.RoleAssistant,
			Content:   s.content.String(),
			ToolCalls: calls,
		},
		FinishReason: finishReason(s.finish, len(calls) > 0),
		Usage:        s.usage,
	}, nil
}

// readEvents parses server-sent events: "data:" lines (joined by newlines)
// up to a blank line form one event; "event:" names it; comment lines
// (keep-alives) are ignored.
func (s *streamState) readEvents(ctx context.Context, body io.Reader) error {
	br := bufio.NewReaderSize(body, 64<<10)
	var data []string
	event := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return &llm.APIError{Provider: "openai", Message: fmt.Sprintf("reading the stream failed: %v", err)}
		}
		eof := err != nil
		if eof && line != "" && !completeDataLine(line) {
			// The connection ended inside a line: a cut stream, not bad JSON.
			return &llm.APIError{Provider: "openai", Message: fmt.Sprintf("stream was cut off inside a line: %s", clip(line, 100))}
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && (len(data) > 0 || event != ""):
			if perr := s.dispatch(event, strings.Join(data, "\n")); perr != nil || s.done {
				return perr
			}
			data, event = data[:0], ""
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		}
		if eof {
			// A last event without its blank line still counts.
			if len(data) > 0 {
				return s.dispatch(event, strings.Join(data, "\n"))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// completeDataLine reports whether a last line without its newline is still
// a whole data line ([DONE] or a full JSON value).
func completeDataLine(line string) bool {
	payload, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
	payload = strings.TrimSpace(payload)
	return ok && (payload == "[DONE]" || json.Valid([]byte(payload)))
}

// dispatch handles one SSE event.
func (s *streamState) dispatch(event, data string) error {
	data = strings.TrimSpace(data)
	if data == "[DONE]" {
		s.done = true
		return nil
	}
	if data == "" {
		if event == "error" {
			return fmt.Errorf("openai endpoint sent an error event without details")
		}
		return nil
	}
	var c wireChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return fmt.Errorf("openai stream chunk is not valid JSON (%v): %s", err, clip(data, 200))
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return streamError(c.Error)
	}
	if event == "error" || c.Object == "error" {
		return streamError(json.RawMessage(data))
	}
	if c.Usage != nil {
		s.usage = c.Usage.usage()
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we never ask for n > 1
		}
		if r := ch.Delta.reasoning(); r != "" {
			s.deliver(llm.Delta{Reasoning: r})
		}
		if ch.Delta.Content != "" {
			for _, d := range s.think.Feed(string(ch.Delta.Content)) {
				s.deliver(d)
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			s.calls.add(tc)
		}
		for _, a := range ch.Delta.Annotations {
			if a.Type == "url_citation" && a.URLCitation.URL != "" {
				s.sources = append(s.sources, a)
			}
		}
		if ch.FinishReason != "" {
			s.finish = string(ch.FinishReason)
		}
	}
	return nil
}

func (s *streamState) deliver(d llm.Delta) {
	if d.Content != "" {
		s.content.WriteString(d.Content)
	}
	if d.Content != "" || d.Reasoning != "" {
		s.delivered = true
	}
	s.onDelta(d)
}

// deliverSources reports url_citation annotations as one info line block,
// URLs de-duplicated (behavior.md §1.4).
func (s *streamState) deliverSources() {
	if len(s.sources) == 0 {
		return
	}
	seen := map[string]bool{}
	lines := []string{"Sources:"}
	for _, a := range s.sources {
		u := a.URLCitation.URL
		if seen[u] {
			continue
		}
		seen[u] = true
		title := a.URLCitation.Title
		if title == "" {
			title = u
		}
		lines = append(lines, fmt.Sprintf("- [%s](%s)", title, u))
	}
	s.onDelta(llm.Delta{Info: strings.Join(lines, "\n")})
}

// streamError turns an error object sent inside a 2xx stream into an error.
// A numeric HTTP-like code becomes an APIError with that status (so a 5xx
// before any output is retried); otherwise it is a plain error.
func streamError(raw json.RawMessage) error {
	msg := messageOf(raw)
	var withCode struct {
		Code  any `json:"code"`
		Error struct {
			Code any `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &withCode)
	code := withCode.Code
	if code == nil {
		code = withCode.Error.Code
	}
	if f, ok := code.(float64); ok && f >= 400 && f <= 599 {
		return &llm.APIError{Provider: "openai", Status: int(f), Message: msg}
	}
	return fmt.Errorf("openai endpoint reported an error in the stream: %s", msg)
}

// readCompletion decodes a whole (non-streamed) chat completion.
func (p *Provider) readCompletion(ctx context.Context, body io.Reader) (llm.Response, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		if ctx.Err() != nil {
			return llm.Response{}, ctx.Err()
		}
		return llm.Response{}, p.transportError(err)
	}
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return llm.Response{}, fmt.Errorf("openai response is not valid JSON (%v): %s", err, clip(string(data), 200))
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return llm.Response{}, streamError(c.Error)
	}
	if c.Object == "error" {
		return llm.Response{}, streamError(data)
	}
	if len(c.Choices) == 0 {
		return llm.Response{}, fmt.Errorf("openai response has no choices: %s", clip(string(data), 200))
	}
	ch := c.Choices[0]
	content, _ := llm.SplitThinkTags(string(ch.Message.Content))
	var calls callAssembler
	for i, tc := range ch.Message.ToolCalls {
		if tc.Index == nil {
			tc.Index = &i
		}
		calls.add(tc)
	}
	resp := llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: content, ToolCalls: calls.result()},
	}
	resp.FinishReason = finishReason(string(ch.FinishReason), len(resp.Message.ToolCalls) > 0)
	if c.Usage != nil {
		resp.Usage = c.Usage.usage()
	}
	return resp, nil
}

// deliverWhole shows a whole answer that came back to a streaming request.
func deliverWhole(resp llm.Response, onDelta func(llm.Delta)) {
	if resp.Message.Content != "" {
		onDelta(llm.Delta{Content: resp.Message.Content})
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
