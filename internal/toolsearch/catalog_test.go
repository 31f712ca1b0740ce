package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// testTool is a callable tool that echoes its name.
type testTool struct{ spec tool.Spec }

func (t testTool) Spec() tool.Spec { return t.spec }
func (t testTool) Prepare(_ context.Context, _ tool.Call) *tool.Prepared {
	return &tool.Prepared{Header: "⚙ " + t.spec.Name, Run: func(context.Context, tool.Emit) tool.Result {
		return tool.Result{Output: "ran " + t.spec.Name}
	}}
}

func mkTool(name, desc string) tool.Tool {
	return testTool{tool.Spec{Name: name, Description: desc, Parameters: json.RawMessage(`{"type":"object"}`)}}
}

// fakeInner is a versioned catalog, like the MCP-backed one.
type fakeInner struct {
	mu    sync.Mutex
	tools []tool.Tool
	ver   uint64
}

func (f *fakeInner) Definitions() []llm.ToolDef {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]llm.ToolDef, len(f.tools))
	for i, t := range f.tools {
		out[i] = t.Spec().Def()
	}
	return out
}

func (f *fakeInner) Lookup(name string) (tool.Tool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.tools {
		if t.Spec().Name == name {
			return t, true
		}
	}
	return nil, false
}

func (f *fakeInner) Version() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ver
}

func (f *fakeInner) set(tools []tool.Tool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools = tools
	f.ver++
}

var builtinNames = []string{"bash", "edit_file", "read_file"}

func builtinSet() map[string]bool {
	m := map[string]bool{}
	for _, n := range builtinNames {
		m[n] = true
	}
	return m
}

// fixture is 3 built-ins plus MCP tools from three servers and one
// unprefixed extra tool.
func fixture() []tool.Tool {
	ts := []tool.Tool{}
	for _, n := range builtinNames {
		ts = append(ts, mkTool(n, "built-in "+n))
	}
	return append(ts,
		mkTool("mcp__github__create_pull_request", "Create a new pull request in a GitHub repository."),
		mkTool("mcp__github__list_issues", "List issues in a GitHub repository."),
		mkTool("mcp__github__create_issue", "Create a new issue in a GitHub repository."),
		mkTool("mcp__slack__slack_post_message", "Post a new message to a Slack channel."),
		mkTool("mcp__postgres__query", "Run a read-only SQL query against the PostgreSQL database."),
		mkTool("extra_tool", "An unprefixed plugin tool that formats JSON."),
	)
}

func defNames(defs []llm.ToolDef) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

func newActive(t *testing.T, native NativeKind) (*Catalog, *fakeInner) {
	t.Helper()
	inner := &fakeInner{tools: fixture()}
	c := New(inner, builtinSet(), Options{Mode: ModeOn, MaxResults: 2, Native: func() NativeKind { return native }})
	return c, inner
}

// runSearch calls tool_search the way the engine does.
func runSearch(t *testing.T, c *Catalog, q string) tool.Result {
	t.Helper()
	st, ok := c.Lookup(SearchToolName)
	if !ok {
		t.Fatal("tool_search does not resolve")
	}
	p := st.Prepare(context.Background(), tool.Call{Name: SearchToolName, Args: tool.Args{"query": q}})
	if p.Err != "" {
		return tool.ErrorResult(p.Err)
	}
	if p.NeedsApproval {
		t.Error("tool_search needs approval")
	}
	return p.Run(context.Background(), nil)
}

