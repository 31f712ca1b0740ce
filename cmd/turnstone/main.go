// Command turnstone is a self-hosted harness for tool-using AI agents: an
// interactive REPL, a headless mode for scripts, and direct tool runs.
// This package only parses flags and wires concrete types together.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries an exit code out of a command without printing twice.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "turnstone:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	f := &flags{}
	root := &cobra.Command{
		Use:   "turnstone",
		Short: "A harness for tool-using AI agents",
		Long: `turnstone gives a model real tools (shell, files, search, and MCP servers) and drives the
conversation, asking you before anything with side effects runs.

  turnstone                      interactive REPL
  turnstone -p "PROMPT"          headless run (approves every tool call)
  turnstone tools                list tools;  turnstone tools run NAME JSON  runs one
  turnstone mcp list             list MCP servers and their tools`,
		Version:       version,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMain(cmd, f)
		},
	}
	root.SetVersionTemplate("turnstone {{.Version}}\n")
	f.register(root)
	root.AddCommand(newToolsCmd(f), newMCPCmd(f))
	return root
}
