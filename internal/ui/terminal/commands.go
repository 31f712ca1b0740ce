package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"turnstone/internal/tool"
)

// errExit ends Run (/exit).
var errExit = errors.New("exit")

// builtin is a slash command of the REPL itself.
type builtin struct {
	names []string // first is the canonical name
	usage string
	help  string
	run   func(u *UI, ctx context.Context, sess Session, args string) error
}

func builtins() []builtin {
	return []builtin{
		{names: []string{"help"}, usage: "/help", help: "show this list", run: (*UI).cmdHelp},
		{names: []string{"exit", "quit", "q"}, usage: "/exit, /quit, /q", help: "leave (also Ctrl-D)", run: func(*UI, context.Context, Session, string) error { return errExit }},
		{names: []string{"clear"}, usage: "/clear", help: "forget the conversation so far", run: (*UI).cmdClear},
		{names: []string{"model"}, usage: "/model [name]", help: "show or switch the model", run: (*UI).cmdModel},
		{names: []string{"raw"}, usage: "/raw", help: "toggle the display of the model's reasoning", run: (*UI).cmdRaw},
		{names: []string{"debug"}, usage: "/debug", help: "toggle request summaries", run: (*UI).cmdDebug},
		{names: []string{"tools"}, usage: "/tools", help: "list the tools with their agent, task_agent and auto_approve flags", run: (*UI).cmdTools},
	}
}

// normName is a command name without "/" in lower case.
func normName(s string) string { return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "/")) }

// command runs one slash command line. Extra commands (opts.Commands)
// take precedence over built-ins of the same name.
func (u *UI) command(ctx context.Context, sess Session, line string) error {
	word, args, _ := strings.Cut(strings.TrimSpace(line), " ")
	name := normName(word)
	args = strings.TrimSpace(args)
	for _, c := range u.opts.Commands {
		if normName(c.Name) == name && c.Run != nil {
			err := u.interruptible(ctx, func(ctx context.Context) error {
				return c.Run(ctx, args, lockedWriter{u})
			})
			if err != nil && ctx.Err() == nil {
				u.println(tool.StyleRed, errorText(err.Error()))
			}
			return nil
		}
	}
	for _, b := range builtins() {
		for _, n := range b.names {
			if n == name {
				return b.run(u, ctx, sess, args)
			}
		}
	}
	u.println(tool.StylePlain, fmt.Sprintf("Unknown command: %s. Type /help for available commands.", word))
	return nil
}

// completions is the Tab completer: slash command names.
func (u *UI) completions(line string) []string {
	if !strings.HasPrefix(line, "/") || strings.ContainsAny(line, " \t") {
		return nil
	}
	prefix := strings.ToLower(line)
	var out []string
	add := func(name string) {
		c := "/" + name
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	for _, b := range builtins() {
		for _, n := range b.names {
			add(n)
		}
	}
	for _, c := range u.opts.Commands {
		add(normName(c.Name))
	}
	sort.Strings(out)
	return dedupe(out)
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// println prints whole lines under the lock.
func (u *UI) println(st tool.Style, s string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.line(st, s)
}

// lockedWriter lets extra commands print through the UI's lock.
type lockedWriter struct{ u *UI }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.u.mu.Lock()
	defer w.u.mu.Unlock()
	w.u.write(string(p))
	return len(p), nil
}

func (u *UI) cmdHelp(context.Context, Session, string) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Commands:")
	for _, c := range builtins() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.usage, c.help)
	}
	for _, c := range u.opts.Commands {
		usage := c.Usage
		if usage == "" {
			usage = "/" + normName(c.Name)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", usage, c.Help)
	}
	_ = tw.Flush()
	b.WriteString(`Input: a line """ starts a multi-line message, ended by a line """.` + "\n")
	b.WriteString("Keys: Ctrl-C clears the line or interrupts the answer, Ctrl-D exits, Tab completes commands.")
	u.println(tool.StylePlain, b.String())
	return nil
}

func (u *UI) cmdClear(_ context.Context, sess Session, _ string) error {
	sess.Clear()
	u.mu.Lock()
	u.usage = nil
	u.line(tool.StyleDim, "Conversation cleared.")
	u.mu.Unlock()
	return nil
}

func (u *UI) cmdModel(_ context.Context, sess Session, args string) error {
	if args == "" {
		u.println(tool.StylePlain, "Model: "+sess.Model())
		return nil
	}
	sess.SetModel(args)
	u.println(tool.StylePlain, "Model set to "+sess.Model())
	return nil
}

func (u *UI) cmdRaw(context.Context, Session, string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.showReasoning = !u.showReasoning
	u.line(tool.StyleDim, "Reasoning display "+onOff(u.showReasoning)+".")
	return nil
}

func (u *UI) cmdDebug(_ context.Context, sess Session, _ string) error {
	u.mu.Lock()
	u.debug = !u.debug
	on := u.debug
	u.mu.Unlock()
	sess.SetDebug(on)
	u.println(tool.StyleDim, "Debug mode "+onOff(on)+".")
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func (u *UI) cmdTools(context.Context, Session, string) error {
	if u.opts.ListTools == nil {
		u.println(tool.StylePlain, "No tool list available.")
		return nil
	}
	rows := u.opts.ListTools()
	if len(rows) == 0 {
		u.println(tool.StylePlain, "No tools.")
		return nil
	}
	u.println(tool.StylePlain, toolTable(rows))
	return nil
}

// toolTable renders rows as aligned columns; flags are "yes" or "-".
func toolTable(rows []ToolRow) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tAGENT\tTASK_AGENT\tAUTO_APPROVE\tSOURCE\tSTATE")
	flag := func(v bool) string {
		if v {
			return "yes"
		}
		return "-"
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, flag(r.Agent), flag(r.TaskAgent), flag(r.AutoApprove), dash(r.Source), dash(r.State))
	}
	_ = tw.Flush()
	n := fmt.Sprintf("%d tools", len(rows))
	if len(rows) == 1 {
		n = "1 tool"
	}
	return b.String() + n
}

var _ io.Writer = lockedWriter{}
