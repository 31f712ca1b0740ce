package mcp

import (
	"context"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOlderListNeverOverwritesNewer holds the first tools/list in the
// server while a tools/list_changed refresh completes, then lets the old
// answer through: the newer list must stay (server-everything's race).
func TestOlderListNeverOverwritesNewer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "race", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "old", InputSchema: map[string]any{"type": "object"}}, noopHandler)
	firstArrived := make(chan struct{})
	release := make(chan struct{})
	var lists atomic.Int32
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "tools/list" || lists.Add(1) != 1 {
				return next(ctx, method, req)
			}
			res, err := next(ctx, method, req) // the list as it is now
			close(firstArrived)
			<-release
			return res, err
		}
	})
	opts := testOptions()
	opts.transport = func(ServerConfig, *tailBuffer) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	m := NewManager([]ServerConfig{{Name: "race", Command: "unused"}}, opts)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	started := make(chan []*ServerError)
	go func() { started <- m.Start(context.Background()) }()

	<-firstArrived
	srv.AddTool(&sdk.Tool{Name: "new", InputSchema: map[string]any{"type": "object"}}, noopHandler)
	s := m.byName["race"]
	eventually(t, "the pushed list to be applied", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.appliedSeq >= 2
	})
	close(release)
	if p := <-started; len(p) != 0 {
		t.Fatalf("problems: %s", problemText(p))
	}
	if !hasTool(m, "mcp__race__new") || !hasTool(m, "mcp__race__old") {
		t.Fatalf("the stale first list overwrote the newer one: %v", toolNames(m.Tools()))
	}
}

func noopHandler(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	return &sdk.CallToolResult{}, nil
}
