package engine

import (
	"context"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
	"turnstone/internal/tool/fileops"
)

// BenchmarkParallelBashSleeps runs one batch of four real `sleep 1` bash
// calls; with the pool of 4 the batch should take about 1 s, not 4 s.
func BenchmarkParallelBashSleeps(b *testing.B) {
	bash := fileops.NewBash(tool.MustLoadSchemas().MustSpec("bash"), fileops.BashOptions{})
	reg, _ := tool.NewRegistry(bash)
	p := &scripted{}
	s, _ := New(Options{Provider: p, Catalog: reg, UI: NullUI{}, SkipPermissions: true})
	var cs []llm.ToolCall
	for i := range 4 {
		cs = append(cs, llm.ToolCall{ID: string(rune('a' + i)), Name: "bash", Arguments: `{"command":"sleep 1"}`})
	}
	for b.Loop() {
		p.replies = append(p.replies, calls(cs...), answer("ok"))
		if _, err := s.Send(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
		s.Clear()
	}
}
