package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"turnstone/internal/llm"
)

// errStop ends event reading at message_stop.
var errStop = errors.New("message_stop")

// readEvents reads server-sent events from r and passes each event's data
// to fn until fn returns errStop (a clean end, reported as nil), another
// error, or r ends. Data lines can be large (web search results carry
// encrypted page content), so lines are read without a length limit.
func readEvents(r io.Reader, fn func(data []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	dispatch := func() error {
		if len(data) == 0 {
			return nil
		}
		err := fn(data)
		data = data[:0]
		return err
	}
	for {
		line, readErr := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if err := dispatch(); err != nil {
				return stopIsClean(err)
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
		if readErr == io.EOF {
			return stopIsClean(dispatch())
		}
		if readErr != nil {
			return readErr
		}
	}
}

func stopIsClean(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// wireEvent is the union of the stream event shapes this adapter reads.
type wireEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage wireUsage `json:"usage"`
	} `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        wireDelta       `json:"delta"`
	Usage        *wireUsage      `json:"usage"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type wireDelta struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	PartialJSON string          `json:"partial_json"`
	Thinking    string          `json:"thinking"`
	Signature   string          `json:"signature"`
	Citation    json.RawMessage `json:"citation"`
	StopReason  string          `json:"stop_reason"`
}

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// merge takes every non-zero count of u: message_delta repeats the counts
// cumulatively, so the latest non-zero value is the total.
func (w *wireUsage) merge(u wireUsage) {
	pick := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	pick(&w.InputTokens, u.InputTokens)
	pick(&w.OutputTokens, u.OutputTokens)
	pick(&w.CacheCreationInputTokens, u.CacheCreationInputTokens)
	pick(&w.CacheReadInputTokens, u.CacheReadInputTokens)
}

// block is one content block being assembled. fields keeps the block's
// JSON members verbatim; the streamed parts are written back at stop.
type block struct {
	typ       string
	fields    map[string]json.RawMessage
	text      strings.Builder
	thinking  strings.Builder
	signature strings.Builder
	input     strings.Builder
	hasInput  bool
	citations []json.RawMessage
	args      string // tool input as the model wrote it, set at stop
	done      bool
}

// assembler turns stream events (or a whole message) into a Response,
// passing display deltas to emit as they arrive.
type assembler struct {
	emit       func(llm.Delta)
	blocks     []*block
	byIndex    map[int]*block
	usage      wireUsage
	stopReason string
	started    bool // message_start seen: this is a Messages stream
	stopped    bool
}

func newAssembler(emit func(llm.Delta)) *assembler {
	if emit == nil {
		emit = func(llm.Delta) {}
	}
	return &assembler{emit: emit, byIndex: map[int]*block{}}
}

// event handles one SSE data payload.
func (a *assembler) event(data []byte) error {
	var ev wireEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("decoding stream event %.200q: %w", data, err)
	}
	switch ev.Type {
	case "message_start":
		a.started = true
		if ev.Message != nil {
			a.usage.merge(ev.Message.Usage)
		}
	case "content_block_start":
		return a.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		a.delta(ev.Index, ev.Delta)
	case "content_block_stop":
		if b := a.byIndex[ev.Index]; b != nil {
			a.finish(b)
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stopReason = ev.Delta.StopReason
		}
		if ev.Usage != nil {
			a.usage.merge(*ev.Usage)
		}
	case "message_stop":
		a.stopped = true
		return errStop
	case "error":
		msg, typ := "stream error", ""
		if ev.Error != nil {
			msg, typ = ev.Error.Message, ev.Error.Type
		}
		return &llm.APIError{Provider: llm.ProviderAnthropic, Status: streamErrorStatus(typ), Message: msg}
	}
	return nil // ping and event types added later
}

// start opens block index from its content_block_start payload.
func (a *assembler) start(index int, raw json.RawMessage) error {
	b := &block{fields: map[string]json.RawMessage{}}
	if err := json.Unmarshal(raw, &b.fields); err != nil {
		return fmt.Errorf("decoding content block %.200q: %w", raw, err)
	}
	b.typ = jsonString(b.fields["type"])
	b.text.WriteString(jsonString(b.fields["text"]))
	b.thinking.WriteString(jsonString(b.fields["thinking"]))
	b.signature.WriteString(jsonString(b.fields["signature"]))
	if old := a.byIndex[index]; old != nil && !old.done {
		a.finish(old)
	}
	a.byIndex[index] = b
	a.blocks = append(a.blocks, b)
	if t := b.text.String(); t != "" && b.typ == "text" {
		a.emit(llm.Delta{Content: t})
	}
	return nil
}

// delta applies one content_block_delta.
func (a *assembler) delta(index int, d wireDelta) {
	b := a.byIndex[index]
	if b == nil || b.done {
		return
	}
	switch d.Type {
	case "text_delta":
		b.text.WriteString(d.Text)
		if d.Text != "" {
			a.emit(llm.Delta{Content: d.Text})
		}
	case "thinking_delta":
		b.thinking.WriteString(d.Thinking)
		if d.Thinking != "" {
			a.emit(llm.Delta{Reasoning: d.Thinking})
		}
	case "signature_delta":
		b.signature.WriteString(d.Signature)
	case "input_json_delta":
		b.input.WriteString(d.PartialJSON)
		b.hasInput = true
	case "citations_delta":
		if len(d.Citation) > 0 {
			b.citations = append(b.citations, d.Citation)
		}
	}
}

