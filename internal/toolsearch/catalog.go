// Package toolsearch holds dynamic tool search: a per-session tool catalog
// that defers MCP tools once there are many of them, and the BM25 index the
// synthetic tool_search tool uses to find and expand them (tools.md "Dynamic
// Tool Search", behavior.md §3).
package toolsearch

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// Setting values of [tools] search.
const (
	ModeAuto = "auto"
	ModeOn   = "on"
	ModeOff  = "off"
)

// Defaults of [tools] search_threshold and search_max_results.
const (
	DefaultThreshold  = 20
	DefaultMaxResults = 5
)

// SearchToolName is the synthetic client-side search tool.
const SearchToolName = "tool_search"

// NativeKind is the provider-side tool search the current model supports.
type NativeKind int

const (
	// NativeNone: no server-side search; the client-side tool_search runs.
	NativeNone NativeKind = iota
	// NativeAnthropic: defer_loading plus Anthropic's BM25 search tool.
	NativeAnthropic
	// NativeOpenAI: defer_loading on hosted-tool-search models.
	NativeOpenAI
)

func (k NativeKind) String() string {
	switch k {
	case NativeAnthropic:
		return "anthropic"
	case NativeOpenAI:
		return "openai"
	default:
		return "client"
	}
}

// Options configures a Catalog.
type Options struct {
	// Mode is "auto" (the default when empty), "on" or "off".
	Mode string
	// Threshold: in auto mode search is active when the tool count
	// (built-in + MCP) is at least this. 0 means DefaultThreshold.
	Threshold int
	// MaxResults bounds the tools one search returns. 0 means
	// DefaultMaxResults.
	MaxResults int
	// Native reports the current model's native tool search; it is called
	// on every request so /model switches take effect. nil means NativeNone.
	Native func() NativeKind
	// Index selects the index analysis; the zero value means
	// DefaultIndexOptions.
	Index *IndexOptions
}

// versioned is implemented by inner catalogs that change (MCP refresh).
type versioned interface{ Version() uint64 }

// Catalog wraps the session's full tool catalog and decides, per request,
// which tools the model sees. It is created per session (expanded tools are
// per session) and is safe for concurrent use.
type Catalog struct {
	inner   tool.Catalog
	builtin map[string]bool
	opts    Options
	search  *searchTool

	mu    sync.Mutex
	built bool
	ver   uint64
	st    state
	// expanded lists deferred tools made visible, in discovery order. It
	// survives refreshes for the tools that still exist.
	expanded []string
}

// state is one snapshot of the inner catalog, rebuilt on every version
// change.
type state struct {
	all      []llm.ToolDef // inner order
	deferred map[string]int
	nDefer   int
	active   bool
	reason   string
	servers  []ServerCount
	index    *Index
}

// ServerCount is the number of deferred tools one MCP server contributes.
// Tools without an mcp__server__ prefix count under the server "other".
type ServerCount struct {
	Server string `json:"server"`
	Tools  int    `json:"tools"`
}

var (
	_ tool.Catalog = (*Catalog)(nil)
	_ tool.Hinter  = (*Catalog)(nil)
)

// New wraps inner. builtin names the always-visible tools (the 15
// built-ins, tool.Schemas.BuiltinNames); every other tool is deferrable.
func New(inner tool.Catalog, builtin map[string]bool, opts Options) *Catalog {
	switch opts.Mode {
	case "":
		opts.Mode = ModeAuto
	case ModeAuto, ModeOn, ModeOff:
	default:
		opts.Mode = ModeAuto
	}
	if opts.Threshold <= 0 {
		opts.Threshold = DefaultThreshold
	}
	if opts.MaxResults <= 0 {
		opts.MaxResults = DefaultMaxResults
	}
	c := &Catalog{inner: inner, builtin: builtin, opts: opts}
	c.search = &searchTool{c: c}
	return c
}

// ValidMode reports whether s is a valid search setting, for config checks.
func ValidMode(s string) bool { return s == ModeAuto || s == ModeOn || s == ModeOff }

