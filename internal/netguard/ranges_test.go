package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ip    string
		class Class
		name  string // substring of the range name
	}{
		// public
		{"93.184.216.34", Public, ""},
		{"8.8.8.8", Public, ""},
		{"1.1.1.1", Public, ""},
		{"100.63.255.255", Public, ""},
		{"100.128.0.0", Public, ""},
		{"172.15.255.255", Public, ""},
		{"172.32.0.0", Public, ""},
		{"198.17.255.255", Public, ""},
		{"223.255.255.255", Public, ""},
		{"2606:4700:4700::1111", Public, ""},
		{"2001:4860:4860::8888", Public, ""},
		{"::ffff:8.8.8.8", Public, ""},
		{"64:ff9b::808:808", Public, ""},
		{"2002:808:808::1", Public, ""},
		// private: opened by AllowPrivate
		{"127.0.0.1", Private, "loopback"},
		{"127.255.255.254", Private, "loopback"},
		{"10.0.0.1", Private, "private network, 10.0.0.0/8"},
		{"172.16.0.1", Private, "172.16.0.0/12"},
		{"172.31.255.255", Private, "172.16.0.0/12"},
		{"192.168.1.1", Private, "192.168.0.0/16"},
		{"100.64.0.1", Private, "carrier-grade NAT"},
		{"100.127.255.255", Private, "carrier-grade NAT"},
		{"169.254.1.1", Private, "link-local"},
		{"::1", Private, "loopback"},
		{"fe80::1", Private, "link-local"},
		{"fe80::1%eth0", Private, "link-local"},
		{"fc00::1", Private, "unique-local"},
		{"fd12:3456::1", Private, "unique-local"},
		{"fec0::1", Private, "site-local"},
		{"::ffff:127.0.0.1", Private, "IPv4-mapped loopback"},
		{"::ffff:10.0.0.1", Private, "IPv4-mapped private"},
		{"64:ff9b::7f00:1", Private, "NAT64 form of 127.0.0.1"},
		{"64:ff9b::c0a8:101", Private, "NAT64 form of 192.168.1.1"},
		{"64:ff9b:1::808:808", Private, "local-use NAT64"},
		{"2002:7f00:1::1", Private, "6to4 form of 127.0.0.1"},
		{"2002:a00:1::", Private, "6to4 form of 10.0.0.1"},
		// Teredo: client address is the last 32 bits inverted (~127.0.0.1).
		{"2001:0:808:808::80ff:fffe", Private, "Teredo client form of 127.0.0.1"},
		{"2001:0:a00:1::f7f7:f7f7", Private, "Teredo server form of 10.0.0.1"},
		// forbidden whatever the setting
		{"169.254.169.254", Forbidden, "cloud metadata"},
		{"169.254.170.2", Forbidden, "cloud metadata"},
		{"100.100.100.200", Forbidden, "cloud metadata"},
		{"fd00:ec2::254", Forbidden, "cloud metadata"},
		{"::ffff:169.254.169.254", Forbidden, "IPv4-mapped cloud metadata"},
		{"64:ff9b::a9fe:a9fe", Forbidden, "NAT64 form of 169.254.169.254"},
		{"64:ff9b:1::a9fe:a9fe", Forbidden, "cloud metadata"},
		{"0.0.0.0", Forbidden, "unspecified"},
		{"0.1.2.3", Forbidden, "unspecified"},
		{"::", Forbidden, "unspecified"},
		{"255.255.255.255", Forbidden, "broadcast"},
		{"224.0.0.1", Forbidden, "multicast"},
		{"239.255.255.250", Forbidden, "multicast"},
		{"ff02::1", Forbidden, "multicast"},
		{"192.0.0.1", Forbidden, "IETF protocol assignments"},
		{"192.0.0.170", Forbidden, "IETF protocol assignments"},
		{"192.0.2.1", Forbidden, "documentation"},
		{"198.51.100.7", Forbidden, "documentation"},
		{"203.0.113.9", Forbidden, "documentation"},
		{"2001:db8::1", Forbidden, "documentation"},
		{"198.18.0.1", Forbidden, "benchmarking"},
		{"198.19.255.255", Forbidden, "benchmarking"},
		{"240.0.0.1", Forbidden, "reserved"},
		{"::7f00:1", Forbidden, "IPv4-compatible"},
		{"100::1", Forbidden, "discard-only"},
		{"4000::1", Forbidden, "outside 2000::/3"},
		{"::ffff:0.0.0.0", Forbidden, "IPv4-mapped unspecified"},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			v := Classify(netip.MustParseAddr(tt.ip))
			if v.Class != tt.class {
				t.Fatalf("Classify(%s) = %v (%s), want %v", tt.ip, v.Class, v.Range, tt.class)
			}
			if !strings.Contains(v.Range, tt.name) {
				t.Errorf("Classify(%s) range %q, want it to mention %q", tt.ip, v.Range, tt.name)
			}
		})
	}
}

