package netguard

import "net/netip"

// Class says how an address may be used.
type Class int

const (
	// Public addresses are always allowed.
	Public Class = iota
	// Private addresses (loopback, RFC 1918, CGNAT, link-local, unique-local)
	// are blocked unless Options.AllowPrivate is set.
	Private
	// Forbidden addresses are blocked even with AllowPrivate: cloud metadata
	// endpoints (they hand out credentials), and ranges no web server lives
	// on (unspecified, multicast, broadcast, documentation, benchmarking,
	// reserved).
	Forbidden
)

func (c Class) String() string {
	switch c {
	case Public:
		return "public"
	case Private:
		return "private"
	default:
		return "forbidden"
	}
}

type ipRange struct {
	prefix netip.Prefix
	name   string
	class  Class
}

func r(p, name string, c Class) ipRange {
	return ipRange{prefix: netip.MustParsePrefix(p), name: name, class: c}
}

// The tables are ordered most specific first: the first match wins, so the
// metadata /32s come before the link-local /16 that contains them.
var (
	v4Ranges = []ipRange{
		r("169.254.169.254/32", "cloud metadata endpoint", Forbidden),
		r("169.254.170.2/32", "cloud metadata endpoint (ECS credentials)", Forbidden),
		r("100.100.100.200/32", "cloud metadata endpoint (Alibaba Cloud)", Forbidden),
		r("255.255.255.255/32", "broadcast", Forbidden),
		r("0.0.0.0/8", "unspecified, 0.0.0.0/8", Forbidden),
		r("10.0.0.0/8", "private network, 10.0.0.0/8", Private),
		r("100.64.0.0/10", "carrier-grade NAT, 100.64.0.0/10", Private),
		r("127.0.0.0/8", "loopback, 127.0.0.0/8", Private),
		r("169.254.0.0/16", "link-local, 169.254.0.0/16", Private),
		r("172.16.0.0/12", "private network, 172.16.0.0/12", Private),
		r("192.0.0.0/24", "IETF protocol assignments, 192.0.0.0/24", Forbidden),
		r("192.0.2.0/24", "documentation, 192.0.2.0/24", Forbidden),
		r("192.88.99.0/24", "6to4 relay anycast, 192.88.99.0/24", Forbidden),
		r("192.168.0.0/16", "private network, 192.168.0.0/16", Private),
		r("198.18.0.0/15", "benchmarking, 198.18.0.0/15", Forbidden),
		r("198.51.100.0/24", "documentation, 198.51.100.0/24", Forbidden),
		r("203.0.113.0/24", "documentation, 203.0.113.0/24", Forbidden),
		r("224.0.0.0/4", "multicast, 224.0.0.0/4", Forbidden),
		r("240.0.0.0/4", "reserved, 240.0.0.0/4", Forbidden),
	}
	v6Ranges = []ipRange{
		r("fd00:ec2::254/128", "cloud metadata endpoint (AWS IPv6)", Forbidden),
		r("::/128", "unspecified, ::", Forbidden),
		r("::1/128", "loopback, ::1", Private),
		r("::/96", "IPv4-compatible IPv6 (deprecated), ::/96", Forbidden),
		r("100::/64", "discard-only, 100::/64", Forbidden),
		r("2001:2::/48", "benchmarking, 2001:2::/48", Forbidden),
		r("2001:db8::/32", "documentation, 2001:db8::/32", Forbidden),
		r("3fff::/20", "documentation, 3fff::/20", Forbidden),
		r("fc00::/7", "unique-local, fc00::/7", Private),
		r("fe80::/10", "link-local, fe80::/10", Private),
		r("fec0::/10", "site-local (deprecated), fec0::/10", Private),
		r("ff00::/8", "multicast, ff00::/8", Forbidden),
	}
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	teredo         = netip.MustParsePrefix("2001::/32")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// Verdict is the classification of one address.
type Verdict struct {
	Class Class
	// Range names the range that decided the class ("loopback, 127.0.0.0/8");
	// for an IPv6 address that embeds an IPv4 one, the name says so.
	Range string
}

// Classify says which range an address belongs to. IPv6 forms that carry an
// IPv4 address (IPv4-mapped, NAT64, 6to4, Teredo) are judged by the IPv4
// address they lead to as well, and the stricter verdict wins.
func Classify(ip netip.Addr) Verdict {
	ip = ip.WithZone("")
	if ip.Is4() {
		return classify4(ip)
	}
	if ip.Is4In6() {
		v := classify4(ip.Unmap())
		if v.Class == Public {
			return v
		}
		return Verdict{Class: v.Class, Range: "IPv4-mapped " + v.Range}
	}
	switch {
	case nat64.Contains(ip):
		return embedded("NAT64", last32(ip), Verdict{Class: Public})
	case nat64Local.Contains(ip):
		// Local-use NAT64 leads into the operator's own network.
		return embedded("local NAT64", last32(ip), Verdict{Class: Private, Range: "local-use NAT64, 64:ff9b:1::/48"})
	case sixToFour.Contains(ip):
		b := ip.As16()
		return embedded("6to4", netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), Verdict{Class: Public})
	case teredo.Contains(ip):
		b := ip.As16()
		server := netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		v := embedded("Teredo server", server, Verdict{Class: Public})
		return worst(v, embedded("Teredo client", client, Verdict{Class: Public}))
	}
	for _, rg := range v6Ranges {
		if rg.prefix.Contains(ip) {
			return Verdict{Class: rg.class, Range: rg.name}
		}
	}
	if !globalUnicast6.Contains(ip) {
		return Verdict{Class: Forbidden, Range: "reserved IPv6, outside 2000::/3"}
	}
	return Verdict{Class: Public}
}

func classify4(ip netip.Addr) Verdict {
	for _, rg := range v4Ranges {
		if rg.prefix.Contains(ip) {
			return Verdict{Class: rg.class, Range: rg.name}
		}
	}
	return Verdict{Class: Public}
}

// embedded judges the IPv4 address inside an IPv6 form; own is the verdict
// for the IPv6 prefix itself.
func embedded(form string, v4 netip.Addr, own Verdict) Verdict {
	v := classify4(v4)
	if v.Class != Public {
		v.Range = form + " form of " + v4.String() + " (" + v.Range + ")"
	}
	return worst(own, v)
}

func worst(a, b Verdict) Verdict {
	if b.Class > a.Class {
		return b
	}
	return a
}

func last32(ip netip.Addr) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[12:16]))
}