func (c *Catalog) native() NativeKind {
	if c.opts.Native == nil {
		return NativeNone
	}
	return c.opts.Native()
}

// refresh rebuilds the snapshot when the inner catalog changed; callers
// hold c.mu.
func (c *Catalog) refresh() {
	var ver uint64
	v, changes := c.inner.(versioned)
	if changes {
		ver = v.Version() // read before Definitions: a later bump rebuilds again
	}
	if c.built && (!changes || ver == c.ver) {
		return
	}
	c.built, c.ver = true, ver
	c.st = c.build(c.inner.Definitions())
	kept := c.expanded[:0]
	for _, name := range c.expanded {
		if _, ok := c.st.deferred[name]; ok {
			kept = append(kept, name)
		}
	}
	c.expanded = kept
}

func (c *Catalog) build(all []llm.ToolDef) state {
	st := state{all: all, deferred: map[string]int{}}
	counts := map[string]int{}
	var docs []Doc
	for i, d := range all {
		if c.builtin[d.Name] || d.Name == SearchToolName {
			continue
		}
		st.deferred[d.Name] = i
		docs = append(docs, Doc{Name: d.Name, Description: d.Description})
		server, _, ok := splitMCPName(d.Name)
		if !ok {
			server = "other"
		}
		counts[server]++
	}
	st.nDefer = len(docs)
	for s, n := range counts {
		st.servers = append(st.servers, ServerCount{Server: s, Tools: n})
	}
	sort.Slice(st.servers, func(i, j int) bool {
		a, b := st.servers[i].Server, st.servers[j].Server
		if (a == "other") != (b == "other") {
			return b == "other" // "other" goes last
		}
		return a < b
	})
	total := len(all)
	switch c.opts.Mode {
	case ModeOff:
		st.reason = "tool search is off"
	case ModeOn:
		st.active, st.reason = true, "tool search is on"
	default:
		st.active = total >= c.opts.Threshold
		if st.active {
			st.reason = fmt.Sprintf("auto: %d tools reach the threshold of %d", total, c.opts.Threshold)
		} else {
			st.reason = fmt.Sprintf("auto: %d tools, below the threshold of %d", total, c.opts.Threshold)
		}
	}
	if st.active && len(docs) > 0 {
		iopts := DefaultIndexOptions()
		if c.opts.Index != nil {
			iopts = *c.opts.Index
		}
		st.index = NewIndex(docs, iopts)
	}
	return st
}

// deferring reports whether some tools are held back right now.
func (st *state) deferring() bool { return st.active && st.nDefer > 0 }

// Definitions returns the tools for the next request: everything when
// search is inactive; all tools with DeferLoading on the deferred ones for
// native tiers; otherwise the built-ins, the expanded tools in discovery
// order and tool_search.
func (c *Catalog) Definitions() []llm.ToolDef {
	c.mu.Lock()
	c.refresh()
	defer c.mu.Unlock()
	if !c.st.deferring() {
		// refresh cached the inner list; no need to ask it again.
		return slices.Clone(c.st.all)
	}
	if c.native() != NativeNone {
		out := slices.Clone(c.st.all)
		for i := range out {
			_, deferred := c.st.deferred[out[i].Name]
			out[i].DeferLoading = deferred
		}
		return out
	}
	return c.clientDefs()
}

// clientDefs is the client-side tier's tool list; callers hold c.mu.
func (c *Catalog) clientDefs() []llm.ToolDef {
	out := make([]llm.ToolDef, 0, len(c.st.all)-c.st.nDefer+len(c.expanded)+1)
	for _, d := range c.st.all {
		if _, deferred := c.st.deferred[d.Name]; !deferred && d.Name != SearchToolName {
			out = append(out, d)
		}
	}
	for _, name := range c.expanded {
		out = append(out, c.st.all[c.st.deferred[name]])
	}
	return append(out, c.search.specLocked().Def())
}

