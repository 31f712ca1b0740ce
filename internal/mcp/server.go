package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is a server's connection state as /mcp shows it.
type State string

const (
	// StateConnecting: the first connection (or a reconnection) is under way.
	StateConnecting State = "connecting"
	// StateConnected: the session is up and its tools are offered.
	StateConnected State = "connected"
	// StateDisconnected: the server was connected and dropped (exited,
	// crashed, lost its connection); it is reconnected with backoff.
	StateDisconnected State = "disconnected"
	// StateFailed: the server never connected, or its configuration is
	// invalid. Only a manual refresh retries it.
	StateFailed State = "failed"
)

// stableAfter is how long a session must have lived for the reconnect
// backoff to start over at its minimum.
const stableAfter = 30 * time.Second

// server is one configured server and its connection.
type server struct {
	m         *Manager
	cfg       ServerConfig
	configErr error
	stderr    *tailBuffer
	// wake carries manual connect requests to the supervisor.
	wake chan chan error
	// firstDone is closed when the first connection attempt has ended.
	firstDone chan struct{}

	mu            sync.Mutex
	state         State
	lastErr       string
	sess          *sdk.ClientSession
	tools         []*sdk.Tool // last list applied; kept while disconnected
	listChanged   bool
	everConnected bool
	closed        bool
	listSeq       uint64 // last list request issued
	appliedSeq    uint64 // list request whose result is in tools
	debounce      *time.Timer
	dropErr       error // why a call or refresh gave the session up
	lateReport    bool  // Start already returned: report the first outcome via Logf
}

func newServer(m *Manager, cfg ServerConfig, configErr error) *server {
	s := &server{
		m:         m,
		cfg:       cfg,
		configErr: configErr,
		stderr:    newTailBuffer(stderrTailBytes),
		wake:      make(chan chan error),
		firstDone: make(chan struct{}),
		state:     StateConnecting,
	}
	if configErr != nil {
		s.state = StateFailed
		s.lastErr = configErr.Error()
		close(s.firstDone)
	}
	return s
}

// session returns the live session, or nil.
func (s *server) session() *sdk.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnected {
		return nil
	}
	return s.sess
}

