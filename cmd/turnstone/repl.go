package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"turnstone/internal/engine"
	"turnstone/internal/tool"
	"turnstone/internal/toolsearch"
	"turnstone/internal/ui/terminal"
)

// runREPL runs the interactive terminal session. The REPL installs its own
// Ctrl-C handling around each turn, so the context here is not tied to
// SIGINT (Ctrl-C interrupts a turn, never the program).
func runREPL(parent context.Context, s *settings) error {
	// SIGTERM and SIGHUP (a closed terminal) end the REPL so that the MCP
	// servers, each in its own process group, are shut down by a.close.
	ctx, stop := signal.NotifyContext(parent, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// Until the REPL takes over Ctrl-C, it aborts start-up.
	startCtx, stopStart := signal.NotifyContext(ctx, os.Interrupt)
	a, err := openApp(startCtx, s, true, true)
	interrupted := startCtx.Err() != nil && ctx.Err() == nil
	stopStart()
	if err != nil {
		return err
	}
	defer a.close()
	if interrupted {
		return errors.New("interrupted during start-up")
	}
	catalog := a.catalog()
	ui := terminal.New(terminal.Options{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Color:         terminal.ColorEnabled(os.Stdout),
		Spinner:       terminal.IsTerminal(os.Stderr),
		Model:         s.model,
		ContextWindow: s.contextWindow,
		Effort:        s.effort,
		Banner:        a.banner(),
		Commands:      a.replCommands(),
		ListTools:     func() []terminal.ToolRow { return toolRows(catalog, a.inner()) },
		HistoryFile:   historyFile(),
	})
	sess, err := a.session(ui, catalog)
	if err != nil {
		return err
	}
	// Background MCP events go through the UI's lock from now on.
	a.setLog(func(msg string) { ui.Emit(engine.InfoEvent{Message: msg}) })
	defer a.setLog(nil)
	return ui.Run(ctx, replSession{Session: sess, app: a})
}

// replSession keeps the app's notion of the current model (which tools
// such as read_file consult for vision) in step with /model.
type replSession struct {
	*engine.Session
	app *app
}

func (r replSession) SetModel(name string) {
	r.Session.SetModel(name)
	r.app.setModel(name)
}

// historyFile lives under $XDG_STATE_HOME/turnstone (default
// ~/.local/state/turnstone): line history is state, not configuration.
func historyFile() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "turnstone", "history")
}

// toolRows lists every tool with its metadata and visibility for /tools.
func toolRows(c *toolsearch.Catalog, inner tool.Catalog) []terminal.ToolRow {
	st := c.Status()
	state := map[string]string{}
	for _, n := range st.Visible {
		state[n] = "visible"
	}
	for _, n := range st.Deferred {
		state[n] = "deferred"
	}
	for _, n := range st.Expanded {
		state[n] = "expanded"
	}
	var rows []terminal.ToolRow
	add := func(name string) {
		t, ok := inner.Lookup(name)
		if !ok {
			t, ok = c.Lookup(name)
		}
		if !ok {
			return
		}
		sp := t.Spec()
		src := "built-in"
		if m, ok := t.(interface{ Server() string }); ok {
			src = "mcp:" + m.Server()
		} else if sp.Name == toolsearch.SearchToolName {
			src = "tool search"
		}
		rows = append(rows, terminal.ToolRow{Name: sp.Name, Agent: sp.Agent, TaskAgent: sp.TaskAgent, AutoApprove: sp.AutoApprove, Source: src, State: state[name]})
	}
	for _, d := range inner.Definitions() {
		add(d.Name)
	}
	if state["tool_search"] != "" {
		add("tool_search")
	}
	return rows
}
