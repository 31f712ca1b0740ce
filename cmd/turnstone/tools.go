package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"turnstone/internal/engine"
	"turnstone/internal/tool"
)

func newToolsCmd(f *flags) *cobra.Command {
	tools := &cobra.Command{
		Use:   "tools",
		Short: "List the tools a session offers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := resolve(cmd, f)
			if err != nil {
				return err
			}
			a, err := openApp(cmd.Context(), s, false, true)
			if err != nil {
				return err
			}
			defer a.close()
			printTools(a.inner())
			return nil
		},
	}
	run := &cobra.Command{
		Use:   "run NAME [JSON]",
		Short: "Run one tool call (approved) and print exactly what the model would receive",
		Long: `Runs one tool call through the same prepare and execute phases as a conversation, approved,
and prints the result text the model would receive. Exits 1 when the result is an error.
The arguments are the model's raw argument text: a JSON object, or a bare string for the
tool's primary key.`,
		Example: `  turnstone tools run bash '{"command":"ls -la"}'
  turnstone tools run read_file README.md`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := resolve(cmd, f)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			// MCP servers start only when the call needs them.
			needMCP := strings.HasPrefix(args[0], "mcp__") || args[0] == "tool_search"
			// web_fetch asks the session's model, so it needs a model name.
			a, err := openApp(ctx, s, args[0] == "web_fetch", needMCP)
			if err != nil {
				return err
			}
			defer a.close()
			sess, err := a.session(engine.NullUI{}, a.catalog())
			if err != nil {
				return err
			}
			raw := ""
			if len(args) == 2 {
				raw = args[1]
			}
			res := sess.Call(ctx, args[0], raw)
			fmt.Print(res.Output)
			if !strings.HasSuffix(res.Output, "\n") {
				fmt.Println()
			}
			if res.IsError {
				return exitError{code: 1}
			}
			return nil
		},
	}
	tools.AddCommand(run)
	return tools
}

// printTools lists tools with the metadata flags of the tools reference.
func printTools(c tool.Catalog) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tAGENT\tTASK_AGENT\tAUTO_APPROVE\tDESCRIPTION")
	specs := make([]tool.Spec, 0)
	for _, d := range c.Definitions() {
		if t, ok := c.Lookup(d.Name); ok {
			specs = append(specs, t.Spec())
		}
	}
	for _, sp := range specs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", sp.Name, yesNo(sp.Agent), yesNo(sp.TaskAgent), yesNo(sp.AutoApprove), firstSentence(sp.Description))
	}
	_ = w.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