func TestActivationThreshold(t *testing.T) {
	tools := func(n int) []tool.Tool {
		ts := []tool.Tool{}
		for _, b := range builtinNames {
			ts = append(ts, mkTool(b, b))
		}
		for i := len(ts); i < n; i++ {
			ts = append(ts, mkTool(fmt.Sprintf("mcp__srv__t%d", i), "tool"))
		}
		return ts
	}
	cases := []struct {
		mode      string
		threshold int
		count     int
		active    bool
	}{
		{ModeAuto, 20, 19, false},
		{ModeAuto, 20, 20, true}, // "reaches the threshold": >=
		{ModeAuto, 20, 21, true},
		{"", 0, 19, false}, // defaults: auto, 20
		{"", 0, 20, true},
		{ModeAuto, 5, 5, true},
		{ModeOn, 100, 4, true},
		{ModeOff, 1, 500, false},
		{"bogus", 20, 25, true}, // an unknown mode falls back to auto
	}
	for _, tc := range cases {
		inner := &fakeInner{tools: tools(tc.count)}
		c := New(inner, builtinSet(), Options{Mode: tc.mode, Threshold: tc.threshold})
		st := c.Status()
		if st.Active != tc.active {
			t.Errorf("mode %q threshold %d count %d: active %v, want %v (%s)", tc.mode, tc.threshold, tc.count, st.Active, tc.active, st.Reason)
		}
		defs := defNames(c.Definitions())
		offered := slices.Contains(defs, SearchToolName)
		if offered != tc.active {
			t.Errorf("count %d: tool_search offered %v, want %v", tc.count, offered, tc.active)
		}
		if !tc.active && len(defs) != tc.count {
			t.Errorf("inactive catalog offered %d of %d tools", len(defs), tc.count)
		}
	}
}

func TestInactivePassThrough(t *testing.T) {
	inner := &fakeInner{tools: fixture()}
	c := New(inner, builtinSet(), Options{Mode: ModeOff})
	if got, want := defNames(c.Definitions()), defNames(inner.Definitions()); !slices.Equal(got, want) {
		t.Errorf("definitions = %v, want inner %v", got, want)
	}
	if c.SystemHint() != "" {
		t.Error("inactive catalog has a hint")
	}
	if _, ok := c.Lookup("mcp__postgres__query"); !ok {
		t.Error("inner tool does not resolve")
	}
	res := runSearch(t, c, "github")
	if !res.IsError || !strings.Contains(res.Output, "Tool search is not active") {
		t.Errorf("search while inactive = %+v", res)
	}
	if st := c.Status(); len(st.Expanded) != 0 || len(st.Deferred) != 0 || len(st.Visible) != 9 {
		t.Errorf("status = %+v", st)
	}
}

func TestClientTierSearchExpandsAndPersists(t *testing.T) {
	c, _ := newActive(t, NativeNone)
	want := append(slices.Clone(builtinNames), SearchToolName)
	if got := defNames(c.Definitions()); !slices.Equal(got, want) {
		t.Fatalf("first request offers %v, want %v", got, want)
	}

	res := runSearch(t, c, "create a pull request")
	if res.IsError {
		t.Fatalf("search failed: %s", res.Output)
	}
	wantText := "Found 2 matching tool(s):\n" +
		"- **mcp__github__create_pull_request**: Create a new pull request in a GitHub repository.\n" +
		"- **mcp__github__create_issue**: Create a new issue in a GitHub repository.\n" +
		"\nThese tools are now available for use."
	if res.Output != wantText {
		t.Errorf("model text:\n%s\nwant:\n%s", res.Output, wantText)
	}
	if res.Summary != "2 tools" {
		t.Errorf("summary %q", res.Summary)
	}
	want = append(slices.Clone(builtinNames), "mcp__github__create_pull_request", "mcp__github__create_issue", SearchToolName)
	if got := defNames(c.Definitions()); !slices.Equal(got, want) {
		t.Fatalf("after search offers %v, want %v", got, want)
	}

	// A second search adds in discovery order and never removes.
	res = runSearch(t, c, "slack message")
	if !strings.Contains(res.Output, "mcp__slack__slack_post_message") {
		t.Fatalf("slack search: %s", res.Output)
	}
	want = slices.Insert(want, len(want)-1, "mcp__slack__slack_post_message")
	if got := defNames(c.Definitions()); !slices.Equal(got, want) {
		t.Errorf("after second search offers %v, want %v", got, want)
	}

	// Already-expanded tools are not returned again; the next best are.
	res = runSearch(t, c, "github repository")
	if strings.Contains(res.Output, "create_pull_request") || !strings.Contains(res.Output, "mcp__github__list_issues") {
		t.Errorf("repeat search: %s", res.Output)
	}
	res = runSearch(t, c, "github repository")
	if !strings.HasPrefix(res.Output, "No new matching tools found. Already available to you: ") {
		t.Errorf("exhausted search: %s", res.Output)
	}
	res = runSearch(t, c, "kubernetes pods")
	if res.Output != "No matching tools found. Try a different search query." || res.IsError {
		t.Errorf("no-match search: %+v", res)
	}
}