// supervise connects the server and keeps it connected until the Manager
// closes: after a drop it reconnects with exponential backoff; after a
// failure to connect at all it waits for a manual refresh.
func (s *server) supervise(ctx context.Context) {
	defer s.m.wg.Done()
	backoff := s.m.opts.ReconnectMin
	auto := false
	var waiters []chan error
	first := true
	for {
		err := s.attempt(ctx)
		if err != nil && ctx.Err() == nil {
			// Record the failure before anyone waiting is told about it.
			s.setFailure(err, auto)
		}
		for _, w := range waiters {
			w <- err
		}
		waiters = nil
		if first {
			first = false
			close(s.firstDone)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			start := time.Now()
			if !s.serveConnected(ctx, &waiters) {
				return
			}
			auto = true
			if time.Since(start) > stableAfter {
				backoff = s.m.opts.ReconnectMin
			}
		}
		var timer *time.Timer
		var tick <-chan time.Time
		if auto {
			timer = time.NewTimer(backoff)
			tick = timer.C
			backoff = min(backoff*2, s.m.opts.ReconnectMax)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case w := <-s.wake:
			waiters = append(waiters, w)
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// serveConnected waits for the session to end, answering connect requests
// at once meanwhile. It returns false when the Manager is closing.
func (s *server) serveConnected(ctx context.Context, waiters *[]chan error) bool {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	for {
		select {
		case <-ctx.Done():
			return false
		case w := <-s.wake:
			w <- nil
		case err := <-done:
			if ctx.Err() != nil {
				return false
			}
			s.setDropped(sess, err)
			return true
		}
	}
}

// attempt connects and lists the tools once.
func (s *server) attempt(ctx context.Context) error {
	s.mu.Lock()
	s.state = StateConnecting
	s.mu.Unlock()
	s.stderr.Reset()

	cctx, cancel := context.WithTimeout(ctx, s.m.connectTimeout())
	defer cancel()
	tr, err := s.m.transportFor(s.cfg, s.stderr)
	if err != nil {
		return err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "turnstone", Version: s.m.opts.ClientVersion}, &sdk.ClientOptions{
		// No roots, sampling or elicitation: advertise nothing.
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) {
			s.pushed(req.Session)
		},
	})
	sess, err := client.Connect(cctx, tr, nil)
	if err != nil {
		return s.explain(cctx, "connect", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = sess.Close()
		return errors.New("manager closed")
	}
	s.sess = sess
	if ir := sess.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Tools != nil {
		s.listChanged = ir.Capabilities.Tools.ListChanged
	} else {
		s.listChanged = false
	}
	s.mu.Unlock()

	if _, err := s.fetch(cctx, sess, true); err != nil {
		s.mu.Lock()
		s.sess = nil
		s.mu.Unlock()
		_ = sess.Close()
		return s.explain(cctx, "list tools", err)
	}
	s.mu.Lock()
	if s.closed || s.sess != sess {
		// Close (or a newer attempt) ran while the list was fetched: this
		// session is already gone and must not be reported as connected.
		s.mu.Unlock()
		_ = sess.Close()
		return errors.New("MCP server " + s.cfg.Name + ": connection closed while starting")
	}
	late := s.lateReport && !s.everConnected
	s.state = StateConnected
	s.lastErr = ""
	s.everConnected = true
	n := len(s.tools)
	s.mu.Unlock()
	s.m.rebuild()
	if late {
		s.m.logf("MCP server %s connected after startup with %d tools", s.cfg.Name, n)
	}
	return nil
}

// explain adds the timeout and the server's stderr to a connection error.
func (s *server) explain(ctx context.Context, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%s: no answer within %s: %w", what, fmtSeconds(s.m.connectTimeout()), err)
	} else {
		err = fmt.Errorf("%s: %w", what, err)
	}
	if tail := s.stderr.Tail(5); tail != "" {
		err = fmt.Errorf("%w\nserver stderr:\n%s", err, indent(tail, "  "))
	}
	return err
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// fetch lists every page of tools and applies the list unless a newer
// request has already been applied (server-everything sends list_changed
// right after initialize, racing the first list). It reports whether the
// result was applied.
func (s *server) fetch(ctx context.Context, sess *sdk.ClientSession, initial bool) (bool, error) {
	s.mu.Lock()
	s.listSeq++
	seq := s.listSeq
	s.mu.Unlock()
	var tools []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return false, err
		}
		if t != nil {
			tools = append(tools, t)
		}
	}
	s.mu.Lock()
	if s.sess != sess || seq < s.appliedSeq {
		s.mu.Unlock()
		return false, nil
	}
	s.appliedSeq = seq
	s.tools = tools
	s.mu.Unlock()
	if !initial {
		s.m.rebuild()
	}
	return true, nil
}

// refreshList re-fetches the tools of a connected server.
func (s *server) refreshList(ctx context.Context) error {
	s.mu.Lock()
	sess := s.sess
	connected := s.state == StateConnected
	s.mu.Unlock()
	if !connected || sess == nil {
		return fmt.Errorf("MCP server %s is not connected", s.cfg.Name)
	}
	_, err := s.fetch(ctx, sess, false)
	if err != nil && connectionLost(err) {
		s.noteDropped(sess, err)
		return fmt.Errorf("connection lost, reconnecting in the background: %w", err)
	}
	return err
}

// pushed handles notifications/tools/list_changed: a refresh after a short
// quiet period, so a burst of notifications costs one list.
func (s *server) pushed(from *sdk.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (s.sess != nil && from != nil && from != s.sess) {
		return
	}
	if s.debounce != nil {
		s.debounce.Reset(s.m.opts.Debounce)
		return
	}
	s.debounce = time.AfterFunc(s.m.opts.Debounce, s.pushRefresh)
}

func (s *server) pushRefresh() {
	ctx := s.m.ctx
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return // the connection's own first list follows
	}
	ctx, cancel := context.WithTimeout(ctx, s.m.connectTimeout())
	defer cancel()
	if _, err := s.fetch(ctx, sess, false); err != nil && ctx.Err() == nil {
		s.m.logf("MCP server %s: refresh after tools/list_changed failed: %v", s.cfg.Name, err)
		if connectionLost(err) {
			s.noteDropped(sess, err)
		}
	}
}

