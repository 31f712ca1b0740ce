package llmtest

import (
	"context"
	"encoding/json"
	"net/http"

	"turnstone/internal/llm"
)

// ThinkingSignature is the signature the Anthropic encoder gives the
// thinking block of exchange id ("fake-3"), so tests can check that it
// comes back verbatim on the next request.
func ThinkingSignature(exchangeID string) string { return "sig-" + exchangeID }

// encodeAnthropic answers in the Messages API format (POST .../messages):
// the documented SSE event sequence when the request has "stream": true,
// one message object otherwise. Reasoning becomes a thinking block with a
// signature (ThinkingSignature), Content a text block, each tool call a
// tool_use block whose arguments stream as input_json_delta pieces exactly
// as scripted (malformed text included).
func encodeAnthropic(ctx context.Context, w http.ResponseWriter, ex Exchange) {
	r := ex.Reply
	switch {
	case r.IsError():
		anthropicError(w, r.Status, r.ErrorMessage, r.RetryAfter)
	case ex.Request.Stream():
		streamAnthropic(ctx, w, ex)
	case r.Hang:
		<-ctx.Done()
	case r.ErrorMessage != "":
		anthropicError(w, http.StatusInternalServerError, r.ErrorMessage, r.RetryAfter)
	default:
		WriteJSON(w, http.StatusOK, anthropicMessage(ex))
	}
}

// anthropicErrorType is the error.type the API uses for an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func anthropicError(w http.ResponseWriter, status int, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if msg == "" {
		msg = http.StatusText(status)
		if status == 529 {
			msg = "Overloaded"
		}
	}
	WriteJSON(w, status, map[string]any{"type": "error",
		"error": map[string]any{"type": anthropicErrorType(status), "message": msg}})
}

func anthropicStopReason(f llm.FinishReason) string {
	switch f {
	case llm.FinishToolCalls:
		return "tool_use"
	case llm.FinishLength:
		return "max_tokens"
	case llm.FinishContentFilter:
		return "refusal"
	default:
		return "end_turn"
	}
}

func streamAnthropic(ctx context.Context, w http.ResponseWriter, ex Exchange) {
	r := ex.Reply
	u := ex.Usage()
	sse := NewSSE(w)
	send := func(v map[string]any) bool { return sse.Event(v["type"].(string), v) == nil && ctx.Err() == nil }
	index := 0
	// block streams one content block: start, the deltas, stop.
	block := func(start map[string]any, deltas []map[string]any) bool {
		if !send(map[string]any{"type": "content_block_start", "index": index, "content_block": start}) {
			return false
		}
		for _, d := range deltas {
			if !send(map[string]any{"type": "content_block_delta", "index": index, "delta": d}) {
				return false
			}
		}
		ok := send(map[string]any{"type": "content_block_stop", "index": index})
		index++
		return ok
	}

	if !send(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_" + ex.ID, "type": "message", "role": "assistant", "model": ex.Model(),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.PromptTokens, "output_tokens": 1},
	}}) {
		return
	}
	if r.Reasoning != "" && !r.ThinkTags {
		var ds []map[string]any
		for _, piece := range r.Chunks(r.Reasoning) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": piece})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": ThinkingSignature(ex.ID)})
		if !block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds) {
			return
		}
	}
	if text := r.Text(); text != "" {
		var ds []map[string]any
		for _, piece := range r.Chunks(text) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": piece})
		}
		if !block(map[string]any{"type": "text", "text": ""}, ds) {
			return
		}
	}
	if r.Hang {
		<-ctx.Done()
		return
	}
	if r.ErrorMessage != "" {
		_ = sse.Event("error", map[string]any{"type": "error",
			"error": map[string]any{"type": "api_error", "message": r.ErrorMessage}})
		return
	}
	for _, c := range ex.Calls() {
		var ds []map[string]any
		for _, piece := range r.Chunks(c.Arguments) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": piece})
		}
		if !block(map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}, ds) {
			return
		}
	}
	if !send(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStopReason(r.FinishReason()), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.CompletionTokens}}) {
		return
	}
	_ = sse.Event("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicMessage is the non-streaming answer. Tool arguments that are not
// a JSON object are sent as {} (the API's input is always an object).
func anthropicMessage(ex Exchange) map[string]any {
	r := ex.Reply
	content := []any{}
	if r.Reasoning != "" && !r.ThinkTags {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.Reasoning, "signature": ThinkingSignature(ex.ID)})
	}
	if text := r.Text(); text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, c := range ex.Calls() {
		var input map[string]any
		if json.Unmarshal([]byte(c.Arguments), &input) != nil || input == nil {
			input = map[string]any{}
		}
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
	}
	u := ex.Usage()
	return map[string]any{
		"id": "msg_" + ex.ID, "type": "message", "role": "assistant", "model": ex.Model(), "content": content,
		"stop_reason": anthropicStopReason(r.FinishReason()), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens},
	}
}
