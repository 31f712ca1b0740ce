package mcp

import (
	"strings"
	"testing"
)

func TestExposedName(t *testing.T) {
	long := strings.Repeat("x", 80)
	cases := []struct {
		server, tool string
		want         string // exact, or "" to check only the rules
		changed      bool
	}{
		{"github", "search_repos", "mcp__github__search_repos", false},
		{"srv", "get-tiny-image", "mcp__srv__get-tiny-image", false},
		{"srv", "tool__with__underscores", "mcp__srv__tool__with__underscores", false},
		{"srv", "odd.name with spaces", "", true},
		{"my.server", "query", "", true},
		{"srv", long, "", true},
		{"srv", "ünïcode", "", true},
	}
	for _, c := range cases {
		got := exposedName(c.server, c.tool, 0)
		if !safeName(got) {
			t.Errorf("exposedName(%q, %q) = %q: not provider-safe", c.server, c.tool, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("exposedName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if c.changed && got == rawName(c.server, c.tool) {
			t.Errorf("exposedName(%q, %q) was not changed", c.server, c.tool)
		}
		if again := exposedName(c.server, c.tool, 0); again != got {
			t.Errorf("exposedName not deterministic: %q then %q", got, again)
		}
	}
}

func TestExposedNameNoCollisions(t *testing.T) {
	// These all sanitize to the same base; the hash keeps them apart.
	tools := []string{"a.b", "a b", "a/b", "a:b", "a_b"}
	a := newNameAssigner()
	seen := map[string]string{}
	for _, tl := range tools {
		n := a.assign("srv", tl)
		if n == "" || !safeName(n) {
			t.Fatalf("assign(%q) = %q", tl, n)
		}
		if prev, dup := seen[n]; dup {
			t.Fatalf("%q and %q both named %q", prev, tl, n)
		}
		seen[n] = tl
	}
	if seen["mcp__srv__a_b"] != "a_b" {
		t.Errorf("the already-safe name should keep its plain form: %v", seen)
	}
	// Long names that differ only after the cut stay distinct.
	base := strings.Repeat("y", 70)
	n1, n2 := a.assign("srv", base+"1"), a.assign("srv", base+"2")
	if n1 == n2 || len(n1) > maxToolName || len(n2) > maxToolName {
		t.Errorf("long names: %q %q", n1, n2)
	}
	// A server listing the same tool twice: the second is dropped.
	if n := a.assign("srv", "a_b"); n != "" {
		t.Errorf("duplicate tool got a name: %q", n)
	}
	// A plain name that happens to equal a hashed one gets a longer hash.
	hashed := exposedName("srv", "a.b", 0)
	b := newNameAssigner()
	b.used[hashed] = true
	if n := b.assign("srv", "a.b"); n == hashed || !safeName(n) {
		t.Errorf("collision not resolved: %q", n)
	}
}
