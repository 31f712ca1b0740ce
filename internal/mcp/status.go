package mcp

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ServerStatus is one server's state for /mcp and `turnstone mcp list`.
type ServerStatus struct {
	Name      string
	State     State
	Err       string // why it failed or dropped; empty when connected
	Tools     int    // tools currently offered
	Transport string // stdio, http or sse
	// ListChanged: the server pushes tools/list_changed.
	ListChanged bool
}

// Servers returns the state of every configured server, in config order.
func (m *Manager) Servers() []ServerStatus {
	snap := m.snap.Load()
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := ServerStatus{
			Name:        s.cfg.Name,
			State:       s.state,
			Err:         s.lastErr,
			Transport:   s.cfg.Transport(),
			ListChanged: s.listChanged,
		}
		if s.state == StateConnected {
			st.Tools = len(snap.names[s])
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// listDescLimit bounds a description in the /mcp listing (one line).
const listDescLimit = 100

// FormatList renders the MCP tools and the server states as plain text:
//
//	MCP tools (2):
//	  mcp__github__search_repos  [MCP: github] Search GitHub repositories
//	  mcp__github__create_issue  [MCP: github] Create a GitHub issue
//	MCP servers (2):
//	  github    connected (stdio, 2 tools)
//	  postgres  failed: connect: ...
func (m *Manager) FormatList() string {
	if m == nil || len(m.servers) == 0 {
		return "No MCP servers configured."
	}
	tools := m.Tools()
	var b strings.Builder
	fmt.Fprintf(&b, "MCP tools (%d):", len(tools))
	width := 0
	for _, t := range tools {
		width = max(width, len(t.Spec().Name))
	}
	for _, t := range tools {
		sp := t.Spec()
		fmt.Fprintf(&b, "\n  %-*s  %s", width, sp.Name, oneLine(sp.Description, listDescLimit))
	}
	if len(tools) == 0 {
		b.WriteString("\n  (none available)")
	}
	servers := m.Servers()
	fmt.Fprintf(&b, "\nMCP servers (%d):", len(servers))
	width = 0
	for _, s := range servers {
		width = max(width, len(s.Name))
	}
	for _, s := range servers {
		fmt.Fprintf(&b, "\n  %-*s  %s", width, s.Name, s.describe())
	}
	return b.String()
}

func (s ServerStatus) describe() string {
	switch s.State {
	case StateConnected:
		unit := "tools"
		if s.Tools == 1 {
			unit = "tool"
		}
		return fmt.Sprintf("connected (%s, %d %s)", s.Transport, s.Tools, unit)
	case StateConnecting:
		return fmt.Sprintf("connecting (%s)", s.Transport)
	case StateDisconnected:
		return "disconnected, reconnecting: " + oneLine(s.Err, 200)
	}
	return "failed: " + oneLine(s.Err, 200)
}

// oneLine keeps the first line of s, cut to limit runes.
func oneLine(s string, limit int) string {
	line, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	if utf8.RuneCountInString(line) > limit {
		line = string([]rune(line)[:limit-1]) + "…"
	} else if more {
		line += " …"
	}
	return line
}

// Summary is the banner line: "2 MCP servers, 17 tools" plus how many
// are not connected. It is empty when no servers are configured.
func (m *Manager) Summary() string {
	if m == nil || len(m.servers) == 0 {
		return ""
	}
	up, down := 0, 0
	for _, s := range m.Servers() {
		if s.State == StateConnected {
			up++
		} else {
			down++
		}
	}
	n := len(m.Tools())
	out := fmt.Sprintf("MCP: %d of %d servers connected, %d tools", up, up+down, n)
	return out
}