func TestSearchToolPrepare(t *testing.T) {
	c, _ := newActive(t, NativeNone)
	st, _ := c.Lookup(SearchToolName)
	long := strings.Repeat("é", 100)
	p := st.Prepare(context.Background(), tool.Call{Args: tool.Args{"query": "  " + long + "  "}})
	if p.Header != "⚙ tool_search: "+strings.Repeat("é", 80) || p.NeedsApproval || p.Err != "" {
		t.Errorf("prepared = %+v", p)
	}
	for _, args := range []tool.Args{{}, {"query": "   "}} {
		if p := st.Prepare(context.Background(), tool.Call{Args: args}); !strings.HasPrefix(p.Err, "Error: no query provided") || p.Run != nil {
			t.Errorf("empty query prepared = %+v", p)
		}
	}
	spec := st.Spec()
	if spec.PrimaryKey != "query" || !json.Valid(spec.Parameters) {
		t.Errorf("spec = %+v", spec)
	}
	wantServers := "Available tool servers: github (3 tools), postgres (1 tool), slack (1 tool), other (1 tool)."
	if !strings.Contains(spec.Description, wantServers) {
		t.Errorf("description %q lacks %q", spec.Description, wantServers)
	}
	// A bare string argument is the query.
	args, err := tool.ParseArgs(`"github issues"`, spec.PrimaryKey)
	if err != nil || args.String("query") != "github issues" {
		t.Errorf("bare string args = %v, %v", args, err)
	}
}

func TestSelect(t *testing.T) {
	c, _ := newActive(t, NativeNone)
	res := runSearch(t, c, "select:mcp__postgres__query, slack_post_message ,nope")
	for _, s := range []string{"Found 2 matching tool(s):", "**mcp__postgres__query**", "**mcp__slack__slack_post_message**", "Not found: nope"} {
		if !strings.Contains(res.Output, s) {
			t.Errorf("select output lacks %q:\n%s", s, res.Output)
		}
	}
	st := c.Status()
	if !slices.Equal(st.Expanded, []string{"mcp__postgres__query", "mcp__slack__slack_post_message"}) {
		t.Errorf("expanded = %v", st.Expanded)
	}
	// select ignores max_results (2 here) and loads every named tool.
	res = runSearch(t, c, "select:create_issue,list_issues,create_pull_request")
	if !strings.HasPrefix(res.Output, "Found 3 matching tool(s):") {
		t.Errorf("select 3: %s", res.Output)
	}
	res = runSearch(t, c, "SELECT:mcp__github__list_issues")
	if !strings.Contains(res.Output, "**mcp__github__list_issues**") {
		t.Errorf("upper-case select: %s", res.Output)
	}
	res = runSearch(t, c, "select:nothing_here")
	if res.Output != "No tools named nothing_here. Try a keyword search instead." {
		t.Errorf("select miss: %s", res.Output)
	}
	if res := runSearch(t, c, "select: , "); !res.IsError {
		t.Errorf("empty select: %+v", res)
	}
}

