package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"turnstone/internal/mcp"
	"turnstone/internal/secrets"
	"turnstone/internal/ui/terminal"
)

// mcpServers collects the configured servers: the --mcp-config (or
// [mcp] config_path) JSON file, when given, replaces the [mcp.servers.*]
// tables. Tables are taken in name order (decoding loses the file's order);
// the JSON file keeps its own order.
func mcpServers(s *settings) ([]mcp.ServerConfig, error) {
	if s.mcpConfig != "" {
		return mcp.LoadJSONConfig(s.mcpConfig) // its errors name the file
	}
	names := make([]string, 0, len(s.file.MCP.Servers))
	for n := range s.file.MCP.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []mcp.ServerConfig
	for _, n := range names {
		c := s.file.MCP.Servers[n]
		out = append(out, mcp.ServerConfig{Name: n, Command: c.Command, Args: c.Args, Env: c.Env, Cwd: c.Cwd,
			Type: c.Type, URL: c.URL, Headers: c.Headers})
	}
	return out, nil
}

// startMCP connects every configured server (concurrently, bounded by the
// startup timeout) and reports each failure once on stderr.
func (a *app) startMCP(ctx context.Context) error {
	servers, err := mcpServers(a.set)
	if err != nil {
		return err
	}
	if len(servers) == 0 {
		return nil
	}
	opts := mcp.DefaultOptions()
	f := a.set.file.MCP
	if f.StartupTimeout > 0 {
		opts.StartupTimeout = seconds(f.StartupTimeout)
	}
	if f.CallTimeout > 0 {
		opts.CallTimeout = seconds(f.CallTimeout)
	}
	opts.RefreshInterval = a.set.mcpRefresh
	opts.Vision = func() bool { return a.caps().SupportsVision }
	opts.ClientVersion = version
	opts.Env = secrets.ScrubEnv(os.Environ())
	opts.Logf = func(format string, args ...any) {
		a.log("[mcp] " + strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
	}
	a.mcp = mcp.NewManager(servers, opts)
	for _, e := range a.mcp.Start(ctx) {
		fmt.Fprintln(os.Stderr, "turnstone:", e.Error())
	}
	return nil
}

// log reports a background event: through the REPL's UI once it runs
// (so it never tears a streamed line or the prompt), else on stderr.
func (a *app) log(msg string) {
	if fn := a.logSink.Load(); fn != nil {
		(*fn)(msg)
		return
	}
	fmt.Fprintln(os.Stderr, msg)
}

// setLog routes background events; nil restores stderr.
func (a *app) setLog(fn func(string)) {
	if fn == nil {
		a.logSink.Store(nil)
		return
	}
	a.logSink.Store(&fn)
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// mcpCommand is the REPL's /mcp [refresh [server]].
func (a *app) mcpCommand() terminal.Command {
	return terminal.Command{
		Name:  "mcp",
		Usage: "/mcp [refresh [server]]",
		Help:  "list MCP servers and tools; refresh re-fetches tool lists and reconnects dropped servers",
		Run: func(ctx context.Context, args string, out io.Writer) error {
			if a.mcp == nil {
				_, err := fmt.Fprintln(out, "No MCP servers configured.")
				return err
			}
			fields := strings.Fields(args)
			if len(fields) == 0 {
				_, err := fmt.Fprint(out, a.mcp.FormatList())
				return err
			}
			if fields[0] != "refresh" || len(fields) > 2 {
				return fmt.Errorf("usage: /mcp [refresh [server]]")
			}
			server := ""
			if len(fields) == 2 {
				server = fields[1]
			}
			// Refresh bounds itself by the configured start-up timeout.
			rep, err := a.mcp.Refresh(ctx, server)
			if err != nil {
				return fmt.Errorf("MCP refresh failed: %w", err)
			}
			_, err = fmt.Fprint(out, rep.Format())
			return err
		},
	}
}

func newMCPCmd(f *flags) *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "Inspect MCP servers"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Connect to the configured MCP servers and list their state and tools",
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
			if a.mcp == nil {
				fmt.Println("No MCP servers configured.")
				return nil
			}
			fmt.Print(a.mcp.FormatList())
			return nil
		},
	})
	return cmd
}