// Lookup finds a callable tool. tool_search always resolves (it explains
// when search is inactive). A deferred tool resolves even when it was never
// offered, and the call expands it: the model named it exactly, so from the
// next request on it sees the tool's schema.
func (c *Catalog) Lookup(name string) (tool.Tool, bool) {
	if name == SearchToolName {
		return c.search, true
	}
	t, ok := c.inner.Lookup(name)
	if !ok {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	// Native tiers leave loading to the provider and never expand.
	if _, deferred := c.st.deferred[name]; deferred && c.st.active && c.native() == NativeNone {
		c.expandLocked(name)
	}
	return t, true
}

// expandLocked adds a deferred tool to the visible set; callers hold c.mu.
func (c *Catalog) expandLocked(name string) bool {
	if slices.Contains(c.expanded, name) {
		return false
	}
	c.expanded = append(c.expanded, name)
	return true
}

// SystemHint is the system-prompt paragraph for the client-side tier. It
// is computed from the current tools on every call, so an MCP refresh is
// reflected on the next request.
func (c *Catalog) SystemHint() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	if !c.st.deferring() || c.native() != NativeNone {
		return ""
	}
	return fmt.Sprintf("More tools are available than the ones listed: %d tools from MCP servers (%s) are loaded on demand. "+
		"When none of your current tools fits a task, call tool_search with a few keywords for the capability you need "+
		"(for example \"create pull request\" or \"query database\"), or with \"select:NAME\" for a tool you know by name. "+
		"The tools it finds are added to your tool list from your next step on and stay available.",
		c.st.nDefer, serverList(c.st.servers))
}

func serverList(servers []ServerCount) string {
	parts := make([]string, len(servers))
	for i, s := range servers {
		unit := "tools"
		if s.Tools == 1 {
			unit = "tool"
		}
		parts[i] = fmt.Sprintf("%s (%d %s)", s.Server, s.Tools, unit)
	}
	return strings.Join(parts, ", ")
}

// Status describes the catalog for /tools.
type Status struct {
	Mode       string `json:"mode"`
	Active     bool   `json:"active"`
	Reason     string `json:"reason"`
	Tier       string `json:"tier"` // client, anthropic or openai
	Total      int    `json:"total"`
	Threshold  int    `json:"threshold"`
	MaxResults int    `json:"max_results"`
	// Visible are the tools offered on the next request (tool_search
	// included when offered); Deferred those held back; Expanded the
	// deferred tools found so far, in discovery order. In native tiers every
	// deferred tool is sent with defer_loading and the provider decides.
	Visible  []string      `json:"visible"`
	Deferred []string      `json:"deferred"`
	Expanded []string      `json:"expanded"`
	Servers  []ServerCount `json:"servers"`
}

// Status reports the current visibility.
func (c *Catalog) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	native := c.native()
	s := Status{
		Mode: c.opts.Mode, Active: c.st.active, Reason: c.st.reason, Tier: native.String(),
		Total: len(c.st.all), Threshold: c.opts.Threshold, MaxResults: c.opts.MaxResults,
		Expanded: slices.Clone(c.expanded), Servers: slices.Clone(c.st.servers),
	}
	switch {
	case !c.st.deferring():
		for _, d := range c.st.all {
			s.Visible = append(s.Visible, d.Name)
		}
	case native != NativeNone:
		for _, d := range c.st.all {
			if _, deferred := c.st.deferred[d.Name]; deferred {
				s.Deferred = append(s.Deferred, d.Name)
			} else {
				s.Visible = append(s.Visible, d.Name)
			}
		}
	default:
		for _, d := range c.clientDefs() {
			s.Visible = append(s.Visible, d.Name)
		}
		for _, d := range c.st.all {
			if _, deferred := c.st.deferred[d.Name]; deferred && !slices.Contains(c.expanded, d.Name) {
				s.Deferred = append(s.Deferred, d.Name)
			}
		}
	}
	return s
}
