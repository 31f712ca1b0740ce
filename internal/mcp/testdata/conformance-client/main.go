// Command conformance-client drives internal/mcp's Manager the way
// `turnstone mcp list` and `turnstone tools run mcp__…` do, for the MCP
// conformance suite in client mode (bench/mcp/conformance.sh). The suite
// appends the server URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"turnstone/internal/mcp"
	"turnstone/internal/tool"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client SERVER_URL")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	opts := mcp.DefaultOptions()
	opts.StartupTimeout = 20 * time.Second
	opts.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	m := mcp.NewManager([]mcp.ServerConfig{{Name: "conf", Type: "http", URL: url}}, opts)
	defer m.Close(context.Background())
	for _, p := range m.Start(context.Background()) {
		fmt.Fprintln(os.Stderr, p.Error())
		os.Exit(1)
	}
	fmt.Println(m.FormatList())
	var name string
	var args tool.Args
	switch scenario {
	case "tools_call":
		name, args = "mcp__conf__add_numbers", tool.Args{"a": 5, "b": 3}
	case "sse-retry":
		name, args = "mcp__conf__test_reconnection", tool.Args{}
	default:
		return // initialize and others: connecting and listing is the test
	}
	t, ok := m.Lookup(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "tool %s not offered\n", name)
		os.Exit(1)
	}
	res := t.Prepare(context.Background(), tool.Call{Name: name, Args: args}).Run(context.Background(), nil)
	fmt.Println(res.Output)
	if res.IsError {
		os.Exit(1)
	}
}
