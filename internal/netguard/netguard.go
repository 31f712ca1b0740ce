// Package netguard holds an SSRF-safe dialer and HTTP client: every address a
// connection goes to is checked against the internal, private and reserved
// ranges right before it is dialed.
//
// The guard resolves names itself (A and AAAA), checks every address of the
// answer, and connects to an address it checked, so a DNS answer that changes
// between check and use (rebinding) cannot slip through. Redirects need no
// special handling: each hop dials again, through the same guard. Proxies
// from the environment are ignored, since a proxy would do the dialing.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// DefaultMaxRedirects is the number of redirects a client follows.
const DefaultMaxRedirects = 10

// Resolver looks up the addresses of a host; *net.Resolver implements it.
// network is "ip" (both families).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc dials one already checked address ("ip:port").
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Options configure a Guard and the client built on it.
type Options struct {
	// AllowPrivate opens loopback, RFC 1918, carrier-grade NAT, link-local
	// and unique-local ranges. Cloud metadata endpoints and ranges no server
	// lives on (unspecified, multicast, broadcast, documentation,
	// benchmarking, reserved) stay blocked regardless.
	AllowPrivate bool
	// Timeout bounds a whole request, redirects included; 0 means none
	// (callers may still bound it with a context).
	Timeout time.Duration
	// MaxRedirects caps followed redirects; 0 means DefaultMaxRedirects, a
	// negative value follows none.
	MaxRedirects int
	// Resolver answers name lookups; nil means net.DefaultResolver.
	Resolver Resolver
	// Dial connects to a checked "ip:port"; nil means a net.Dialer whose
	// Control hook checks the socket address once more. Tests use it to
	// route a public-looking address to a local server.
	Dial DialFunc
}

// BlockedError says that a host led to an address the guard refuses.
type BlockedError struct {
	Host  string
	IP    netip.Addr
	Range string
	Class Class
}

func (e *BlockedError) Error() string {
	var where string
	switch {
	case e.Host == "" || e.Host == e.IP.String():
		where = e.IP.String()
	case isLiteralForm(e.Host):
		where = e.Host + " is " + e.IP.String()
	default:
		where = e.Host + " resolves to " + e.IP.String()
	}
	if e.Class == Forbidden {
		return fmt.Sprintf("blocked: %s (%s); web_fetch never reaches this range, not even with [tools] web_fetch_allow_private = true", where, e.Range)
	}
	return fmt.Sprintf("blocked: %s (%s); web_fetch does not reach private or internal addresses (set [tools] web_fetch_allow_private = true to allow)", where, e.Range)
}

func isLiteralForm(host string) bool {
	_, ok, _ := ParseHost(host)
	return ok
}

// Guard decides which addresses may be dialed and dials them.
type Guard struct {
	allowPrivate bool
	resolver     Resolver
	dial         DialFunc
}

// New returns a guard for opts.
func New(opts Options) *Guard {
	g := &Guard{allowPrivate: opts.AllowPrivate, resolver: opts.Resolver, dial: opts.Dial}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
		g.dial = d.DialContext
	}
	return g
}

// Check returns a *BlockedError when ip may not be dialed; host is only
// used in the message.
func (g *Guard) Check(host string, ip netip.Addr) error {
	v := Classify(ip)
	if v.Class == Public || v.Class == Private && g.allowPrivate {
		return nil
	}
	return &BlockedError{Host: host, IP: ip.WithZone(""), Range: v.Range, Class: v.Class}
}

// Resolve turns a host into the addresses to dial, all of them checked. One
// blocked address blocks the host: a name that answers with both a public
// and an internal address is treated as internal.
func (g *Guard) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return nil, errors.New("no host to connect to")
	}
	ip, literal, err := ParseHost(host)
	if err != nil {
		return nil, err
	}
	addrs := []netip.Addr{ip}
	if !literal {
		addrs, err = g.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
		// A records may come back as IPv4-mapped IPv6; name them plainly.
		plain := make([]netip.Addr, len(addrs))
		for i, a := range addrs {
			plain[i] = a.Unmap()
		}
		addrs = plain
	}
	for _, a := range addrs {
		if err := g.Check(host, a); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// DialContext resolves and checks addr's host, then connects to the checked
// addresses in order until one answers. It has net.Dialer's signature so it
// can be an http.Transport's DialContext.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	addrs, err := g.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		if network == "tcp4" && !a.Unmap().Is4() || network == "tcp6" && a.Is4() {
			continue
		}
		conn, err := g.dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("dial %s: no %s address", addr, network)
	}
	return nil, errors.Join(errs...)
}

// control runs on the raw socket just before connect(2): a last check of the
// exact address the kernel is asked to reach.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: unexpected socket address %q: %w", address, err)
	}
	return g.Check(ap.Addr().String(), ap.Addr())
}

// NewClient returns an *http.Client that dials only through a Guard, never
// through a proxy, and follows at most MaxRedirects redirects.
func NewClient(opts Options) *http.Client {
	g := New(opts)
	limit := opts.MaxRedirects
	if limit == 0 {
		limit = DefaultMaxRedirects
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   opts.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if limit < 0 || len(via) > limit {
				return fmt.Errorf("stopped after %d redirects", max(limit, 0))
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to unsupported scheme %q", req.URL.Scheme)
			}
			return nil
		},
	}
}
