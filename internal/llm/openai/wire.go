package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"turnstone/internal/llm"
)

// Wire types of chat-completions answers, streamed and whole. Fields that
// servers fill inconsistently use the lenient text type below, so one odd
// server does not turn a whole chunk into a decoding error.

type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	// Object is "error" in vLLM's older error chunks, which carry the
	// message at the top level.
	Object string `json:"object"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Delta        wireDelta   `json:"delta"`   // streamed
	Message      wireDelta   `json:"message"` // whole
	FinishReason lenientText `json:"finish_reason"`
}

type wireDelta struct {
	Content          lenientText         `json:"content"`
	ReasoningContent lenientText         `json:"reasoning_content"`
	Reasoning        lenientText         `json:"reasoning"`
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
	Annotations      []wireAnnotation    `json:"annotations"`
}

// reasoning returns the reasoning text of a delta. vLLM has sent the same
// text under both names during its rename, so only one field is used.
func (d wireDelta) reasoning() string {
	if d.ReasoningContent != "" {
		return string(d.ReasoningContent)
	}
	return string(d.Reasoning)
}

type wireToolCallDelta struct {
	// Index is nil when the server omits it (Ollama, Gemini's compat layer,
	// some vLLM builds); see callAssembler.
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string      `json:"name"`
		Arguments lenientText `json:"arguments"`
	} `json:"function"`
}

type wireAnnotation struct {
	Type        string `json:"type"`
	URLCitation struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	} `json:"url_citation"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (u *wireUsage) usage() llm.Usage {
	out := llm.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

// lenientText decodes a JSON string; null is empty; an array of content
// parts yields the concatenated text parts; any other value (an arguments
// object from a server that does not stringify it) yields its compact JSON.
type lenientText string

func (t *lenientText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*t = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = lenientText(s)
	case b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				sb.WriteString(p.Text)
			}
		}
		*t = lenientText(sb.String())
	default:
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
		*t = lenientText(buf.String())
	}
	return nil
}

// callAssembler merges streamed tool-call deltas into calls (behavior.md
// §1.4): deltas with the same index merge, a non-empty id or name replaces
// the previous one, and arguments are concatenated.
//
// Servers that omit the index would have every parallel call merged into
// one if a missing index were read as 0. Without an index, a delta opens a
// new call when it carries an id different from the current call's, or (for
// servers without ids either) a name while the current call already holds
// complete JSON arguments; otherwise it continues the current call.
type callAssembler struct {
	calls   []*callAcc
	byIndex map[int]*callAcc
	current *callAcc
}

type callAcc struct {
	index    int
	id, name string
	args     strings.Builder
}

func (a *callAssembler) add(d wireToolCallDelta) {
	var c *callAcc
	if d.Index != nil {
		c = a.byIndex[*d.Index]
		if c == nil {
			c = a.open(*d.Index)
		}
	} else {
		c = a.current
		startsNew := c == nil ||
			(d.ID != "" && c.id != "" && d.ID != c.id) ||
			(d.ID == "" && d.Function.Name != "" && c.name != "" && json.Valid([]byte(c.args.String())))
		if startsNew {
			next := 0
			for _, o := range a.calls {
				next = max(next, o.index+1)
			}
			c = a.open(next)
		}
	}
	if d.ID != "" {
		c.id = d.ID
	}
	if d.Function.Name != "" {
		c.name = d.Function.Name
	}
	c.args.WriteString(string(d.Function.Arguments))
	a.current = c
}

func (a *callAssembler) open(index int) *callAcc {
	if a.byIndex == nil {
		a.byIndex = map[int]*callAcc{}
	}
	c := &callAcc{index: index}
	a.byIndex[index] = c
	a.calls = append(a.calls, c)
	return c
}

// result returns the calls sorted by index.
func (a *callAssembler) result() []llm.ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	sorted := slices.Clone(a.calls)
	slices.SortStableFunc(sorted, func(x, y *callAcc) int { return cmp.Compare(x.index, y.index) })
	out := make([]llm.ToolCall, len(sorted))
	for i, c := range sorted {
		out[i] = llm.ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()}
	}
	return out
}

// finishReason normalizes a wire finish_reason. Servers differ in what they
// report when tool calls are present ("stop", "tool_calls", "function_call",
// nothing), so the presence of calls decides between stop and tool_calls.
func finishReason(wire string, hasCalls bool) llm.FinishReason {
	switch wire {
	case "length", "max_tokens":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	}
	if hasCalls {
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}
