package mcp

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"turnstone/internal/tool"
)

// Defaults of Options.
const (
	DefaultStartupTimeout  = 30 * time.Second
	DefaultCallTimeout     = 60 * time.Second
	DefaultRefreshInterval = 4 * time.Hour
	defaultDebounce        = 100 * time.Millisecond
	defaultReconnectMin    = 500 * time.Millisecond
	defaultReconnectMax    = 60 * time.Second
)

// Options configures a Manager. Zero durations take the defaults, except
// RefreshInterval, where zero disables the periodic refresh (use
// DefaultOptions for the documented defaults).
type Options struct {
	// StartupTimeout bounds how long Start waits; slower servers keep
	// connecting in the background. Default 30 s.
	StartupTimeout time.Duration
	// CallTimeout bounds each tools/call. Default 60 s.
	CallTimeout time.Duration
	// RefreshInterval is the period of the refresh of servers that do not
	// push tools/list_changed. 0 disables it.
	RefreshInterval time.Duration
	// Logf receives background events (a late connection, a drop, a failed
	// refresh). Nil discards them.
	Logf func(format string, args ...any)
	// Vision reports whether the current model accepts images; when it
	// does, image results are passed through as image parts.
	Vision func() bool
	// Env is the base environment of stdio servers, under each server's
	// configured env; nil means the process environment. The wiring passes
	// it with turnstone's own secrets (API keys) removed.
	Env []string
	// ClientVersion is sent as clientInfo.version.
	ClientVersion string
	// Debounce is the quiet period after tools/list_changed. Default 100 ms.
	Debounce time.Duration
	// ReconnectMin and ReconnectMax bound the reconnect backoff after a
	// server dropped. Defaults 500 ms and 60 s.
	ReconnectMin, ReconnectMax time.Duration

	// transport overrides how a server is reached (tests: in-memory).
	transport func(ServerConfig, *tailBuffer) (sdk.Transport, error)
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		StartupTimeout:  DefaultStartupTimeout,
		CallTimeout:     DefaultCallTimeout,
		RefreshInterval: DefaultRefreshInterval,
	}
}

// Manager owns every MCP server connection of a process. It is safe for
// concurrent use and meant to be shared by all sessions: they read its
// snapshot (Tools, Lookup, Version) and subscribe with AddListener.
type Manager struct {
	opts    Options
	servers []*server
	byName  map[string]*server

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	startOnce sync.Once
	started   atomic.Bool
	closeOnce sync.Once

	rebuildMu sync.Mutex
	snap      atomic.Pointer[snapshot]
	version   atomic.Uint64

	listenMu  sync.Mutex
	listeners map[uint64]func()
	nextID    uint64
}

// snapshot is one immutable view of the merged MCP tools.
type snapshot struct {
	offered []tool.Tool          // connected servers' tools, config order
	index   map[string]*mcpTool  // every known tool, offered or not
	names   map[*server][]string // exposed names per server (known tools)
	exposed map[*server]map[string]string
	key     []byte // fingerprint for change detection
}

