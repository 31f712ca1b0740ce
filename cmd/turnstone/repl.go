package main

import (
	"context"
	"os"
	"path/filepath"

	"turnstone/internal/engine"
	"turnstone/internal/tool"
	"turnstone/internal/ui/terminal"
)

// runREPL runs the interactive terminal session. The REPL installs its own
// Ctrl-C handling around each turn, so the context here is not tied to
// SIGINT (Ctrl-C interrupts a turn, never the program).
func runREPL(ctx context.Context, s *settings) error {
	a, err := newApp(ctx, s, true)
	if err != nil {
		return err
	}
	defer a.close()
	catalog := a.catalog()
	ui := terminal.New(terminal.Options{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Color:         terminal.ColorEnabled(os.Stdout),
		Spinner:       terminal.IsTerminal(os.Stderr),
		Model:         s.model,
		ContextWindow: s.contextWindow,
		Banner:        a.banner(),
		Commands:      a.replCommands(),
		ListTools:     func() []terminal.ToolRow { return toolRows(catalog) },
		HistoryFile:   historyFile(),
	})
	sess, err := a.session(ui, catalog)
	if err != nil {
		return err
	}
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

// toolRows lists the offered tools with their metadata for /tools.
func toolRows(c tool.Catalog) []terminal.ToolRow {
	var rows []terminal.ToolRow
	for _, d := range c.Definitions() {
		t, ok := c.Lookup(d.Name)
		if !ok {
			continue
		}
		sp := t.Spec()
		rows = append(rows, terminal.ToolRow{Name: sp.Name, Agent: sp.Agent, TaskAgent: sp.TaskAgent, AutoApprove: sp.AutoApprove, Source: "built-in"})
	}
	return rows
}