func TestLookupDeferredToolExpandsIt(t *testing.T) {
	c, _ := newActive(t, NativeNone)
	tl, ok := c.Lookup("mcp__postgres__query")
	if !ok {
		t.Fatal("deferred tool does not resolve")
	}
	if out := tl.Prepare(context.Background(), tool.Call{}).Run(context.Background(), nil).Output; out != "ran mcp__postgres__query" {
		t.Errorf("call ran %q", out)
	}
	if !slices.Contains(defNames(c.Definitions()), "mcp__postgres__query") {
		t.Error("called tool is not offered afterwards")
	}
	if _, ok := c.Lookup("bash"); !ok {
		t.Error("built-in does not resolve")
	}
	if _, ok := c.Lookup("no_such_tool"); ok {
		t.Error("unknown tool resolves")
	}
	if got := c.Status().Expanded; !slices.Equal(got, []string{"mcp__postgres__query"}) {
		t.Errorf("expanded = %v (built-in lookups must not expand)", got)
	}
}

func TestRefreshKeepsSurvivingExpandedTools(t *testing.T) {
	c, inner := newActive(t, NativeNone)
	runSearch(t, c, "select:mcp__postgres__query,mcp__slack__slack_post_message")

	// The slack server goes away, a new server arrives.
	ts := slices.DeleteFunc(fixture(), func(t tool.Tool) bool { return strings.HasPrefix(t.Spec().Name, "mcp__slack__") })
	ts = append(ts, mkTool("mcp__k8s__pods_list", "List Kubernetes pods."), mkTool("mcp__k8s__pods_log", "Get pod logs."))
	inner.set(ts)

	want := append(slices.Clone(builtinNames), "mcp__postgres__query", SearchToolName)
	if got := defNames(c.Definitions()); !slices.Equal(got, want) {
		t.Errorf("after refresh offers %v, want %v", got, want)
	}
	hint := c.SystemHint()
	if !strings.Contains(hint, "github (3 tools), k8s (2 tools), postgres (1 tool), other (1 tool)") || strings.Contains(hint, "slack") {
		t.Errorf("hint not refreshed: %s", hint)
	}
	if res := runSearch(t, c, "kubernetes pods"); !strings.Contains(res.Output, "mcp__k8s__pods_list") {
		t.Errorf("new tools not searchable: %s", res.Output)
	}
	if _, ok := c.Lookup("mcp__slack__slack_post_message"); ok {
		t.Error("removed tool still resolves")
	}
	// A removed tool that comes back is deferred again, not expanded.
	inner.set(fixture())
	if slices.Contains(defNames(c.Definitions()), "mcp__slack__slack_post_message") {
		t.Error("returning tool was re-expanded")
	}
}

func TestRefreshReevaluatesActivation(t *testing.T) {
	inner := &fakeInner{tools: fixture()} // 9 tools
	c := New(inner, builtinSet(), Options{Threshold: 10})
	if c.Status().Active {
		t.Fatal("active below threshold")
	}
	inner.set(append(fixture(), mkTool("mcp__x__one", "one")))
	if st := c.Status(); !st.Active || st.Total != 10 {
		t.Errorf("after growth: %+v", st)
	}
	if !slices.Contains(defNames(c.Definitions()), SearchToolName) {
		t.Error("tool_search not offered after growth")
	}
}

func TestUnversionedInnerBuildsOnce(t *testing.T) {
	reg, err := tool.NewRegistry(fixture()...)
	if err != nil {
		t.Fatal(err)
	}
	c := New(reg, builtinSet(), Options{Mode: ModeOn})
	want := []string{"bash", "edit_file", "read_file", SearchToolName}
	if got := defNames(c.Definitions()); !slices.Equal(got, want) {
		t.Errorf("registry-backed catalog offers %v, want %v", got, want)
	}
}

