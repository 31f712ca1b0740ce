package main

import (
	"strings"
	"testing"

	"turnstone/internal/toolsearch"
)

// TestRetrieval prints the benchmark report and guards the quality goal:
// hit@5 of the default index must stay at or above 90%.
func TestRetrieval(t *testing.T) {
	var b strings.Builder
	if err := report(&b, testing.Verbose()); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	tools, queries, err := loadData()
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) < 500 || len(queries) < 100 {
		t.Fatalf("benchmark too small: %d tools, %d queries", len(tools), len(queries))
	}
	s := evaluate(toolsearch.NewIndex(docs(tools), toolsearch.DefaultIndexOptions()), queries)
	if hit5 := float64(s.hit5) / float64(len(queries)); hit5 < 0.90 {
		t.Errorf("hit@5 = %.1f%%, goal 90%%", 100*hit5)
	}
}

func benchData(b *testing.B, n int) ([]toolsearch.Doc, []query) {
	tools, queries, err := loadData()
	if err != nil {
		b.Fatal(err)
	}
	return scaled(tools, n), queries
}

// BenchmarkBuild10k: goal under 50 ms per build.
func BenchmarkBuild10k(b *testing.B) {
	ds, _ := benchData(b, 10000)
	b.ReportAllocs()
	for b.Loop() {
		toolsearch.NewIndex(ds, toolsearch.DefaultIndexOptions())
	}
}

// BenchmarkQuery10k: goal under 100 µs per query (ns/op is the mean over
// the benchmark's queries, cycled).
func BenchmarkQuery10k(b *testing.B) {
	ds, queries := benchData(b, 10000)
	ix := toolsearch.NewIndex(ds, toolsearch.DefaultIndexOptions())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Search(queries[i%len(queries)].Query, 5, nil)
		i++
	}
}
