package llmtest

import (
	"context"
	"net/http"
	"time"

	"turnstone/internal/llm"
)

// encodeOpenAI answers in the chat-completions format: SSE chunks when the
// request has "stream": true, one JSON completion otherwise.
func encodeOpenAI(ctx context.Context, w http.ResponseWriter, ex Exchange) {
	r := ex.Reply
	switch {
	case r.IsError():
		openAIError(w, r.Status, r.ErrorMessage, r.RetryAfter)
	case ex.Request.Stream():
		streamOpenAI(ctx, w, ex)
	case r.Hang:
		<-ctx.Done()
	case r.ErrorMessage != "":
		openAIError(w, http.StatusInternalServerError, r.ErrorMessage, r.RetryAfter)
	default:
		WriteJSON(w, http.StatusOK, openAICompletion(ex))
	}
}

func openAIError(w http.ResponseWriter, status int, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	WriteJSON(w, status, map[string]any{"error": map[string]any{
		"message": msg, "type": "llmtest_error", "code": status,
	}})
}

func streamOpenAI(ctx context.Context, w http.ResponseWriter, ex Exchange) {
	r := ex.Reply
	sse := NewSSE(w)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-" + ex.ID, "object": "chat.completion.chunk", "created": created, "model": ex.Model(),
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	send := func(v any) bool { return sse.Data(v) == nil && ctx.Err() == nil }

	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	if !r.ThinkTags {
		for _, piece := range r.Chunks(r.Reasoning) {
			if !send(chunk(map[string]any{"reasoning_content": piece}, nil)) {
				return
			}
		}
	}
	for _, piece := range r.Chunks(r.Text()) {
		if !send(chunk(map[string]any{"content": piece}, nil)) {
			return
		}
	}
	if r.Hang {
		<-ctx.Done()
		return
	}
	if r.ErrorMessage != "" {
		_ = sse.Data(map[string]any{"error": map[string]any{"message": r.ErrorMessage, "type": "llmtest_error"}})
		return
	}
	for i, c := range ex.Calls() {
		first := map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}
		if !r.OmitToolIndex {
			first["index"] = i
		}
		if !send(chunk(map[string]any{"tool_calls": []any{first}}, nil)) {
			return
		}
		for _, piece := range r.Chunks(c.Arguments) {
			d := map[string]any{"function": map[string]any{"arguments": piece}}
			if !r.OmitToolIndex {
				d["index"] = i
			}
			if !send(chunk(map[string]any{"tool_calls": []any{d}}, nil)) {
				return
			}
		}
	}
	if !send(chunk(map[string]any{}, openAIFinish(r.FinishReason()))) {
		return
	}
	if opts, _ := ex.Request.JSON["stream_options"].(map[string]any); opts["include_usage"] == true {
		u := ex.Usage()
		if !send(map[string]any{
			"id": "chatcmpl-" + ex.ID, "object": "chat.completion.chunk", "created": created, "model": ex.Model(),
			"choices": []any{}, "usage": openAIUsage(u),
		}) {
			return
		}
	}
	_ = sse.Raw("data: [DONE]\n\n")
}

func openAICompletion(ex Exchange) map[string]any {
	r := ex.Reply
	msg := map[string]any{"role": "assistant", "content": nil}
	if text := r.Text(); text != "" {
		msg["content"] = text
	}
	if r.Reasoning != "" && !r.ThinkTags {
		msg["reasoning_content"] = r.Reasoning
	}
	if calls := ex.Calls(); len(calls) > 0 {
		wire := make([]any, len(calls))
		for i, c := range calls {
			wire[i] = map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		}
		msg["tool_calls"] = wire
	}
	return map[string]any{
		"id": "chatcmpl-" + ex.ID, "object": "chat.completion", "created": time.Now().Unix(), "model": ex.Model(),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": openAIFinish(r.FinishReason())}},
		"usage":   openAIUsage(ex.Usage()),
	}
}

func openAIFinish(f llm.FinishReason) string {
	return string(f) // the neutral names are OpenAI's own
}

func openAIUsage(u llm.Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
}
