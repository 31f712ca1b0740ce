package mcp

import (
	"context"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"turnstone/internal/tool"
)

// benchCalls is the size of one round of the overhead comparison.
const benchCalls = 1000

// BenchmarkCallOverhead makes 1,000 sequential calls of a trivial tool over
// stdio through the Manager (Lookup, Prepare, Run, result conversion) and
// 1,000 through a bare SDK session to the same server, and reports the
// ratio of the two (the goal is at most 1.1).
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	m := NewManager([]ServerConfig{stdioServer("bench")}, testOptions())
	defer m.Close(ctx)
	if p := m.Start(ctx); len(p) != 0 {
		b.Fatal(problemText(p))
	}
	noop, ok := m.Lookup("mcp__bench__noop")
	if !ok {
		b.Fatal("noop missing")
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(testServerBin), TerminateDuration: terminateDuration}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()

	viaManager := func() time.Duration {
		start := time.Now()
		for range benchCalls {
			p := noop.Prepare(ctx, tool.Call{Name: "mcp__bench__noop", Args: tool.Args{}})
			if res := p.Run(ctx, nil); res.IsError || res.Output != "ok" {
				b.Fatalf("manager call: %+v", res)
			}
		}
		return time.Since(start)
	}
	viaSDK := func() time.Duration {
		start := time.Now()
		for range benchCalls {
			res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "noop", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				b.Fatalf("sdk call: %v", err)
			}
		}
		return time.Since(start)
	}
	viaManager() // warm up both paths
	viaSDK()
	b.ResetTimer()
	var mgr, bare time.Duration
	for i := range b.N {
		// Alternate the order so drift hits both sides alike.
		if i%2 == 0 {
			mgr += viaManager()
			bare += viaSDK()
		} else {
			bare += viaSDK()
			mgr += viaManager()
		}
	}
	b.StopTimer()
	ratio := float64(mgr) / float64(bare)
	b.ReportMetric(float64(mgr.Microseconds())/float64(b.N*benchCalls), "µs/call-manager")
	b.ReportMetric(float64(bare.Microseconds())/float64(b.N*benchCalls), "µs/call-sdk")
	b.ReportMetric(ratio, "ratio")
	b.Logf("%d calls: manager %v, bare SDK %v, ratio %.3f", b.N*benchCalls, mgr, bare, ratio)
}

// BenchmarkParallelStartup starts 5 servers that each take 1 s before
// answering initialize; connecting concurrently should take about 1 s.
func BenchmarkParallelStartup(b *testing.B) {
	var servers []ServerConfig
	for _, n := range []string{"s1", "s2", "s3", "s4", "s5"} {
		servers = append(servers, stdioServer(n, "-sleep-init", "1s"))
	}
	var total time.Duration
	for range b.N {
		m := NewManager(servers, testOptions())
		start := time.Now()
		if p := m.Start(context.Background()); len(p) != 0 {
			b.Fatal(problemText(p))
		}
		total += time.Since(start)
		if n := len(m.Tools()); n != 5*14 {
			b.Fatalf("tools = %d", n)
		}
		_ = m.Close(context.Background())
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/startup")
	b.Logf("5 servers x 1 s initialize: %.2f s per startup", total.Seconds()/float64(b.N))
}