// NewManager prepares the servers; nothing connects before Start.
// Invalid entries (a name containing "__", no command or url, a
// duplicate) are kept as failed servers so /mcp can show why.
func NewManager(servers []ServerConfig, opts Options) *Manager {
	if opts.StartupTimeout <= 0 {
		opts.StartupTimeout = DefaultStartupTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.RefreshInterval < 0 {
		opts.RefreshInterval = 0
	}
	if opts.Debounce <= 0 {
		opts.Debounce = defaultDebounce
	}
	if opts.ReconnectMin <= 0 {
		opts.ReconnectMin = defaultReconnectMin
	}
	if opts.ReconnectMax < opts.ReconnectMin {
		opts.ReconnectMax = max(defaultReconnectMax, opts.ReconnectMin)
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	m := &Manager{opts: opts, byName: map[string]*server{}, listeners: map[uint64]func(){}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, cfg := range servers {
		err := cfg.Validate()
		if err == nil && m.byName[cfg.Name] != nil {
			err = fmt.Errorf("MCP server %q is configured twice; the first entry is used", cfg.Name)
		}
		s := newServer(m, cfg, err)
		m.servers = append(m.servers, s)
		if m.byName[cfg.Name] == nil {
			m.byName[cfg.Name] = s
		}
	}
	m.snap.Store(&snapshot{index: map[string]*mcpTool{}})
	return m
}

func (m *Manager) logf(format string, args ...any) {
	if m.opts.Logf != nil {
		m.opts.Logf(format, args...)
	}
}

// connectTimeout bounds one connection attempt: longer than the startup
// wait, so a slow server can still arrive in the background, but finite.
func (m *Manager) connectTimeout() time.Duration { return 4 * m.opts.StartupTimeout }

func (m *Manager) transportFor(cfg ServerConfig, stderr *tailBuffer) (sdk.Transport, error) {
	if m.opts.transport != nil {
		return m.opts.transport(cfg, stderr)
	}
	return newTransport(cfg, m.opts.Env, stderr)
}

// ServerError is a per-server problem reported once by Start.
type ServerError struct {
	Server string
	Err    error
	// Pending: the server is still connecting and may arrive later.
	Pending bool
}

func (e *ServerError) Error() string {
	if e.Pending {
		return fmt.Sprintf("MCP server %s: %v", e.Server, e.Err)
	}
	return fmt.Sprintf("MCP server %s failed: %v", e.Server, e.Err)
}

func (e *ServerError) Unwrap() error { return e.Err }

// Start connects every server concurrently and returns when all have
// connected or failed, or when StartupTimeout (or ctx) ends the wait.
// Servers still connecting then keep going in the background; their tools
// appear through the listeners. The returned problems are the one-time
// report: one entry per server that failed or is still pending. Start runs
// once; later calls return nil.
func (m *Manager) Start(ctx context.Context) []*ServerError {
	var problems []*ServerError
	m.startOnce.Do(func() {
		m.started.Store(true)
		for _, s := range m.servers {
			if s.configErr == nil {
				m.wg.Add(1)
				go s.supervise(m.ctx)
			}
		}
		if m.opts.RefreshInterval > 0 {
			m.wg.Add(1)
			go m.periodic(firstDelay(launchSeed(), m.opts.RefreshInterval))
		}
		timer := time.NewTimer(m.opts.StartupTimeout)
		defer timer.Stop()
		expired := false
		for _, s := range m.servers {
			if expired {
				break
			}
			select {
			case <-s.firstDone:
			case <-timer.C:
				expired = true
			case <-ctx.Done():
				expired = true
			}
		}
		for _, s := range m.servers {
			s.mu.Lock()
			switch {
			case s.configErr != nil:
				problems = append(problems, &ServerError{Server: s.cfg.Name, Err: s.configErr})
			case s.state == StateConnecting && !s.everConnected:
				s.lateReport = true
				problems = append(problems, &ServerError{Server: s.cfg.Name, Pending: true,
					Err: fmt.Errorf("still connecting after %s; its tools will be added when it is ready", fmtSeconds(m.opts.StartupTimeout))})
			case s.state == StateFailed:
				problems = append(problems, &ServerError{Server: s.cfg.Name, Err: fmt.Errorf("%s", s.lastErr)})
			}
			s.mu.Unlock()
		}
	})
	return problems
}

// Close shuts every session down (stdio servers get 500 ms after their
// stdin closes before they are signalled) and stops the background work.
// It waits for the goroutines until ctx ends.
func (m *Manager) Close(ctx context.Context) error {
	m.closeOnce.Do(func() {
		m.cancel()
		var wg sync.WaitGroup
		for _, s := range m.servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.close()
			}()
		}
		wg.Wait()
		m.rebuild()
	})
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close MCP servers: %w", ctx.Err())
	}
}

// Tools is the merged list of tools of connected servers, in config order
// (each server's tools in the server's order). The slice is a copy.
func (m *Manager) Tools() []tool.Tool { return slices.Clone(m.snap.Load().offered) }

