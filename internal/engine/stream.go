package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"turnstone/internal/llm"
)

// stream performs one model request and turns its deltas into events. It
// returns the assistant message with tool-call ids filled in; a response cut
// by the token limit loses its partial tool calls (behavior.md §1.5).
func (s *Session) stream(ctx context.Context) (llm.Response, error) {
	s.state(StateThinking)
	req := s.request()
	s.mu.Lock()
	debug := s.debug
	s.mu.Unlock()
	if debug {
		s.emit(InfoEvent{Message: fmt.Sprintf("[debug] request: model=%s messages=%d tools=%d system=%d chars",
			req.Model, len(req.Messages), len(req.Tools), len(req.System))})
	}
	resp, err := s.opts.Provider.Stream(ctx, req, func(d llm.Delta) {
		switch {
		case d.Content != "":
			s.emit(ContentEvent{Text: d.Content})
		case d.Reasoning != "":
			s.emit(ReasoningEvent{Text: d.Reasoning})
		case d.Info != "":
			s.emit(InfoEvent{Message: d.Info})
		}
	})
	if err != nil {
		return resp, err
	}
	s.calibrate(req, resp.Usage)
	s.emit(UsageEvent{Usage: resp.Usage, ContextWindow: s.opts.ContextWindow})
	switch resp.FinishReason {
	case llm.FinishLength:
		s.emit(ErrorEvent{Message: fmt.Sprintf("Warning: response truncated (hit %d token limit). Raise --max-tokens or start a new conversation with /clear.", req.MaxTokens)})
		if len(resp.Message.ToolCalls) > 0 {
			s.emit(ErrorEvent{Message: "Discarding partial tool calls from truncated response."})
			resp.Message.ToolCalls = nil
		}
	case llm.FinishContentFilter:
		s.emit(ErrorEvent{Message: "Warning: the response was stopped by the provider's content filter."})
	}
	resp.Message.Role = llm.RoleAssistant
	s.mu.Lock()
	for i := range resp.Message.ToolCalls {
		if resp.Message.ToolCalls[i].ID == "" {
			s.callSeq++
			resp.Message.ToolCalls[i].ID = fmt.Sprintf("call_%s_%d", clip(s.opts.WorkspaceID, 8), s.callSeq)
		}
	}
	s.mu.Unlock()
	return resp, nil
}

// request builds the next model request from the current history, tools
// and system prompt.
func (s *Session) request() llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return llm.Request{
		Model:           s.model,
		System:          s.systemPrompt(),
		Messages:        append([]llm.Message(nil), s.messages...),
		Tools:           s.opts.Catalog.Definitions(),
		MaxTokens:       s.opts.MaxTokens,
		Temperature:     s.opts.Temperature,
		ReasoningEffort: s.opts.ReasoningEffort,
	}
}

// calibrate updates the chars-per-token ratio from the prompt size the
// endpoint reported (behavior.md §7.6).
func (s *Session) calibrate(req llm.Request, u llm.Usage) {
	if u.PromptTokens <= 0 {
		return
	}
	chars := len(req.System)
	for _, m := range req.Messages {
		chars += len(m.Text())
		for _, tc := range m.ToolCalls {
			chars += len(tc.Name) + len(tc.Arguments)
		}
	}
	if b, err := json.Marshal(req.Tools); err == nil {
		chars += len(b)
	}
	ratio := float64(chars) / float64(u.PromptTokens)
	if ratio < 1 || ratio > 10 {
		return // implausible (cached prompts, images): keep the old ratio
	}
	s.mu.Lock()
	s.charsPerToken = ratio
	s.mu.Unlock()
}
