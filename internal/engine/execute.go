package engine

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// runTools runs the three phases for one batch of calls and appends one
// tool message per call, in call order. It returns approval feedback that
// must follow the tool messages.
func (s *Session) runTools(ctx context.Context, calls []llm.ToolCall) string {
	items := s.prepare(ctx, calls)
	feedback := s.approve(ctx, items)
	s.execute(ctx, items)
	msgs := make([]llm.Message, len(items))
	for i, it := range items {
		msgs[i] = llm.Message{
			Role:       llm.RoleTool,
			ToolCallID: it.call.ID,
			ToolName:   it.call.Name,
			Content:    it.result.Output,
			Parts:      it.result.Parts,
			IsError:    it.result.IsError,
		}
	}
	s.append(msgs...)
	return feedback
}

// execute runs phase 3: a single call inline, several on a pool of
// Workers, each result stored on its item so call order is kept.
func (s *Session) execute(ctx context.Context, items []*item) {
	var runnable []*item
	for _, it := range items {
		switch {
		case it.prepared.Err != "":
			s.finish(it, tool.ErrorResult(it.prepared.Err))
		case it.denial != "":
			s.finish(it, tool.ErrorResult(it.denial))
		case ctx.Err() != nil:
			s.finish(it, tool.ErrorResult("Interrupted by user before the call ran"))
		default:
			runnable = append(runnable, it)
		}
	}
	if len(runnable) == 1 {
		s.finish(runnable[0], s.runOne(ctx, runnable[0]))
		return
	}
	work := make(chan *item)
	var wg sync.WaitGroup
	for range min(Workers, len(runnable)) {
		wg.Go(func() {
			for it := range work {
				s.finish(it, s.runOne(ctx, it))
			}
		})
	}
	for _, it := range runnable {
		work <- it
	}
	close(work)
	wg.Wait()
}

// runOne is the single recover boundary around tool code: a panicking
// tool becomes an error result and the session goes on.
func (s *Session) runOne(ctx context.Context, it *item) (res tool.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = tool.ErrorResult(fmt.Sprintf("Error: tool %s crashed: %v. This is a bug in turnstone; the session continues.", it.call.Name, r))
			if s.debugOn() {
				s.emit(InfoEvent{Message: "[debug] " + string(debug.Stack())})
			}
		}
	}()
	id := it.call.ID
	return it.prepared.Run(ctx, func(chunk string) {
		s.emit(ToolOutputChunkEvent{CallID: id, Chunk: s.opts.Redact(chunk)})
	})
}

func (s *Session) debugOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.debug
}

// finish bounds the result and announces it. Output in the event is exactly
// what the model receives.
func (s *Session) finish(it *item, res tool.Result) {
	limit := s.TruncationLimit()
	res.Output = tool.Truncate(s.opts.Redact(res.Output), limit)
	if len(res.Parts) > 0 {
		parts := make([]llm.Part, len(res.Parts))
		copy(parts, res.Parts)
		for i := range parts {
			if parts[i].Type == llm.PartText {
				parts[i].Text = tool.Truncate(s.opts.Redact(parts[i].Text), limit)
			}
		}
		res.Parts = parts
	}
	if res.Output == "" && len(res.Parts) == 0 {
		res.Output = "(no output)"
	}
	it.result = res
	s.emit(ToolResultEvent{
		CallID:  it.call.ID,
		Name:    it.call.Name,
		Output:  modelText(res),
		IsError: res.IsError,
		Summary: res.Summary,
	})
}

// modelText renders a result as text: Output, or the parts with images
// named by type and size.
func modelText(res tool.Result) string {
	if len(res.Parts) == 0 {
		return res.Output
	}
	var b strings.Builder
	for i, p := range res.Parts {
		if i > 0 {
			b.WriteString("\n")
		}
		if p.Type == llm.PartImage {
			fmt.Fprintf(&b, "[image: %s, %d bytes]", p.MediaType, len(p.Data))
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
