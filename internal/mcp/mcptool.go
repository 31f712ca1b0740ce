package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"turnstone/internal/tool"
)

// emptySchema is the parameters of a tool without an input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// previewValueLimit is how much of each argument the approval preview shows.
const previewValueLimit = 200

// mcpTool is one tool of one server as a tool.Tool.
type mcpTool struct {
	srv      *server
	original string // the server's name for the tool, used for tools/call
	spec     tool.Spec
}

var _ tool.Tool = (*mcpTool)(nil)

func newMCPTool(srv *server, name string, t *sdk.Tool) *mcpTool {
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	return &mcpTool{
		srv:      srv,
		original: t.Name,
		spec: tool.Spec{
			Name:        name,
			Description: strings.TrimSpace("[MCP: " + srv.cfg.Name + "] " + desc),
			Parameters:  convertSchema(t.InputSchema),
		},
	}
}

// convertSchema passes an input schema through, replacing a missing or
// non-object one with the empty object schema and adding the empty
// "properties" some providers insist on.
func convertSchema(in any) json.RawMessage {
	if in == nil {
		return emptySchema
	}
	b, err := json.Marshal(in)
	if err != nil {
		return emptySchema
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
		return emptySchema
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if m["type"] == "object" {
		if _, ok := m["properties"]; !ok {
			m["properties"] = map[string]any{}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return emptySchema
	}
	return out
}

// Spec is the model-facing definition; MCP tools always need approval.
func (t *mcpTool) Spec() tool.Spec { return t.spec }

// Server is the configured name of the tool's server.
func (t *mcpTool) Server() string { return t.srv.cfg.Name }

// OriginalName is the tool's name on its server.
func (t *mcpTool) OriginalName() string { return t.original }

// Prepare describes the call; it has no side effects.
func (t *mcpTool) Prepare(_ context.Context, call tool.Call) *tool.Prepared {
	header := fmt.Sprintf("⚙ mcp:%s/%s", t.srv.cfg.Name, t.original)
	args := map[string]any(call.Args)
	if args == nil {
		args = map[string]any{}
	}
	return &tool.Prepared{
		Header:        header,
		Preview:       previewArgs(args),
		NeedsApproval: true,
		ApprovalLabel: "mcp_tool",
		Run: func(ctx context.Context, _ tool.Emit) tool.Result {
			return t.run(ctx, args)
		},
	}
}

// previewArgs shows one dim line per argument, in key order.
func previewArgs(args map[string]any) tool.Preview {
	if len(args) == 0 {
		return tool.Preview{{Style: tool.StyleDim, Text: "    (no arguments)"}}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p := make(tool.Preview, 0, len(keys))
	for _, k := range keys {
		p = append(p, tool.Line{Style: tool.StyleDim, Text: "    " + k + ": " + previewValue(args[k])})
	}
	return p
}

func previewValue(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			s = fmt.Sprint(v)
		} else {
			s = strings.TrimSpace(buf.String())
		}
	}
	s = strings.ReplaceAll(s, "\n", "\\n")
	if utf8.RuneCountInString(s) > previewValueLimit {
		r := []rune(s)
		s = string(r[:previewValueLimit]) + "..."
	}
	return s
}

// run performs tools/call with the call timeout. A cancelled ctx (Ctrl-C)
// or the timeout cancels the request; the SDK then sends
// notifications/cancelled to the server.
func (t *mcpTool) run(ctx context.Context, args map[string]any) tool.Result {
	srv := t.srv
	m := srv.m
	sess := srv.session()
	if sess == nil {
		return tool.ErrorResult(srv.unavailableMessage(t.original))
	}
	timeout := m.opts.CallTimeout
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: t.original, Arguments: args})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.ErrorResult(fmt.Sprintf("Error: MCP tool %s on server %s was cancelled.", t.original, srv.cfg.Name))
		case cctx.Err() != nil:
			return tool.ErrorResult(fmt.Sprintf("Error: MCP tool %s on server %s timed out after %s. The request was cancelled; the tool may be slow or stuck.", t.original, srv.cfg.Name, fmtSeconds(timeout)))
		case connectionLost(err) || srv.session() != sess:
			srv.noteDropped(sess, err)
			return tool.ErrorResult(fmt.Sprintf("Error: MCP server %s disconnected during the call to %s (%v). turnstone is reconnecting it in the background; try again shortly, or run /mcp refresh %s.", srv.cfg.Name, t.original, err, srv.cfg.Name))
		}
		return tool.ErrorResult(fmt.Sprintf("Error: MCP tool %s on server %s failed: %v", t.original, srv.cfg.Name, err))
	}
	return convertResult(res, m.opts.Vision != nil && m.opts.Vision())
}

// codeRejected is the SDK's JSON-RPC code for a message the transport
// could not deliver (an HTTP server that went away).
const codeRejected = -32005

// connectionLost reports whether err means the session is gone: the
// connection closed, the stream ended, or the transport could not deliver.
func connectionLost(err error) bool {
	var werr *jsonrpc.Error
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &werr) && werr.Code == codeRejected
}

// fmtSeconds prints a duration as whole or fractional seconds ("60s", "0.5s").
func fmtSeconds(d time.Duration) string {
	s := d.Seconds()
	if s == float64(int64(s)) {
		return fmt.Sprintf("%ds", int64(s))
	}
	return fmt.Sprintf("%gs", s)
}
