package tool

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"turnstone/internal/llm"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// Schemas is the embedded specification of the 15 built-in tools, in
// filename order (the order the tools are offered to the model). It is the
// source of BUILTIN_TOOL_NAMES and PRIMARY_KEY_MAP even for tools whose
// executor is not built in yet.
type Schemas struct {
	specs []Spec
	index map[string]int
}

// LoadSchemas parses the embedded schema files. It fails only if a file in
// the binary is malformed, which the tests rule out.
func LoadSchemas() (*Schemas, error) {
	entries, err := fs.ReadDir(schemaFS, "schemas")
	if err != nil {
		return nil, fmt.Errorf("read embedded tool schemas: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	s := &Schemas{index: map[string]int{}}
	for _, n := range names {
		b, err := schemaFS.ReadFile("schemas/" + n)
		if err != nil {
			return nil, fmt.Errorf("read tool schema %s: %w", n, err)
		}
		var sp Spec
		if err := json.Unmarshal(b, &sp); err != nil {
			return nil, fmt.Errorf("parse tool schema %s: %w", n, err)
		}
		if sp.Name+".json" != n {
			return nil, fmt.Errorf("tool schema %s names tool %q", n, sp.Name)
		}
		s.index[sp.Name] = len(s.specs)
		s.specs = append(s.specs, sp)
	}
	return s, nil
}

// MustLoadSchemas is LoadSchemas for wiring code and tests.
func MustLoadSchemas() *Schemas {
	s, err := LoadSchemas()
	if err != nil {
		panic(err)
	}
	return s
}

// Spec returns the embedded spec of a built-in tool.
func (s *Schemas) Spec(name string) (Spec, bool) {
	i, ok := s.index[name]
	if !ok {
		return Spec{}, false
	}
	return s.specs[i], true
}

// MustSpec returns the spec of a built-in tool; tool constructors use it.
func (s *Schemas) MustSpec(name string) Spec {
	sp, ok := s.Spec(name)
	if !ok {
		panic("tool: no embedded schema for " + name)
	}
	return sp
}

// All returns every built-in spec in filename order.
func (s *Schemas) All() []Spec { return slices.Clone(s.specs) }

// BuiltinNames is BUILTIN_TOOL_NAMES: all 15 built-in names.
func (s *Schemas) BuiltinNames() map[string]bool {
	m := make(map[string]bool, len(s.specs))
	for _, sp := range s.specs {
		m[sp.Name] = true
	}
	return m
}

// PrimaryKeys is PRIMARY_KEY_MAP.
func (s *Schemas) PrimaryKeys() map[string]string {
	m := make(map[string]string, len(s.specs))
	for _, sp := range s.specs {
		m[sp.Name] = sp.PrimaryKey
	}
	return m
}

// Registry holds the tools whose executors exist, in schema order, and
// derives the sets of behavior.md §0 from their metadata. It is immutable
// after construction and implements Catalog.
type Registry struct {
	tools []Tool
	index map[string]int
}

var _ Catalog = (*Registry)(nil)

// NewRegistry orders tools by name (= schema filename order) and rejects
// duplicates.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{index: map[string]int{}}
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b Tool) int { return strings.Compare(a.Spec().Name, b.Spec().Name) })
	for _, t := range sorted {
		name := t.Spec().Name
		if _, dup := r.index[name]; dup {
			return nil, fmt.Errorf("tool %q registered twice", name)
		}
		r.index[name] = len(r.tools)
		r.tools = append(r.tools, t)
	}
	return r, nil
}

// Tools is TOOLS: every registered tool in order.
func (r *Registry) Tools() []Tool { return slices.Clone(r.tools) }

// Lookup finds a registered tool.
func (r *Registry) Lookup(name string) (Tool, bool) {
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return r.tools[i], true
}

// Definitions offers every registered tool.
func (r *Registry) Definitions() []llm.ToolDef {
	out := make([]llm.ToolDef, len(r.tools))
	for i, t := range r.tools {
		out[i] = t.Spec().Def()
	}
	return out
}

func (r *Registry) filter(keep func(Spec) bool) []Tool {
	var out []Tool
	for _, t := range r.tools {
		if keep(t.Spec()) {
			out = append(out, t)
		}
	}
	return out
}

// AgentTools is AGENT_TOOLS: tools with agent: true (plan sub-agents).
func (r *Registry) AgentTools() []Tool { return r.filter(func(s Spec) bool { return s.Agent }) }

// TaskAgentTools is TASK_AGENT_TOOLS: tools with task_agent: true.
func (r *Registry) TaskAgentTools() []Tool {
	return r.filter(func(s Spec) bool { return s.TaskAgent })
}

// AutoTools is AGENT_AUTO_TOOLS (= TASK_AUTO_TOOLS): names with
// auto_approve: true, which sub-agents run without asking.
func (r *Registry) AutoTools() map[string]bool {
	m := map[string]bool{}
	for _, t := range r.filter(func(s Spec) bool { return s.AutoApprove }) {
		m[t.Spec().Name] = true
	}
	return m
}
