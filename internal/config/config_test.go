package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAndEnv(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.toml")
	data := `
[api]
base_url = "http://file/v1"
tavily_key = "tv-file"
[model]
name = "file-model"
temperature = 0.2
[tools]
timeout = 45
typo = 1
[mcp.servers.github]
command = "npx"
args = ["-y", "srv"]
[mcp.servers.github.env]
TOKEN = "x"
[models.local.capabilities]
supports_vision = true
`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	f, warns, err := Load(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "tools.typo") {
		t.Fatalf("warnings = %v", warns)
	}
	if f.Tools.Timeout != 45 || *f.Model.Temperature != 0.2 || f.MCP.Servers["github"].Env["TOKEN"] != "x" {
		t.Fatalf("decoded %+v", f)
	}
	if v := f.Models["local"].Capabilities.SupportsVision; v == nil || !*v {
		t.Fatal("capability override lost")
	}
	env := map[string]string{"OPENAI_BASE_URL": "http://env/v1", "TAVILY_API_KEY": ""}
	f.ApplyEnv(func(k string) string { return env[k] })
	if f.API.BaseURL != "http://env/v1" || f.API.TavilyKey != "tv-file" {
		t.Fatalf("env layering: %+v", f.API)
	}
}

func TestLoadMissingAndBroken(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Load(filepath.Join(dir, "none.toml"), false); err != nil {
		t.Fatalf("missing optional config: %v", err)
	}
	if _, _, err := Load(filepath.Join(dir, "none.toml"), true); err == nil {
		t.Fatal("missing explicit config accepted")
	}
	bad := filepath.Join(dir, "bad.toml")
	_ = os.WriteFile(bad, []byte("[api\nx="), 0o600)
	if _, _, err := Load(bad, false); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("broken config error = %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}
	if p := DefaultPath(func(k string) string { return env[k] }); p != "/x/turnstone/config.toml" {
		t.Fatal(p)
	}
	env["XDG_CONFIG_HOME"] = ""
	if p := DefaultPath(func(k string) string { return env[k] }); p != "/h/.config/turnstone/config.toml" {
		t.Fatal(p)
	}
}
