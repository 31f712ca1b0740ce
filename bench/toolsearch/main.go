// Command toolsearch is the tool-retrieval benchmark of dynamic tool search:
// it measures hit@1 and hit@5 of the BM25 index over realistic MCP tool
// definitions, the size of the tool definitions sent per request with and
// without deferral, and query and build time at 10,000 tools.
//
//	go run ./bench/toolsearch
//	go test ./bench/toolsearch -run TestRetrieval -v
//	go test ./bench/toolsearch -run '^$' -bench .
package main

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
	"turnstone/internal/toolsearch"
)

//go:embed testdata/tools.json testdata/queries.json
var data embed.FS

// mcpTool is one tool definition as an MCP server lists it.
type mcpTool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// FullName is the name turnstone gives the tool: mcp__{server}__{tool}.
func (t mcpTool) FullName() string { return "mcp__" + t.Server + "__" + t.Name }

// query is one benchmark question with the tools that answer it.
type query struct {
	Query  string   `json:"query"`
	Expect []string `json:"expect"` // server/name
}

func (q query) wants(name string) bool {
	for _, e := range q.Expect {
		server, tool, _ := strings.Cut(e, "/")
		if name == "mcp__"+server+"__"+tool {
			return true
		}
	}
	return false
}

func loadData() ([]mcpTool, []query, error) {
	var tools []mcpTool
	var queries []query
	b, err := data.ReadFile("testdata/tools.json")
	if err != nil {
		return nil, nil, fmt.Errorf("read tools: %w", err)
	}
	if err := json.Unmarshal(b, &tools); err != nil {
		return nil, nil, fmt.Errorf("parse tools.json: %w", err)
	}
	b, err = data.ReadFile("testdata/queries.json")
	if err != nil {
		return nil, nil, fmt.Errorf("read queries: %w", err)
	}
	if err := json.Unmarshal(b, &queries); err != nil {
		return nil, nil, fmt.Errorf("parse queries.json: %w", err)
	}
	return tools, queries, nil
}

func docs(tools []mcpTool) []toolsearch.Doc {
	out := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		out[i] = toolsearch.Doc{Name: t.FullName(), Description: t.Description}
	}
	return out
}

// config is one row of the ablation table.
type config struct {
	label string
	opts  toolsearch.IndexOptions
}

func configs() []config {
	def := toolsearch.DefaultIndexOptions()
	withStop, withBoost := def, def
	withStop.StopWords = true
	withBoost.NameBoost = 2
	return []config{
		{"original (legacy tokenizer, plain BM25)", toolsearch.IndexOptions{Legacy: true}},
		{"+ tokenizer (punctuation, camelCase)", toolsearch.IndexOptions{NameBoost: 1}},
		{"+ light stemming", toolsearch.IndexOptions{NameBoost: 1, Stem: true}},
		{"+ exact/prefix name match (default)", def},
		{"  default + stop words (not adopted)", withStop},
		{"  default + name terms twice (not adopted)", withBoost},
	}
}

// score is the retrieval quality of one configuration.
type score struct {
	hit1, hit5 int
	misses     []string
}

func evaluate(ix *toolsearch.Index, queries []query) score {
	var s score
	for _, q := range queries {
		hits := ix.Search(q.Query, 5, nil)
		rank := -1
		for i, h := range hits {
			if q.wants(h.Name) {
				rank = i
				break
			}
		}
		switch {
		case rank == 0:
			s.hit1++
			s.hit5++
		case rank > 0:
			s.hit5++
		default:
			top := "nothing"
			if len(hits) > 0 {
				top = hits[0].Name
			}
			s.misses = append(s.misses, fmt.Sprintf("%q → %s (wanted %s)", q.Query, top, strings.Join(q.Expect, " or ")))
		}
	}
	return s
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(of) }

// nameQueries asks for every tool by its name, as users and models do once
// they know it: the full prefixed name, and the bare tool name (which may
// be shared by several servers, so only hit@5 is meaningful there).
func nameQueries(w io.Writer, tools []mcpTool) {
	fmt.Fprintf(w, "\nQueries that name a tool (%d each):\n", len(tools))
	fmt.Fprintf(w, "  %-44s %7s %7s\n", "query form / configuration", "hit@1", "hit@5")
	def := toolsearch.DefaultIndexOptions()
	noMatch := def
	noMatch.NameMatch = false
	for _, c := range []config{{"without name match", noMatch}, {"with name match (default)", def}} {
		ix := toolsearch.NewIndex(docs(tools), c.opts)
		for _, form := range []string{"full name", "bare name"} {
			var hit1, hit5 int
			for _, t := range tools {
				q := t.FullName()
				if form == "bare name" {
					q = t.Name
				}
				for i, h := range ix.Search(q, 5, nil) {
					if h.Name == t.FullName() {
						if i == 0 {
							hit1++
						}
						hit5++
						break
					}
				}
			}
			fmt.Fprintf(w, "  %-44s %6.1f%% %6.1f%%\n", form+", "+c.label, pct(hit1, len(tools)), pct(hit5, len(tools)))
		}
	}
}

// staticCatalog offers fixed definitions; the benchmark only needs them.
type staticCatalog []llm.ToolDef

