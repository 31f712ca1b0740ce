package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateDuration is how long closing a stdio server waits for it to exit
// after its stdin is closed before it is signalled. The SDK default of 5 s
// makes every shutdown slow with servers that ignore EOF (server-everything).
const terminateDuration = 500 * time.Millisecond

// stderrTailBytes bounds the stderr kept per stdio server.
const stderrTailBytes = 8 << 10

// tailBuffer keeps the last max bytes written to it. A stdio server's stderr
// goes here instead of the terminal, so it cannot scribble over the REPL,
// and its tail explains a failure.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Tail returns at most n of the last lines, trimmed.
func (t *tailBuffer) Tail(n int) string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Reset forgets earlier output (a new process starts).
func (t *tailBuffer) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// newTransport builds the SDK transport for a server. For stdio it also
// returns the started-process hook used to clean up its process group.
func newTransport(cfg ServerConfig, baseEnv []string, stderr *tailBuffer) (sdk.Transport, error) {
	switch cfg.Transport() {
	case TransportHTTP:
		return &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(cfg.Headers)}, nil
	case TransportSSE:
		return &sdk.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(cfg.Headers)}, nil
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Cwd
	if baseEnv == nil {
		baseEnv = os.Environ()
	}
	cmd.Env = childEnv(baseEnv, cfg.Env)
	cmd.Stderr = stderr
	// A grandchild (npx → node) can hold the stderr pipe open after the
	// child exits; do not let that stall Wait.
	cmd.WaitDelay = time.Second
	isolateProcess(cmd)
	return &stdioTransport{inner: &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateDuration}, cmd: cmd}, nil
}

// childEnv is the parent environment with the configured variables laid
// over it, in a stable order.
func childEnv(parent []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return parent
	}
	out := make([]string, 0, len(parent)+len(extra))
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; !over {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// stdioTransport wraps the SDK's CommandTransport so that closing the
// connection also ends the server's whole process group (npx starts node
// as a grandchild, which SIGTERM to npx alone may leave behind).
type stdioTransport struct {
	inner *sdk.CommandTransport
	cmd   *exec.Cmd
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", t.cmd.Path, err)
	}
	return &stdioConn{Connection: conn, cmd: t.cmd}, nil
}

type stdioConn struct {
	sdk.Connection
	cmd *exec.Cmd
}

func (c *stdioConn) Close() error {
	err := c.Connection.Close()
	killGroup(c.cmd)
	return err
}

// headerTransport adds configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.base.RoundTrip(req)
}

func httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: headers}}
}
