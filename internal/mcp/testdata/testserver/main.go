// Command testserver is a small MCP server over stdio used by the tests and
// benchmarks of internal/mcp. Flags shape its behaviour:
//
//	-tools N        also offer N filler tools (tool_000 ...)
//	-pagesize N     tools/list page size (default 1000)
//	-sleep-init D   wait D before serving (a slow initialize)
//	-fail-init      print to stderr and exit 2 before serving
//	-no-list-changed  do not declare tools.listChanged
//	-marker FILE    append one line to FILE per start (counts restarts)
//
// Tools: echo, noop, add_tool, remove_tool, crash, sleep, image, audio,
// structured, resource_link, resource, fail, env.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tinyPNG is a 1x1 transparent PNG.
var tinyPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

func main() {
	fillers := flag.Int("tools", 0, "number of filler tools")
	pageSize := flag.Int("pagesize", 0, "tools/list page size")
	sleepInit := flag.Duration("sleep-init", 0, "delay before serving")
	failInit := flag.Bool("fail-init", false, "exit before serving")
	noListChanged := flag.Bool("no-list-changed", false, "do not declare tools.listChanged")
	marker := flag.String("marker", "", "file to append a line to on every start")
	flag.Parse()

	if *marker != "" {
		f, err := os.OpenFile(*marker, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if *failInit {
		fmt.Fprintln(os.Stderr, "testserver: cannot open database /nonexistent/db: no such file")
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, "testserver: starting (this line goes to stderr)")
	if *sleepInit > 0 {
		time.Sleep(*sleepInit)
	}

	opts := &mcp.ServerOptions{PageSize: *pageSize}
	if *noListChanged {
		opts.Capabilities = &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: false}}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, opts)
	addTools(srv)
	for i := range *fillers {
		name := fmt.Sprintf("tool_%03d", i)
		srv.AddTool(&mcp.Tool{Name: name, Description: "Filler tool " + name, InputSchema: objectSchema(nil)}, textTool(name))
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("testserver: %v", err)
	}
}

func objectSchema(props map[string]any) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	return map[string]any{"type": "object", "properties": props}
}

func stringProp(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

func textTool(text string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}

func args(req *mcp.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

func addTools(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echoes back the input", InputSchema: objectSchema(map[string]any{"message": stringProp("Message to echo")})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Echo: %v", args(req)["message"])}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "noop", Description: "Does nothing", InputSchema: objectSchema(nil)}, textTool("ok"))
	srv.AddTool(&mcp.Tool{Name: "add_tool", Description: "Adds a tool with the given name", InputSchema: objectSchema(map[string]any{"name": stringProp("tool name")})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, _ := args(req)["name"].(string)
			srv.AddTool(&mcp.Tool{Name: name, Description: "Added on demand", InputSchema: objectSchema(nil)}, textTool("I am "+name))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + name}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "remove_tool", Description: "Removes a tool", InputSchema: objectSchema(map[string]any{"name": stringProp("tool name")})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, _ := args(req)["name"].(string)
			srv.RemoveTools(name)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "removed " + name}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "crash", Description: "Exits the server process", InputSchema: objectSchema(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "testserver: crashing on request")
			os.Exit(3)
			return nil, nil
		})
	srv.AddTool(&mcp.Tool{Name: "sleep", Description: "Sleeps for the given seconds", InputSchema: objectSchema(map[string]any{"seconds": map[string]any{"type": "number"}})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			secs, _ := args(req)["seconds"].(float64)
			select {
			case <-time.After(time.Duration(secs * float64(time.Second))):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	srv.AddTool(&mcp.Tool{Name: "image", Description: "Returns an image between two texts", InputSchema: objectSchema(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "before"},
				&mcp.ImageContent{MIMEType: "image/png", Data: tinyPNG},
				&mcp.TextContent{Text: "after"},
			}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "audio", Description: "Returns audio", InputSchema: objectSchema(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF1234")}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "structured", Description: "Returns only structured content", InputSchema: objectSchema(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"temperature": 21.5, "unit": "C"}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "resource_link", Description: "Returns a resource link", InputSchema: objectSchema(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			size := int64(42)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///tmp/report.txt", Name: "report", MIMEType: "text/plain", Size: &size}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "resource", Description: "Returns embedded resources", InputSchema: objectSchema(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "remember the milk"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://blob", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
			}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fail", Description: "Returns an error result", InputSchema: objectSchema(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the database is locked"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "env", Description: "Returns an environment variable", InputSchema: objectSchema(map[string]any{"name": stringProp("variable")})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, _ := args(req)["name"].(string)
			wd, _ := os.Getwd()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + "=" + os.Getenv(name) + " cwd=" + wd}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "odd.name with spaces", Description: "A tool whose name needs sanitizing", InputSchema: objectSchema(nil)}, textTool("odd"))
}
