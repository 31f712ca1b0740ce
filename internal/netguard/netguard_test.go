package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeDNS maps names to addresses; unknown names fail like NXDOMAIN.
type fakeDNS map[string][]netip.Addr

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// publicIP is what "allowed.test" resolves to; routeDial sends connections
// for it to the local test server, standing in for the internet. Every other
// address is dialed for real, so a guard that let 127.0.0.1 through would
// really reach the local server.
const publicIP = "93.184.216.34"

func routeDial(t *testing.T, srv *httptest.Server, dialed *[]string) DialFunc {
	t.Helper()
	local := srv.Listener.Addr().String()
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		*dialed = append(*dialed, addr)
		host, _, _ := net.SplitHostPort(addr)
		var d net.Dialer
		if host == publicIP {
			return d.DialContext(ctx, network, local)
		}
		return d.DialContext(ctx, network, addr)
	}
}

func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func wantBlocked(t *testing.T, err error, mention ...string) *BlockedError {
	t.Helper()
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("want a *BlockedError, got %v", err)
	}
	for _, m := range mention {
		if !strings.Contains(be.Error(), m) {
			t.Errorf("error %q does not mention %q", be.Error(), m)
		}
	}
	return be
}

func TestClientBlocksLocalByDefault(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "secret")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dns := fakeDNS{
		"internal.test": addrs("127.0.0.1"),
		"mixed.test":    addrs(publicIP, "127.0.0.1"),
		"meta.test":     addrs("169.254.169.254"),
	}
	c := NewClient(Options{Resolver: dns})
	tests := []struct {
		url     string
		mention []string
	}{
		{"http://127.0.0.1:" + port + "/", []string{"blocked: 127.0.0.1 (loopback", "web_fetch_allow_private = true"}},
		{"http://internal.test:" + port + "/", []string{"internal.test resolves to 127.0.0.1", "loopback"}},
		{"http://mixed.test:" + port + "/", []string{"mixed.test resolves to 127.0.0.1"}},
		{"http://[::1]:" + port + "/", []string{"::1 (loopback"}},
		{"http://[::ffff:127.0.0.1]:" + port + "/", []string{"IPv4-mapped loopback"}},
		{"http://0x7f.1:" + port + "/", []string{"0x7f.1 is 127.0.0.1"}},
		{"http://127.1:" + port + "/", []string{"127.1 is 127.0.0.1"}},
		{"http://2130706433:" + port + "/", []string{"2130706433 is 127.0.0.1"}},
		{"http://0177.0.0.1:" + port + "/", []string{"0177.0.0.1 is 127.0.0.1"}},
		{"http://0.0.0.0:" + port + "/", []string{"unspecified", "not even with"}},
		{"http://meta.test/", []string{"cloud metadata endpoint", "not even with"}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := get(t, c, tt.url)
			if err == nil {
				t.Fatal("request went through")
			}
			wantBlocked(t, err, tt.mention...)
		})
	}
	// The system resolver (/etc/hosts) maps localhost to loopback.
	_, err := get(t, NewClient(Options{}), "http://localhost:"+port+"/")
	wantBlocked(t, err, "localhost resolves to", "loopback")
	if n := hits.Load(); n != 0 {
		t.Fatalf("the local server was reached %d times", n)
	}
}

func TestClientAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := NewClient(Options{AllowPrivate: true, Resolver: fakeDNS{"internal.test": addrs("127.0.0.1")}})
	for _, u := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://internal.test:" + port + "/",
		"http://127.1:" + port + "/", // normalized, then dialed as 127.0.0.1
		"http://0x7f.0.0.1:" + port + "/",
	} {
		body, err := get(t, c, u)
		if err != nil || body != "hello" {
			t.Errorf("GET %s = %q, %v", u, body, err)
		}
	}
	// Metadata stays blocked with AllowPrivate.
	_, err := get(t, c, "http://169.254.169.254/latest/meta-data/")
	wantBlocked(t, err, "cloud metadata")
}