func TestNativeTiers(t *testing.T) {
	for _, kind := range []NativeKind{NativeAnthropic, NativeOpenAI} {
		c, inner := newActive(t, kind)
		defs := c.Definitions()
		if got, want := defNames(defs), defNames(inner.Definitions()); !slices.Equal(got, want) {
			t.Errorf("%v: offers %v, want all %v", kind, got, want)
		}
		for _, d := range defs {
			if d.DeferLoading == builtinSet()[d.Name] {
				t.Errorf("%v: %s DeferLoading=%v", kind, d.Name, d.DeferLoading)
			}
		}
		if h := c.SystemHint(); h != "" {
			t.Errorf("%v: hint %q", kind, h)
		}
		st := c.Status()
		if st.Tier != kind.String() || len(st.Deferred) != 6 || len(st.Visible) != 3 {
			t.Errorf("%v: status %+v", kind, st)
		}
	}
	// The tier follows the model per request (/model switches).
	kind := NativeAnthropic
	c := New(&fakeInner{tools: fixture()}, builtinSet(), Options{Mode: ModeOn, Native: func() NativeKind { return kind }})
	if slices.Contains(defNames(c.Definitions()), SearchToolName) {
		t.Error("native tier offers tool_search")
	}
	kind = NativeNone
	if !slices.Contains(defNames(c.Definitions()), SearchToolName) || c.SystemHint() == "" {
		t.Error("client tier after switching models lacks tool_search or hint")
	}
	// Inactive: no DeferLoading at all.
	c = New(&fakeInner{tools: fixture()}, builtinSet(), Options{Mode: ModeOff, Native: func() NativeKind { return NativeAnthropic }})
	for _, d := range c.Definitions() {
		if d.DeferLoading {
			t.Errorf("inactive native catalog defers %s", d.Name)
		}
	}
}

func TestSystemHint(t *testing.T) {
	c, _ := newActive(t, NativeNone)
	hint := c.SystemHint()
	for _, s := range []string{
		"6 tools from MCP servers (github (3 tools), postgres (1 tool), slack (1 tool), other (1 tool))",
		"tool_search", "select:NAME",
	} {
		if !strings.Contains(hint, s) {
			t.Errorf("hint lacks %q:\n%s", s, hint)
		}
	}
	// Expanding does not change the hint (the prompt prefix stays cacheable).
	runSearch(t, c, "github")
	if c.SystemHint() != hint {
		t.Error("hint changed after a search")
	}
	// Active with nothing to defer: no hint, no tool_search.
	only := &fakeInner{tools: fixture()[:3]}
	c = New(only, builtinSet(), Options{Mode: ModeOn})
	if c.SystemHint() != "" || slices.Contains(defNames(c.Definitions()), SearchToolName) {
		t.Error("catalog without MCP tools offers search")
	}
	if res := runSearch(t, c, "x"); !res.IsError || !strings.Contains(res.Output, "no MCP tools") {
		t.Errorf("search without MCP tools: %+v", res)
	}
}

func TestStatusClientTier(t *testing.T) {
	c, _ := newActive(t, NativeNone)
	runSearch(t, c, "select:mcp__postgres__query")
	st := c.Status()
	if !st.Active || st.Mode != ModeOn || st.Tier != "client" || st.Total != 9 || st.MaxResults != 2 {
		t.Errorf("status = %+v", st)
	}
	if want := []string{"bash", "edit_file", "read_file", "mcp__postgres__query", SearchToolName}; !slices.Equal(st.Visible, want) {
		t.Errorf("visible = %v, want %v", st.Visible, want)
	}
	if len(st.Deferred) != 5 || slices.Contains(st.Deferred, "mcp__postgres__query") {
		t.Errorf("deferred = %v", st.Deferred)
	}
}

func TestConcurrentUse(t *testing.T) {
	c, inner := newActive(t, NativeNone)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 30 {
				switch (i + j) % 5 {
				case 0:
					c.Definitions()
				case 1:
					runSearch(t, c, "github issue")
				case 2:
					c.SystemHint()
				case 3:
					c.Status()
				case 4:
					if i == 0 {
						inner.set(fixture())
					}
					c.Lookup("mcp__postgres__query")
				}
			}
		}()
	}
	wg.Wait()
}