// Lookup finds an MCP tool by its exposed name. Tools of a server that is
// currently disconnected are still found; calling them returns an error
// that names the server.
func (m *Manager) Lookup(name string) (tool.Tool, bool) {
	t, ok := m.snap.Load().index[name]
	if !ok {
		return nil, false
	}
	return t, true
}

// Version increases whenever the merged tool list changes.
func (m *Manager) Version() uint64 { return m.version.Load() }

// AddListener registers fn, called (from a background goroutine) after each
// change of the merged tool list. The returned function removes it.
func (m *Manager) AddListener(fn func()) (remove func()) {
	m.listenMu.Lock()
	defer m.listenMu.Unlock()
	m.nextID++
	id := m.nextID
	m.listeners[id] = fn
	return func() {
		m.listenMu.Lock()
		defer m.listenMu.Unlock()
		delete(m.listeners, id)
	}
}

// rebuild recomputes the snapshot copy-on-write and, if anything changed,
// bumps the version and calls the listeners.
func (m *Manager) rebuild() {
	m.rebuildMu.Lock()
	next := m.build()
	prev := m.snap.Load()
	changed := !bytes.Equal(prev.key, next.key)
	if changed {
		m.snap.Store(next)
		m.version.Add(1)
	}
	m.rebuildMu.Unlock()
	if !changed {
		return
	}
	m.listenMu.Lock()
	fns := make([]func(), 0, len(m.listeners))
	ids := make([]uint64, 0, len(m.listeners))
	for id := range m.listeners {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fns = append(fns, m.listeners[id])
	}
	m.listenMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (m *Manager) build() *snapshot {
	snap := &snapshot{index: map[string]*mcpTool{}, names: map[*server][]string{}, exposed: map[*server]map[string]string{}}
	names := newNameAssigner()
	var key bytes.Buffer
	for _, s := range m.servers {
		s.mu.Lock()
		tools := s.tools
		connected := s.state == StateConnected
		s.mu.Unlock()
		exp := map[string]string{}
		for _, t := range tools {
			name := names.assign(s.cfg.Name, t.Name)
			if name == "" {
				continue
			}
			mt := newMCPTool(s, name, t)
			snap.index[name] = mt
			snap.names[s] = append(snap.names[s], name)
			exp[t.Name] = name
			if connected {
				snap.offered = append(snap.offered, mt)
				fmt.Fprintf(&key, "%s\x00%s\x00%s\x00", name, mt.spec.Description, mt.spec.Parameters)
			} else {
				fmt.Fprintf(&key, "~%s\x00", name)
			}
		}
		snap.exposed[s] = exp
	}
	snap.key = key.Bytes()
	return snap
}

// periodic refreshes servers without push notifications every interval,
// starting after a staggered first delay.
func (m *Manager) periodic(first time.Duration) {
	defer m.wg.Done()
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-timer.C:
		}
		for _, s := range m.servers {
			s.mu.Lock()
			due := s.state == StateConnected && !s.listChanged
			s.mu.Unlock()
			if !due {
				continue
			}
			ctx, cancel := context.WithTimeout(m.ctx, m.connectTimeout())
			if err := s.refreshList(ctx); err != nil && m.ctx.Err() == nil {
				m.logf("MCP server %s: periodic refresh failed: %v", s.cfg.Name, err)
			}
			cancel()
		}
		timer.Reset(m.opts.RefreshInterval)
	}
}

// launchSeed is tools.md's "monotonic_ns ^ pid": different on every node
// of a cluster started at the same moment.
func launchSeed() uint64 { return monotonicNanos() ^ uint64(os.Getpid()) }

// firstDelay is U[0,1) × interval drawn from the seed.
func firstDelay(seed uint64, interval time.Duration) time.Duration {
	r := rand.New(rand.NewPCG(seed, seed>>32|seed<<32))
	return time.Duration(r.Float64() * float64(interval))
}
