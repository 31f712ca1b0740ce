package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

func TestDiscoveryPaginationAndCalls(t *testing.T) {
	m, problems := startManager(t, []ServerConfig{stdioServer("test", "-tools", "25", "-pagesize", "7")}, testOptions())
	if len(problems) != 0 {
		t.Fatalf("problems: %s", problemText(problems))
	}
	names := toolNames(m.Tools())
	// 14 built-in test tools + 25 fillers, over 6 pages of 7.
	if len(names) != 39 {
		t.Fatalf("got %d tools: %v", len(names), names)
	}
	if !slices.Contains(names, "mcp__test__echo") || !slices.Contains(names, "mcp__test__tool_024") {
		t.Errorf("names = %v", names)
	}
	for _, n := range names {
		if !safeName(n) {
			t.Errorf("unsafe name %q", n)
		}
	}
	echo, _ := m.Lookup("mcp__test__echo")
	sp := echo.Spec()
	if sp.Description != "[MCP: test] Echoes back the input" || sp.AutoApprove || !strings.Contains(string(sp.Parameters), `"message"`) {
		t.Errorf("spec = %+v", sp)
	}
	p := echo.Prepare(context.Background(), tool.Call{Name: sp.Name, Args: tool.Args{"message": "hi"}})
	if p.Header != "⚙ mcp:test/echo" || !p.NeedsApproval || p.ApprovalLabel != "mcp_tool" || p.Preview.String() != "    message: hi" {
		t.Errorf("prepared = %+v", p)
	}
	if res := p.Run(context.Background(), nil); res.Output != "Echo: hi" || res.IsError {
		t.Errorf("echo = %+v", res)
	}
	if res := call(t, m, "mcp__test__fail", nil); !res.IsError || res.Output != "Error: the database is locked" {
		t.Errorf("fail = %+v", res)
	}
	if res := call(t, m, "mcp__test__structured", nil); res.Output != `{"temperature":21.5,"unit":"C"}` {
		t.Errorf("structured = %+v", res)
	}
	if res := call(t, m, "mcp__test__resource_link", nil); !strings.Contains(res.Output, "file:///tmp/report.txt") || !strings.Contains(res.Output, "name: report") {
		t.Errorf("resource_link = %+v", res)
	}
	if res := call(t, m, "mcp__test__resource", nil); !strings.Contains(res.Output, "remember the milk") || !strings.Contains(res.Output, "mem://blob") {
		t.Errorf("resource = %+v", res)
	}
	if res := call(t, m, "mcp__test__image", nil); res.Output != "before\n[image: image/png, 67 bytes]\nafter" || len(res.Parts) != 0 {
		t.Errorf("image without vision = %+v", res)
	}
	// The odd tool name is sanitized and still calls the original name.
	var odd string
	for _, n := range names {
		if strings.HasPrefix(n, "mcp__test__odd_name_with_spaces_") {
			odd = n
		}
	}
	if odd == "" {
		t.Fatalf("sanitized tool missing: %v", names)
	}
	if res := call(t, m, odd, nil); res.Output != "odd" {
		t.Errorf("odd = %+v", res)
	}
}

func TestImageWithVision(t *testing.T) {
	opts := testOptions()
	opts.Vision = func() bool { return true }
	m, _ := startManager(t, []ServerConfig{stdioServer("v")}, opts)
	res := call(t, m, "mcp__v__image", nil)
	if len(res.Parts) != 3 || res.Parts[1].Type != llm.PartImage || res.Parts[1].MediaType != "image/png" || len(res.Parts[1].Data) != 67 {
		t.Fatalf("parts = %+v", res.Parts)
	}
	if res.Parts[0].Text != "before" || res.Parts[2].Text != "after" {
		t.Errorf("text parts = %+v", res.Parts)
	}
}

