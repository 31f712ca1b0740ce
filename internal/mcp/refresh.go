package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// ServerRefresh is the outcome of refreshing one server.
type ServerRefresh struct {
	Server string
	// Added and Removed are exposed tool names, sorted.
	Added, Removed []string
	// Reconnected: the server was not connected and now is.
	Reconnected bool
	Err         error
}

// RefreshReport is the outcome of a manual refresh.
type RefreshReport struct {
	Servers []ServerRefresh // sorted by server name
}

// Format renders the report as plain text (no ANSI), as tools.md shows:
//
//	MCP refresh complete:
//	  github: +1 added
//	    + mcp__github__create_pr
//	  postgres: no changes
func (r RefreshReport) Format() string {
	if len(r.Servers) == 0 {
		return "MCP refresh complete: no servers to refresh."
	}
	var b strings.Builder
	b.WriteString("MCP refresh complete:")
	for _, s := range r.Servers {
		b.WriteString("\n  " + s.Server + ": ")
		if s.Err != nil {
			msg := strings.ReplaceAll(s.Err.Error(), "\n", "\n    ")
			b.WriteString("failed: " + msg)
			continue
		}
		var parts []string
		if s.Reconnected {
			parts = append(parts, "reconnected")
		}
		if n := len(s.Added); n > 0 {
			parts = append(parts, fmt.Sprintf("+%d added", n))
		}
		if n := len(s.Removed); n > 0 {
			parts = append(parts, fmt.Sprintf("-%d removed", n))
		}
		if len(s.Added) == 0 && len(s.Removed) == 0 {
			parts = append(parts, "no changes")
		}
		b.WriteString(strings.Join(parts, ", "))
		for _, n := range s.Added {
			b.WriteString("\n    + " + n)
		}
		for _, n := range s.Removed {
			b.WriteString("\n    - " + n)
		}
	}
	return b.String()
}

// Refresh re-fetches the tools of one server (name) or of all servers
// (name ""), and reconnects servers that are disconnected or failed. Servers
// are refreshed concurrently; ctx bounds the whole refresh (StartupTimeout
// when ctx has no deadline). An unknown name is an error.
func (m *Manager) Refresh(ctx context.Context, name string) (RefreshReport, error) {
	targets := m.servers
	if name != "" {
		s, ok := m.byName[name]
		if !ok {
			return RefreshReport{}, &UnknownServerError{Name: name, Known: m.knownServers()}
		}
		targets = []*server{s}
	}
	if !m.started.Load() {
		return RefreshReport{}, errors.New("MCP servers are not started yet")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.opts.StartupTimeout)
		defer cancel()
	}
	out := make([]ServerRefresh, len(targets))
	var wg sync.WaitGroup
	for i, s := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = m.refreshServer(ctx, s)
		}()
	}
	wg.Wait()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return RefreshReport{Servers: out}, nil
}

// UnknownServerError is returned for a server name that is not configured.
type UnknownServerError struct {
	Name  string
	Known string // comma-separated, or "(none)"
}

func (e *UnknownServerError) Error() string {
	return "Unknown MCP server: " + e.Name + ". Known servers: " + e.Known
}

func (m *Manager) knownServers() string {
	if len(m.servers) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(m.servers))
	for _, s := range m.servers {
		names = append(names, s.cfg.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (m *Manager) refreshServer(ctx context.Context, s *server) ServerRefresh {
	r := ServerRefresh{Server: s.cfg.Name}
	if s.configErr != nil {
		r.Err = s.configErr
		return r
	}
	if m.ctx.Err() != nil {
		r.Err = fmt.Errorf("MCP manager is closed")
		return r
	}
	before := m.snap.Load()
	oldNames := s.toolNames()
	if s.session() == nil {
		if err := s.requestConnect(ctx); err != nil {
			r.Err = err
			return r
		}
		r.Reconnected = true
	} else if err := s.refreshList(ctx); err != nil {
		r.Err = err
		return r
	}
	after := m.snap.Load()
	r.Added, r.Removed = diffNames(oldNames, s.toolNames(), before.exposed[s], after.exposed[s], s.cfg.Name)
	return r
}

// diffNames compares two lists of original names and returns the exposed
// names of the added and removed tools, sorted.
func diffNames(old, cur []string, oldExp, curExp map[string]string, server string) (added, removed []string) {
	inOld := map[string]bool{}
	for _, n := range old {
		inOld[n] = true
	}
	inCur := map[string]bool{}
	for _, n := range cur {
		inCur[n] = true
	}
	exposed := func(m map[string]string, n string) string {
		if e, ok := m[n]; ok {
			return e
		}
		return exposedName(server, n, 0)
	}
	for _, n := range cur {
		if !inOld[n] {
			added = append(added, exposed(curExp, n))
		}
	}
	for _, n := range old {
		if !inCur[n] {
			removed = append(removed, exposed(oldExp, n))
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed
}
