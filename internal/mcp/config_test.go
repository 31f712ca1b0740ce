package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseJSONConfig(t *testing.T) {
	data := `{"mcpServers": {
		"zeta": {"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "t"}},
		"alpha": {"type": "streamable-http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
		"legacy": {"type": "sse", "url": "http://localhost:9/sse"},
		"plain": {"url": "http://localhost:9/mcp"}
	}, "other": 1}`
	got, err := ParseJSONConfig([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var names, transports []string
	for _, s := range got {
		names = append(names, s.Name)
		transports = append(transports, s.Transport())
		if err := s.Validate(); err != nil {
			t.Errorf("validate %s: %v", s.Name, err)
		}
	}
	if !slices.Equal(names, []string{"zeta", "alpha", "legacy", "plain"}) {
		t.Errorf("order = %v", names)
	}
	if !slices.Equal(transports, []string{"stdio", "http", "sse", "http"}) {
		t.Errorf("transports = %v", transports)
	}
	if got[0].Env["TOKEN"] != "t" || got[0].Args[1] != "pkg" || got[1].Headers["Authorization"] != "Bearer x" {
		t.Errorf("fields lost: %+v", got)
	}
}

func TestParseJSONConfigErrors(t *testing.T) {
	cases := map[string]string{
		"not json":       `{`,
		"no mcpServers":  `{"servers": {}}`,
		"servers a list": `{"mcpServers": []}`,
		"bad entry":      `{"mcpServers": {"a": {"args": "x"}}}`,
	}
	for name, data := range cases {
		if _, err := ParseJSONConfig([]byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := LoadJSONConfig(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(t.TempDir(), "ok.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadJSONConfig(p); err != nil || len(got) != 1 || got[0].Name != "a" {
		t.Errorf("load: %v %v", got, err)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		cfg  ServerConfig
		want string // substring of the error, "" for valid
	}{
		{ServerConfig{Name: "ok", Command: "x"}, ""},
		{ServerConfig{Name: "bad__name", Command: "x"}, `contains "__"`},
		{ServerConfig{Name: "nocmd"}, "has no command"},
		{ServerConfig{Name: "h", Type: "http"}, "no url"},
		{ServerConfig{Name: "h", Type: "http", URL: "ftp://x"}, "must start with http"},
		{ServerConfig{Name: "t", Type: "websocket", URL: "http://x"}, "unknown type"},
		{ServerConfig{Name: "", Command: "x"}, "empty name"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "HOME=/h", "TOKEN=old"}, map[string]string{"TOKEN": "new", "A": "1"})
	want := []string{"PATH=/bin", "HOME=/h", "A=1", "TOKEN=new"}
	if !slices.Equal(got, want) {
		t.Errorf("childEnv = %v, want %v", got, want)
	}
}

func TestTailBuffer(t *testing.T) {
	b := newTailBuffer(16)
	_, _ = b.Write([]byte("line one\nline two\nline three\n"))
	if got := b.Tail(5); got != "two\nline three" {
		t.Errorf("tail = %q", got)
	}
	if got := b.Tail(1); got != "line three" {
		t.Errorf("tail(1) = %q", got)
	}
}
