package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"turnstone/internal/tool"
)

// searchParams is the synthetic tool's parameter schema (behavior.md §3).
var searchParams = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Keywords describing the capability you need (e.g. \"create pull request\", \"query postgres table\"), or select:NAME[,NAME] to load tools by exact name."}},"required":["query"]}`)

// maxListedDescription bounds each description in a result list: the full
// schema is offered from the next request on, so one line is enough here.
const maxListedDescription = 300

// searchTool is the synthetic client-side tool_search.
type searchTool struct{ c *Catalog }

var _ tool.Tool = (*searchTool)(nil)

// Spec describes tool_search with the current list of tool servers.
func (t *searchTool) Spec() tool.Spec {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.c.refresh()
	return t.specLocked()
}

// specLocked builds the spec; callers hold c.mu.
func (t *searchTool) specLocked() tool.Spec {
	desc := fmt.Sprintf("Search the available tools by keyword and load the ones you need. "+
		"Returns the names and descriptions of up to %d matching tools, which become callable from your next step and stay available. "+
		"Use it when none of your current tools can do what is needed. "+
		"Query with keywords for the capability, or select:NAME[,NAME] to load tools by exact name.",
		t.c.opts.MaxResults)
	if len(t.c.st.servers) > 0 {
		desc += " Available tool servers: " + serverList(t.c.st.servers) + "."
	}
	return tool.Spec{
		Name:        SearchToolName,
		Description: desc,
		Parameters:  searchParams,
		// A bare string argument is the query (the original had no primary
		// key, so a model sending "github issues" got an argument error).
		PrimaryKey: "query",
	}
}

// Prepare validates the query; searching needs no approval.
func (t *searchTool) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	q := strings.TrimSpace(call.Args.String("query"))
	header := "⚙ tool_search: " + firstRunes(q, 80)
	if q == "" {
		return tool.Fail("✗ tool_search: no query",
			`Error: no query provided. Call tool_search with {"query": "keywords for the capability you need"} or {"query": "select:TOOL_NAME"}.`)
	}
	if msg := t.c.inactiveReason(); msg != "" {
		return tool.Fail("✗ tool_search: not active", msg)
	}
	return &tool.Prepared{
		Header: header,
		Run: func(context.Context, tool.Emit) tool.Result {
			return t.c.Search(q)
		},
	}
}

// inactiveReason explains why there is nothing to search, or is empty.
func (c *Catalog) inactiveReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	return c.inactiveLocked()
}

// inactiveLocked is inactiveReason for callers holding c.mu.
func (c *Catalog) inactiveLocked() string {
	switch {
	case !c.st.active:
		return fmt.Sprintf("Tool search is not active (%s). Every tool is already offered to you: call it directly.", c.st.reason)
	case c.st.nDefer == 0:
		return "Tool search is active but there are no MCP tools to find. Every tool is already offered to you: call it directly."
	}
	return ""
}

// Search runs one tool_search query and expands the tools it returns. The
// result text is what the model reads.
func (c *Catalog) Search(query string) tool.Result {
	q := strings.TrimSpace(query)
	if q == "" {
		return tool.ErrorResult(`Error: no query provided. Call tool_search with {"query": "keywords for the capability you need"}.`)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	if msg := c.inactiveLocked(); msg != "" {
		return tool.ErrorResult(msg)
	}
	if len(q) >= len("select:") && strings.EqualFold(q[:len("select:")], "select:") {
		return c.selectLocked(q[len("select:"):])
	}
	already := map[string]bool{}
	for _, n := range c.expanded {
		already[n] = true
	}
	hits := c.st.index.Search(q, c.opts.MaxResults, func(name string) bool { return already[name] })
	if len(hits) == 0 {
		// Say so when the only matches are tools the model already has.
		if old := c.st.index.Search(q, c.opts.MaxResults, nil); len(old) > 0 {
			names := make([]string, len(old))
			for i, h := range old {
				names[i] = h.Name
			}
			return tool.Result{
				Output:  "No new matching tools found. Already available to you: " + strings.Join(names, ", ") + ". Try a different search query for other tools.",
				Summary: "no new tools",
			}
		}
		return tool.Result{Output: "No matching tools found. Try a different search query.", Summary: "no matches"}
	}
	return c.found(hits, nil)
}

// selectLocked loads tools by exact name: the full name, or the part after
// mcp__server__ (which may load the same tool name from several servers).
func (c *Catalog) selectLocked(list string) tool.Result {
	var hits []Hit
	var missing []string
	seen := map[string]bool{}
	for _, raw := range strings.Split(list, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		matched := false
		for _, d := range c.st.all {
			if _, deferred := c.st.deferred[d.Name]; !deferred {
				continue
			}
			_, short, _ := splitMCPName(d.Name)
			if d.Name == name || short == name {
				matched = true
				if !seen[d.Name] {
					seen[d.Name] = true
					hits = append(hits, Hit{Name: d.Name, Description: d.Description, NameMatch: true})
				}
			}
		}
		if !matched {
			missing = append(missing, name)
		}
	}
	if len(hits) == 0 {
		if len(missing) == 0 {
			return tool.ErrorResult("Error: select: needs tool names, e.g. select:mcp__github__create_issue.")
		}
		return tool.Result{
			Output:  "No tools named " + strings.Join(missing, ", ") + ". Try a keyword search instead.",
			Summary: "no matches",
		}
	}
	return c.found(hits, missing)
}

// found expands hits and formats the model text; callers hold c.mu.
func (c *Catalog) found(hits []Hit, missing []string) tool.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d matching tool(s):\n", len(hits))
	for _, h := range hits {
		c.expandLocked(h.Name)
		fmt.Fprintf(&b, "- **%s**: %s\n", h.Name, oneLine(h.Description, maxListedDescription))
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Not found: %s\n", strings.Join(missing, ", "))
	}
	b.WriteString("\nThese tools are now available for use.")
	unit := "tools"
	if len(hits) == 1 {
		unit = "tool"
	}
	return tool.Result{Output: b.String(), Summary: fmt.Sprintf("%d %s", len(hits), unit)}
}

// oneLine collapses whitespace and clips to n runes.
func oneLine(s string, n int) string {
	return clipRunes(strings.Join(strings.Fields(s), " "), n)
}

// firstRunes is s[:n] in runes, like the original's q[:80].
func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
