package mcp

import (
	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// Catalog merges the built-in registry with the Manager's live MCP tools:
// built-ins first, then MCP tools in config order. It reads the Manager's
// snapshot on every call, so a refresh is visible on the next request
// without any change in the engine.
type Catalog struct {
	builtin *tool.Registry
	m       *Manager
}

var _ tool.Catalog = (*Catalog)(nil)

// NewCatalog returns the merged catalog. Either argument may be nil.
func NewCatalog(builtin *tool.Registry, m *Manager) *Catalog {
	return &Catalog{builtin: builtin, m: m}
}

// Tools returns every tool, built-ins first.
func (c *Catalog) Tools() []tool.Tool {
	var out []tool.Tool
	if c.builtin != nil {
		out = append(out, c.builtin.Tools()...)
	}
	if c.m != nil {
		out = append(out, c.m.Tools()...)
	}
	return out
}

// Definitions offers every tool, built-ins first.
func (c *Catalog) Definitions() []llm.ToolDef {
	tools := c.Tools()
	out := make([]llm.ToolDef, len(tools))
	for i, t := range tools {
		out[i] = t.Spec().Def()
	}
	return out
}

// Lookup finds a built-in tool, then an MCP tool.
func (c *Catalog) Lookup(name string) (tool.Tool, bool) {
	if c.builtin != nil {
		if t, ok := c.builtin.Lookup(name); ok {
			return t, true
		}
	}
	if c.m != nil {
		return c.m.Lookup(name)
	}
	return nil, false
}

// Version changes whenever the MCP tool list changes (the built-ins are
// fixed), so a tool-search index knows when to rebuild.
func (c *Catalog) Version() uint64 {
	if c.m == nil {
		return 0
	}
	return c.m.Version()
}