func TestEnvAndCwd(t *testing.T) {
	dir := t.TempDir()
	cfg := stdioServer("envsrv")
	cfg.Env = map[string]string{"TURNSTONE_MCP_SECRET": "s3cret"}
	cfg.Cwd = dir
	m, _ := startManager(t, []ServerConfig{cfg}, testOptions())
	res := call(t, m, "mcp__envsrv__env", tool.Args{"name": "TURNSTONE_MCP_SECRET"})
	real, _ := filepath.EvalSymlinks(dir)
	if !strings.Contains(res.Output, "TURNSTONE_MCP_SECRET=s3cret") || !strings.Contains(res.Output, "cwd="+real) {
		t.Errorf("env = %q", res.Output)
	}
	// The parent environment is inherited too.
	if res := call(t, m, "mcp__envsrv__env", tool.Args{"name": "PATH"}); strings.HasPrefix(res.Output, "PATH= ") {
		t.Errorf("PATH not inherited: %q", res.Output)
	}
}

func TestBadServersAreReportedAndOthersWork(t *testing.T) {
	servers := []ServerConfig{
		stdioServer("bad__name"),
		stdioServer("broken", "-fail-init"),
		{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-binary")},
		stdioServer("good"),
	}
	m, problems := startManager(t, servers, testOptions())
	text := problemText(problems)
	if len(problems) != 3 {
		t.Fatalf("want 3 problems, got:\n%s", text)
	}
	for _, want := range []string{`"bad__name" contains "__"`, "cannot open database", "no-such-binary"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if !hasTool(m, "mcp__good__echo") {
		t.Errorf("good server's tools missing: %v", toolNames(m.Tools()))
	}
	states := map[string]State{}
	for _, s := range m.Servers() {
		states[s.Name] = s.State
	}
	if states["good"] != StateConnected || states["broken"] != StateFailed || states["bad__name"] != StateFailed {
		t.Errorf("states = %v", states)
	}
	list := m.FormatList()
	for _, want := range []string{"MCP tools (14):", "mcp__good__echo  ", "[MCP: good] Echoes back the input", "good       connected (stdio, 14 tools)", "broken     failed: connect:"} {
		if !strings.Contains(list, want) {
			t.Errorf("FormatList lacks %q:\n%s", want, list)
		}
	}
	if got := m.Summary(); got != "MCP: 1 of 4 servers connected, 14 tools" {
		t.Errorf("Summary = %q", got)
	}
	// A manual refresh retries the broken one and reports it again.
	rep, err := m.Refresh(context.Background(), "broken")
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Err == nil {
		t.Errorf("refresh broken = %+v, %v", rep, err)
	}
	if _, err := m.Refresh(context.Background(), "nope"); err == nil || err.Error() != "Unknown MCP server: nope. Known servers: bad__name, broken, good, missing" {
		t.Errorf("unknown server error = %v", err)
	}
}

func TestNoServers(t *testing.T) {
	m, problems := startManager(t, nil, testOptions())
	if len(problems) != 0 || len(m.Tools()) != 0 {
		t.Fatal("expected nothing")
	}
	if got := m.FormatList(); got != "No MCP servers configured." {
		t.Errorf("FormatList = %q", got)
	}
	rep, err := m.Refresh(context.Background(), "")
	if err != nil || rep.Format() != "MCP refresh complete: no servers to refresh." {
		t.Errorf("refresh = %q, %v", rep.Format(), err)
	}
}

func TestListChangedPush(t *testing.T) {
	m, _ := startManager(t, []ServerConfig{stdioServer("push")}, testOptions())
	var notified atomic.Int32
	remove := m.AddListener(func() { notified.Add(1) })
	defer remove()
	v0 := m.Version()
	if res := call(t, m, "mcp__push__add_tool", tool.Args{"name": "brand_new"}); res.Output != "added brand_new" {
		t.Fatalf("add_tool = %+v", res)
	}
	eventually(t, "the pushed tool", func() bool { return hasTool(m, "mcp__push__brand_new") })
	if m.Version() <= v0 || notified.Load() == 0 {
		t.Errorf("version %d -> %d, listener calls %d", v0, m.Version(), notified.Load())
	}
	if res := call(t, m, "mcp__push__brand_new", nil); res.Output != "I am brand_new" {
		t.Errorf("new tool = %+v", res)
	}
	call(t, m, "mcp__push__remove_tool", tool.Args{"name": "brand_new"})
	eventually(t, "the tool to go", func() bool { return !hasTool(m, "mcp__push__brand_new") })
}

func TestManualRefreshReport(t *testing.T) {
	m, _ := startManager(t, []ServerConfig{stdioServer("quiet", "-no-list-changed"), stdioServer("other")}, testOptions())
	call(t, m, "mcp__quiet__add_tool", tool.Args{"name": "create_pr"})
	call(t, m, "mcp__quiet__remove_tool", tool.Args{"name": "noop"})
	if hasTool(m, "mcp__quiet__create_pr") {
		t.Fatal("a server without listChanged should not push")
	}
	rep, err := m.Refresh(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := "MCP refresh complete:\n  other: no changes\n  quiet: +1 added, -1 removed\n    + mcp__quiet__create_pr\n    - mcp__quiet__noop"
	if got := rep.Format(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	if !hasTool(m, "mcp__quiet__create_pr") {
		t.Error("refresh did not add the tool")
	}
	rep, _ = m.Refresh(context.Background(), "quiet")
	if got := rep.Format(); got != "MCP refresh complete:\n  quiet: no changes" {
		t.Errorf("second refresh = %q", got)
	}
}

func TestPeriodicRefresh(t *testing.T) {
	opts := testOptions()
	opts.RefreshInterval = 50 * time.Millisecond
	m, _ := startManager(t, []ServerConfig{stdioServer("poll", "-no-list-changed")}, opts)
	call(t, m, "mcp__poll__add_tool", tool.Args{"name": "polled"})
	eventually(t, "the periodic refresh", func() bool { return hasTool(m, "mcp__poll__polled") })
}

func TestCrashAndReconnect(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "starts")
	m, _ := startManager(t, []ServerConfig{stdioServer("crashy", "-marker", marker)}, testOptions())
	starts := func() int {
		b, _ := os.ReadFile(marker)
		return strings.Count(string(b), "\n")
	}
	if starts() != 1 {
		t.Fatalf("starts = %d", starts())
	}
	res := call(t, m, "mcp__crashy__crash", nil)
	if !res.IsError || !strings.Contains(res.Output, "MCP server crashy") {
		t.Errorf("crash call = %+v", res)
	}
	eventually(t, "the restart", func() bool { return starts() >= 2 && hasTool(m, "mcp__crashy__echo") })
	if res := call(t, m, "mcp__crashy__echo", tool.Args{"message": "back"}); res.Output != "Echo: back" {
		t.Errorf("echo after reconnect = %+v", res)
	}
}

func TestDisconnectedCallsFailClearly(t *testing.T) {
	opts := testOptions()
	opts.ReconnectMin = time.Hour // no automatic reconnect within the test
	opts.ReconnectMax = time.Hour
	m, _ := startManager(t, []ServerConfig{stdioServer("dead")}, opts)
	echo, _ := m.Lookup("mcp__dead__echo")
	call(t, m, "mcp__dead__crash", nil)
	// The state flips first and the snapshot is rebuilt right after, so
	// wait for both: a disconnected server's tools leave the offered list.
	eventually(t, "the disconnect", func() bool {
		return m.Servers()[0].State == StateDisconnected && !hasTool(m, "mcp__dead__echo")
	})
	// Still callable by name, with a clear error.
	tl, ok := m.Lookup("mcp__dead__echo")
	if !ok {
		t.Fatal("lookup of a disconnected tool failed")
	}
	_ = echo
	res := tl.Prepare(context.Background(), tool.Call{Args: tool.Args{"message": "x"}}).Run(context.Background(), nil)
	if !res.IsError || !strings.Contains(res.Output, "MCP server dead is disconnected") || !strings.Contains(res.Output, "/mcp refresh dead") {
		t.Errorf("call to disconnected = %+v", res)
	}
	if st := m.Servers()[0]; !strings.Contains(st.Err, "crashing on request") {
		t.Errorf("status lacks stderr tail: %+v", st)
	}
	// Manual refresh reconnects it.
	rep, err := m.Refresh(context.Background(), "dead")
	if err != nil || rep.Format() != "MCP refresh complete:\n  dead: reconnected, no changes" {
		t.Errorf("refresh = %q, %v", rep.Format(), err)
	}
	if !hasTool(m, "mcp__dead__echo") {
		t.Error("tools not back after reconnect")
	}
}

func TestSlowStartDoesNotBlock(t *testing.T) {
	opts := testOptions()
	opts.StartupTimeout = 1500 * time.Millisecond // connect attempts get 4x this
	m, problems := startManager(t, []ServerConfig{stdioServer("slow", "-sleep-init", "3s"), stdioServer("fast")}, opts)
	// The fast one is normally up; on a very loaded machine it may be
	// pending too, which is not what this test is about.
	if len(problems) == 0 || problems[0].Server != "slow" || !problems[0].Pending || !strings.Contains(problems[0].Error(), "still connecting after 1.5s") {
		t.Fatalf("problems = %s", problemText(problems))
	}
	eventually(t, "the slow server", func() bool { return hasTool(m, "mcp__slow__echo") && hasTool(m, "mcp__fast__echo") })
	names := toolNames(m.Tools())
	if !strings.HasPrefix(names[0], "mcp__slow__") {
		t.Errorf("config order not kept: %v", names[:3])
	}
}

func TestCallTimeoutAndCancel(t *testing.T) {
	opts := testOptions()
	opts.CallTimeout = 1500 * time.Millisecond
	m, _ := startManager(t, []ServerConfig{stdioServer("sleepy")}, opts)
	res := call(t, m, "mcp__sleepy__sleep", tool.Args{"seconds": 30})
	if !res.IsError || res.Output != "Error: MCP tool sleep on server sleepy timed out after 1.5s. The request was cancelled; the tool may be slow or stuck." {
		t.Errorf("timeout = %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	res = callCtx(t, ctx, m, "mcp__sleepy__sleep", tool.Args{"seconds": 30})
	if !res.IsError || !strings.Contains(res.Output, "cancelled") {
		t.Errorf("cancel = %+v", res)
	}
	// The session survives both.
	if res := call(t, m, "mcp__sleepy__echo", tool.Args{"message": "still here"}); res.Output != "Echo: still here" {
		t.Errorf("echo after timeout = %+v", res)
	}
}

func TestCatalogMergesBuiltins(t *testing.T) {
	m, _ := startManager(t, []ServerConfig{stdioServer("cat")}, testOptions())
	builtin, err := tool.NewRegistry(fakeBuiltin("bash"), fakeBuiltin("read_file"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog(builtin, m)
	defs := c.Definitions()
	if defs[0].Name != "bash" || defs[1].Name != "read_file" || !strings.HasPrefix(defs[2].Name, "mcp__cat__") {
		t.Errorf("order = %v", defs[:3])
	}
	if _, ok := c.Lookup("bash"); !ok {
		t.Error("builtin lookup")
	}
	if _, ok := c.Lookup("mcp__cat__noop"); !ok {
		t.Error("mcp lookup")
	}
	v := c.Version()
	call(t, m, "mcp__cat__add_tool", tool.Args{"name": "later"})
	eventually(t, "the catalog to change", func() bool { return c.Version() > v })
	if _, ok := c.Lookup("mcp__cat__later"); !ok {
		t.Error("new tool not in catalog")
	}
	if NewCatalog(builtin, nil).Version() != 0 || len(NewCatalog(nil, nil).Definitions()) != 0 {
		t.Error("nil parts")
	}
}

type fakeBuiltin string

func (f fakeBuiltin) Spec() tool.Spec {
	return tool.Spec{Name: string(f), Parameters: emptySchema}
}
func (f fakeBuiltin) Prepare(context.Context, tool.Call) *tool.Prepared { return &tool.Prepared{} }

func TestCloseIsQuick(t *testing.T) {
	m := NewManager([]ServerConfig{stdioServer("a"), stdioServer("b")}, testOptions())
	m.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Servers() {
		if s.State == StateConnected || m.session(s.Name) != nil {
			t.Errorf("%s still connected after Close", s.Name)
		}
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools offered after Close: %v", toolNames(m.Tools()))
	}
	if res := call(t, m, "mcp__a__echo", tool.Args{"message": "x"}); !res.IsError {
		t.Errorf("call after close = %+v", res)
	}
}

// session is a test helper reading a server's session.
func (m *Manager) session(name string) any {
	s := m.byName[name]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil
	}
	return s.sess
}