// finish writes the streamed parts back into the block's fields and
// reports server-side web search progress.
func (a *assembler) finish(b *block) {
	b.done = true
	switch b.typ {
	case "text":
		b.fields["text"] = jsonValue(b.text.String())
		var cites []json.RawMessage
		_ = json.Unmarshal(b.fields["citations"], &cites)
		cites = append(cites, b.citations...)
		if len(cites) > 0 {
			b.fields["citations"] = jsonValue(cites)
		} else {
			delete(b.fields, "citations")
		}
	case "thinking":
		b.fields["thinking"] = jsonValue(b.thinking.String())
		b.fields["signature"] = jsonValue(b.signature.String())
	}
	if _, ok := b.fields["input"]; ok || b.hasInput {
		b.args = string(b.fields["input"])
		if b.hasInput {
			b.args = b.input.String()
		}
		if strings.TrimSpace(b.args) == "" {
			b.args = "{}"
		}
		// The stored block must hold an object; a malformed one is kept
		// as {} while the raw text goes to the engine's argument rescue.
		b.fields["input"] = objectInput(b.args)
	}
	switch {
	case b.typ == "server_tool_use" && jsonString(b.fields["name"]) == "web_search":
		var in struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal(b.fields["input"], &in)
		if q := strings.TrimSpace(in.Query); q != "" {
			a.emit(llm.Delta{Info: "[Searching: " + q + "]"})
		} else {
			a.emit(llm.Delta{Info: "[Searching...]"})
		}
	case b.typ == "web_search_tool_result":
		a.emit(llm.Delta{Info: webSearchInfo(b.fields["content"])})
	}
}

// webSearchInfo describes a web_search_tool_result's content: a list of
// results or an error object.
func webSearchInfo(content json.RawMessage) string {
	var results []json.RawMessage
	if json.Unmarshal(content, &results) == nil {
		return fmt.Sprintf("[Found %d result(s)]", len(results))
	}
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	_ = json.Unmarshal(content, &e)
	if e.ErrorCode == "" {
		e.ErrorCode = "unknown"
	}
	return "[Web search error: " + e.ErrorCode + "]"
}

// response assembles the final Response. A stream that ended before
// message_stop is an error (retryable when nothing was shown yet).
func (a *assembler) response() (llm.Response, error) {
	if !a.started {
		// Nothing of a Messages stream arrived (a web page, another API):
		// not a network fault, so not retried.
		return llm.Response{}, errors.New("the answer is not a Messages API stream (no message_start event): check --base-url and --provider")
	}
	if !a.stopped {
		return llm.Response{}, &llm.APIError{Provider: llm.ProviderAnthropic, Message: "stream ended before message_stop"}
	}
	msg := llm.Message{Role: llm.RoleAssistant, Provider: llm.ProviderAnthropic}
	var text strings.Builder
	raws := make([]json.RawMessage, 0, len(a.blocks))
	for _, b := range a.blocks {
		if !b.done {
			a.finish(b)
		}
		switch b.typ {
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{
				ID:        jsonString(b.fields["id"]),
				Name:      jsonString(b.fields["name"]),
				Arguments: b.args,
			})
		}
		raws = append(raws, jsonValue(b.fields))
	}
	msg.Content = text.String()
	if len(raws) > 0 {
		msg.ProviderBlocks = jsonValue(raws)
	}
	u := a.usage
	prompt := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	return llm.Response{
		Message:      msg,
		FinishReason: finishReason(a.stopReason, len(msg.ToolCalls) > 0),
		Usage:        llm.Usage{PromptTokens: prompt, CompletionTokens: u.OutputTokens, TotalTokens: prompt + u.OutputTokens},
	}, nil
}

// finishReason maps stop_reason (behavior.md §1.5). pause_turn (a long
// server-tool turn paused) ends the turn like end_turn; the paused content
// is kept and replayed, so the next request resumes it.
func finishReason(stop string, hasCalls bool) llm.FinishReason {
	switch stop {
	case "tool_use":
		return llm.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "refusal":
		return llm.FinishContentFilter
	case "end_turn", "stop_sequence", "pause_turn":
		return llm.FinishStop
	}
	if hasCalls {
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}

// decodeMessage assembles a non-streaming Messages response.
func decodeMessage(data []byte) (llm.Response, error) {
	var m struct {
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
		Usage      wireUsage         `json:"usage"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return llm.Response{}, fmt.Errorf("the answer is not a Messages API response (%v; it starts %.200q): check --base-url and --provider", err, data)
	}
	a := newAssembler(nil)
	a.started = true // a whole message, not a stream
	for i, c := range m.Content {
		if err := a.start(i, c); err != nil {
			return llm.Response{}, err
		}
	}
	a.usage, a.stopReason, a.stopped = m.Usage, m.StopReason, true
	return a.response()
}

// jsonString reads a JSON string value, "" for anything else.
func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// jsonValue marshals strings, raw messages and maps of them; none can fail.
func jsonValue(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}