func TestGuardCheck(t *testing.T) {
	strict, open := New(Options{}), New(Options{AllowPrivate: true})
	tests := []struct {
		ip               string
		strictOK, openOK bool
	}{
		{"93.184.216.34", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"10.1.2.3", false, true},
		{"fd00::5", false, true},
		{"169.254.169.254", false, false},
		{"fd00:ec2::254", false, false},
		{"100.100.100.200", false, false},
		{"0.0.0.0", false, false},
		{"224.0.0.1", false, false},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.ip)
		if got := strict.Check(tt.ip, ip) == nil; got != tt.strictOK {
			t.Errorf("strict Check(%s) allowed=%v, want %v", tt.ip, got, tt.strictOK)
		}
		if got := open.Check(tt.ip, ip) == nil; got != tt.openOK {
			t.Errorf("AllowPrivate Check(%s) allowed=%v, want %v", tt.ip, got, tt.openOK)
		}
	}
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		host    string
		ip      string // "" means not a literal
		wantErr bool
	}{
		{"example.com", "", false},
		{"localhost", "", false},
		{"a.b.c.d1", "", false},
		{"127.0.0.1", "127.0.0.1", false},
		{"::1", "::1", false},
		{"127.1", "127.0.0.1", false},
		{"127.0.1", "127.0.0.1", false},
		{"0x7f.1", "127.0.0.1", false},
		{"0X7F.0.0.1", "127.0.0.1", false},
		{"2130706433", "127.0.0.1", false},
		{"0x7f000001", "127.0.0.1", false},
		{"0177.0.0.1", "127.0.0.1", false},
		{"017700000001", "127.0.0.1", false},
		{"127.0.0.1.", "127.0.0.1", false},
		{"0", "0.0.0.0", false},
		{"0x", "0.0.0.0", false},
		{"10.0x10.1", "10.16.0.1", false},
		{"169.254.43518", "169.254.169.254", false},
		{"1.2.3.256", "", true},
		{"256.1.1.1", "", true},
		{"1.2.3.4.5", "", true},
		{"4294967296", "", true},
		{"08.1.1.1", "", true},
		{"example.0x1g", "", false},
		{"foo.123", "", true},
		{"99999999999999999999999", "", true},
	}
	for _, tt := range tests {
		ip, literal, err := ParseHost(tt.host)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseHost(%q) err = %v, wantErr %v", tt.host, err, tt.wantErr)
			continue
		}
		if tt.ip == "" {
			if literal {
				t.Errorf("ParseHost(%q) = %v, want a hostname", tt.host, ip)
			}
			continue
		}
		if !literal || ip != netip.MustParseAddr(tt.ip) {
			t.Errorf("ParseHost(%q) = %v literal=%v, want %s", tt.host, ip, literal, tt.ip)
		}
	}
}
