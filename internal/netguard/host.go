package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ParseHost reads a URL host (without port or brackets) the way a browser
// does. It returns the address and true when the host is an IP literal,
// including the inet_aton forms that browsers and C resolvers accept but
// Go's parser does not ("127.1", "0x7f.1", "2130706433", "0177.0.0.1").
// A host whose last label is numeric but which is not a valid IPv4 address
// ("1.2.3.256", "0x1g") is an error, as in the WHATWG URL standard: such a
// host must never reach a DNS resolver that might read it differently.
func ParseHost(host string) (netip.Addr, bool, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true, nil
	}
	if !endsInNumber(host) {
		return netip.Addr{}, false, nil
	}
	ip, err := parseInetAton(host)
	if err != nil {
		return netip.Addr{}, false, fmt.Errorf("invalid IPv4 address %q: %w", host, err)
	}
	return ip, true, nil
}

// endsInNumber is the WHATWG "ends in a number" check: the last non-empty
// dot-separated label is all decimal digits or a 0x hex number.
func endsInNumber(host string) bool {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	if len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return false
}

// parseInetAton parses 1 to 4 dot-separated parts, each decimal, octal
// (leading 0) or hex (leading 0x); the last part fills the remaining bytes.
func parseInetAton(host string) (netip.Addr, error) {
	host = strings.TrimSuffix(host, ".")
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, errors.New("more than 4 parts")
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := parseInetPart(p)
		if err != nil {
			return netip.Addr{}, err
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, errors.New("part out of range")
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, errors.New("last part out of range")
	}
	var v uint64
	for _, n := range nums[:len(nums)-1] {
		v = v<<8 | n
	}
	v = v<<(8*(5-len(nums))) | last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

func parseInetPart(p string) (uint64, error) {
	if p == "" {
		return 0, errors.New("empty part")
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, nil
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil {
		return 0, fmt.Errorf("part %q is not a number", p)
	}
	return n, nil
}