func TestClientRejectsInvalidNumericHost(t *testing.T) {
	c := NewClient(Options{Resolver: fakeDNS{}})
	_, err := get(t, c, "http://1.2.3.256/")
	if err == nil || !strings.Contains(err.Error(), "invalid IPv4 address") {
		t.Fatalf("want an invalid IPv4 error, got %v", err)
	}
}

// A redirect from an allowed host to an internal one is checked again when
// the next hop is dialed.
func TestClientRechecksRedirects(t *testing.T) {
	var internalHits atomic.Int32
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "public page") })
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://allowed.test:"+port+"/ok", http.StatusFound)
	})
	mux.HandleFunc("/to-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://internal.test:"+port+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/to-literal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+port+"/secret", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-v6", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://[::1]:"+port+"/secret", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/secret", func(w http.ResponseWriter, r *http.Request) {
		internalHits.Add(1)
		fmt.Fprint(w, "secret")
	})
	var dialed []string
	dns := fakeDNS{"allowed.test": addrs(publicIP), "internal.test": addrs("10.0.0.7")}
	c := NewClient(Options{Resolver: dns, Dial: routeDial(t, srv, &dialed)})

	body, err := get(t, c, "http://allowed.test:"+port+"/hop")
	if err != nil || body != "public page" {
		t.Fatalf("allowed redirect chain: %q, %v", body, err)
	}
	if len(dialed) == 0 || !strings.HasPrefix(dialed[0], publicIP+":") {
		t.Fatalf("dialed %v, want the checked public address", dialed)
	}
	for path, mention := range map[string]string{
		"/to-name":    "internal.test resolves to 10.0.0.7",
		"/to-literal": "127.0.0.1 (loopback",
		"/to-v6":      "::1 (loopback",
	} {
		_, err := get(t, c, "http://allowed.test:"+port+path)
		wantBlocked(t, err, mention)
	}
	if n := internalHits.Load(); n != 0 {
		t.Fatalf("internal target reached %d times", n)
	}
}

func TestClientRedirectLimit(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		http.Redirect(w, r, fmt.Sprintf("/r%d", n), http.StatusFound)
	}))
	defer srv.Close()
	c := NewClient(Options{AllowPrivate: true})
	_, err := get(t, c, srv.URL+"/")
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Fatalf("want the redirect cap, got %v", err)
	}
	if n := hits.Load(); n != 11 {
		t.Fatalf("server saw %d requests, want 11 (the first plus 10 redirects)", n)
	}
}

func TestClientIgnoresProxyEnvironment(t *testing.T) {
	var proxyHits atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxyHits.Add(1)
		fmt.Fprint(w, "via proxy")
	}))
	defer proxy.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "direct")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	var dialed []string
	c := NewClient(Options{Resolver: fakeDNS{"allowed.test": addrs(publicIP)}, Dial: routeDial(t, srv, &dialed)})
	body, err := get(t, c, "http://allowed.test:"+port+"/")
	if err != nil || body != "direct" || proxyHits.Load() != 0 {
		t.Fatalf("body %q err %v proxy hits %d; want a direct fetch", body, err, proxyHits.Load())
	}
}

// The Control hook is the last line: it refuses a socket address even if a
// caller bypassed Resolve.
func TestDialerControlChecksSocketAddress(t *testing.T) {
	g := New(Options{})
	if err := g.control("tcp4", "127.0.0.1:80", nil); err == nil {
		t.Fatal("control allowed 127.0.0.1")
	}
	if err := g.control("tcp6", "[fd00:ec2::254]:80", nil); err == nil {
		t.Fatal("control allowed the metadata address")
	}
	if err := g.control("tcp4", publicIP+":443", nil); err != nil {
		t.Fatalf("control refused a public address: %v", err)
	}
	open := New(Options{AllowPrivate: true})
	if err := open.control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("AllowPrivate control refused loopback: %v", err)
	}
}