func (c staticCatalog) Definitions() []llm.ToolDef      { return slices.Clone(c) }
func (c staticCatalog) Lookup(string) (tool.Tool, bool) { return nil, false }

// wireBytes is the size of the definitions as an OpenAI-compatible request
// carries them ({"type":"function","function":{...}}).
func wireBytes(defs []llm.ToolDef) int {
	type fn struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type wire struct {
		Type         string `json:"type"`
		Function     fn     `json:"function"`
		DeferLoading bool   `json:"defer_loading,omitempty"`
	}
	out := make([]wire, len(defs))
	for i, d := range defs {
		out[i] = wire{Type: "function", Function: fn{d.Name, d.Description, d.Parameters}, DeferLoading: d.DeferLoading}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // plain structs of strings and valid raw JSON
	}
	return len(b)
}

// sizes reports request tool-definition sizes with and without deferral.
func sizes(w io.Writer, tools []mcpTool) {
	schemas := tool.MustLoadSchemas()
	var defs staticCatalog
	for _, sp := range schemas.All() {
		defs = append(defs, sp.Def())
	}
	for _, t := range tools {
		defs = append(defs, llm.ToolDef{Name: t.FullName(), Description: t.Description, Parameters: t.InputSchema})
	}
	all := wireBytes(defs)
	builtin := wireBytes(defs[:len(schemas.All())])
	cat := toolsearch.New(defs, schemas.BuiltinNames(), toolsearch.Options{})
	initial := wireBytes(cat.Definitions())
	cat.Search("create a pull request for my branch")
	after := wireBytes(cat.Definitions())
	fmt.Fprintf(w, "\nTool definitions per request (%d built-in + %d MCP tools; tokens ≈ JSON bytes / 4):\n", len(schemas.All()), len(tools))
	row := func(label string, b int) { fmt.Fprintf(w, "  %-52s %7d bytes ≈ %6d tokens\n", label, b, b/4) }
	row("without deferral (every tool)", all)
	row("built-in tools only", builtin)
	row("client-side deferral: built-ins + tool_search", initial)
	row("client-side deferral after one search (+5 tools)", after)
	fmt.Fprintf(w, "  saving on the first request: %.1f%%\n", 100*(1-float64(initial)/float64(all)))
}

// scaled repeats the tool set under numbered server names until it has n
// tools, so timings run on realistic text.
func scaled(tools []mcpTool, n int) []toolsearch.Doc {
	out := make([]toolsearch.Doc, 0, n)
	for rep := 0; len(out) < n; rep++ {
		for _, t := range tools {
			if len(out) == n {
				break
			}
			out = append(out, toolsearch.Doc{Name: fmt.Sprintf("mcp__%s%d__%s", t.Server, rep, t.Name), Description: t.Description})
		}
	}
	return out
}

// timings measures median query latency and build time at n tools.
func timings(w io.Writer, tools []mcpTool, queries []query, n int) {
	ds := scaled(tools, n)
	var builds []time.Duration
	var ix *toolsearch.Index
	for range 5 {
		start := time.Now()
		ix = toolsearch.NewIndex(ds, toolsearch.DefaultIndexOptions())
		builds = append(builds, time.Since(start))
	}
	var lat []time.Duration
	for range 20 {
		for _, q := range queries {
			start := time.Now()
			ix.Search(q.Query, 5, nil)
			lat = append(lat, time.Since(start))
		}
	}
	fmt.Fprintf(w, "\nSpeed at %d tools (wall clock on this machine; see also go test -bench):\n", n)
	fmt.Fprintf(w, "  index build: median %v\n", median(builds))
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Fprintf(w, "  query: median %v, p90 %v, p99 %v over %d searches\n",
		median(lat), lat[len(lat)*9/10], lat[len(lat)*99/100], len(lat))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(w io.Writer, verbose bool) error {
	tools, queries, err := loadData()
	if err != nil {
		return err
	}
	servers := map[string]bool{}
	for _, t := range tools {
		servers[t.Server] = true
	}
	fmt.Fprintf(w, "Tool retrieval: %d MCP tools from %d servers, %d queries, top 5 per search\n\n", len(tools), len(servers), len(queries))
	fmt.Fprintf(w, "  %-44s %7s %7s\n", "index configuration", "hit@1", "hit@5")
	for _, c := range configs() {
		s := evaluate(toolsearch.NewIndex(docs(tools), c.opts), queries)
		fmt.Fprintf(w, "  %-44s %6.1f%% %6.1f%%\n", c.label, pct(s.hit1, len(queries)), pct(s.hit5, len(queries)))
	}
	if verbose {
		s := evaluate(toolsearch.NewIndex(docs(tools), toolsearch.DefaultIndexOptions()), queries)
		fmt.Fprintf(w, "\nMisses at 5 with the default configuration:\n")
		for _, m := range s.misses {
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
	nameQueries(w, tools)
	sizes(w, tools)
	timings(w, tools, queries, 10000)
	return nil
}

func main() {
	verbose := len(os.Args) > 1 && os.Args[1] == "-v"
	if err := report(os.Stdout, verbose); err != nil {
		fmt.Fprintln(os.Stderr, "toolsearch bench:", err)
		os.Exit(1)
	}
}