// requestConnect asks the supervisor for a connection attempt (or for
// nothing, when already connected) and waits for its outcome.
func (s *server) requestConnect(ctx context.Context) error {
	if s.configErr != nil {
		return s.configErr
	}
	w := make(chan error, 1)
	select {
	case s.wake <- w:
	case <-ctx.Done():
		return fmt.Errorf("MCP server %s: still connecting: %w", s.cfg.Name, ctx.Err())
	case <-s.m.ctx.Done():
		return errors.New("MCP manager is closed")
	}
	select {
	case err := <-w:
		return err
	case <-ctx.Done():
		return fmt.Errorf("MCP server %s: still connecting: %w", s.cfg.Name, ctx.Err())
	}
}

// setDropped marks a server whose session ended by itself.
func (s *server) setDropped(sess *sdk.ClientSession, err error) {
	_ = sess.Close() // reap the process
	s.mu.Lock()
	if s.dropErr != nil {
		err = s.dropErr // what a call saw beats the error of closing
	}
	s.dropErr = nil
	s.mu.Unlock()
	reason := "the connection closed"
	switch {
	case s.cfg.Transport() == TransportStdio:
		reason = "the server process exited or closed its output"
	case err != nil && !errors.Is(err, sdk.ErrConnectionClosed):
		reason = err.Error()
	}
	if tail := s.stderr.Tail(5); tail != "" {
		reason += "; stderr:\n" + indent(tail, "  ")
	}
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
	}
	s.state = StateDisconnected
	s.lastErr = reason
	s.mu.Unlock()
	s.m.logf("MCP server %s disconnected (%s); reconnecting in the background", s.cfg.Name, reason)
	s.m.rebuild()
}

// noteDropped is told by a failed call that the session is gone; closing it
// makes the supervisor notice at once.
func (s *server) noteDropped(sess *sdk.ClientSession, err error) {
	s.mu.Lock()
	if s.sess == sess && s.dropErr == nil {
		s.dropErr = err
	}
	s.mu.Unlock()
	go func() { _ = sess.Close() }()
}

// setFailure records a failed connection attempt.
func (s *server) setFailure(err error, wasConnected bool) {
	s.mu.Lock()
	late := s.lateReport && !s.everConnected && s.state != StateFailed
	if wasConnected || s.everConnected {
		s.state = StateDisconnected
	} else {
		s.state = StateFailed
	}
	s.lastErr = err.Error()
	s.mu.Unlock()
	if late {
		s.m.logf("MCP server %s failed to start: %v", s.cfg.Name, err)
	}
}

// unavailableMessage is the model text for a call to a server that is not
// connected.
func (s *server) unavailableMessage(tool string) string {
	s.mu.Lock()
	state, last := s.state, s.lastErr
	s.mu.Unlock()
	name := s.cfg.Name
	switch state {
	case StateConnecting:
		return fmt.Sprintf("Error: MCP server %s is (re)connecting, so tool %s is not available right now. Try again shortly.", name, tool)
	case StateDisconnected:
		return fmt.Sprintf("Error: MCP server %s is disconnected (%s), so tool %s cannot run. turnstone is reconnecting it in the background; try again shortly, or ask the user to run /mcp refresh %s.", name, firstLine(last), tool, name)
	}
	return fmt.Sprintf("Error: MCP server %s is not connected (%s), so tool %s cannot run. Ask the user to fix the server and run /mcp refresh %s.", name, firstLine(last), tool, name)
}

func firstLine(s string) string {
	if s == "" {
		return "no reason given"
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// close ends the session and stops the debounce timer.
func (s *server) close() {
	s.mu.Lock()
	s.closed = true
	sess := s.sess
	s.sess = nil
	s.state = StateFailed
	s.lastErr = "the MCP client was closed"
	if s.debounce != nil {
		s.debounce.Stop()
	}
	s.mu.Unlock()
	if sess != nil {
		_ = sess.Close()
	}
}

// toolNames returns the original names of the last applied list.
func (s *server) toolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, t.Name)
	}
	return out
}
