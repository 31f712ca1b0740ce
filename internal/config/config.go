// Package config reads config.toml and the environment into plain structs.
// It is a leaf: the standard library and the TOML parser only. The one
// precedence rule is flag > environment > file > default; this package
// applies file and environment, cmd/turnstone applies flags on top.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// File mirrors config.toml. Pointer fields distinguish "not set" from zero.
type File struct {
	API     API                  `toml:"api"`
	Model   Model                `toml:"model"`
	Tools   Tools                `toml:"tools"`
	Session Session              `toml:"session"`
	MCP     MCP                  `toml:"mcp"`
	Models  map[string]ModelInfo `toml:"models"`
}

// API holds endpoints and keys.
type API struct {
	BaseURL       string `toml:"base_url"`
	APIKey        string `toml:"api_key"`
	Provider      string `toml:"provider"`
	TavilyKey     string `toml:"tavily_key"`
	TavilyBaseURL string `toml:"tavily_base_url"`
}

// Model holds the default model settings.
type Model struct {
	Name            string   `toml:"name"`
	Temperature     *float64 `toml:"temperature"`
	MaxTokens       int      `toml:"max_tokens"`
	ReasoningEffort string   `toml:"reasoning_effort"`
	ContextWindow   int      `toml:"context_window"`
}

// Tools holds tool settings.
type Tools struct {
	Timeout              float64 `toml:"timeout"`
	Truncation           int     `toml:"truncation"`
	SkipPermissions      bool    `toml:"skip_permissions"`
	Search               string  `toml:"search"`
	SearchThreshold      int     `toml:"search_threshold"`
	SearchMaxResults     int     `toml:"search_max_results"`
	Python               string  `toml:"python"`
	AllowUnsandboxed     bool    `toml:"allow_unsandboxed"`
	WebFetchAllowPrivate bool    `toml:"web_fetch_allow_private"`
	WebFetchMaxBytes     int64   `toml:"web_fetch_max_bytes"`
}

// Session holds conversation settings.
type Session struct {
	Instructions string `toml:"instructions"`
}

// MCP holds the MCP client settings and servers.
type MCP struct {
	ConfigPath      string               `toml:"config_path"`
	RefreshInterval *float64             `toml:"refresh_interval"`
	StartupTimeout  float64              `toml:"startup_timeout"`
	CallTimeout     float64              `toml:"call_timeout"`
	Servers         map[string]MCPServer `toml:"servers"`
}

// MCPServer is one [mcp.servers.NAME] table.
type MCPServer struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	Cwd     string            `toml:"cwd"`
	Type    string            `toml:"type"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
}

// ModelInfo is one [models.NAME] table.
type ModelInfo struct {
	Model         string       `toml:"model"`
	BaseURL       string       `toml:"base_url"`
	APIKey        string       `toml:"api_key"`
	Provider      string       `toml:"provider"`
	ContextWindow int          `toml:"context_window"`
	Capabilities  Capabilities `toml:"capabilities"`
}

// Capabilities overrides the built-in capability table for one model.
type Capabilities struct {
	SupportsVision      *bool `toml:"supports_vision"`
	SupportsWebSearch   *bool `toml:"supports_web_search"`
	SupportsToolSearch  *bool `toml:"supports_tool_search"`
	SupportsTemperature *bool `toml:"supports_temperature"`
	ContextWindow       *int  `toml:"context_window"`
	MaxOutput           *int  `toml:"max_output"`
}

// DefaultPath is $XDG_CONFIG_HOME/turnstone/config.toml, falling back to
// ~/.config/turnstone/config.toml.
func DefaultPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "turnstone", "config.toml")
}

// Load reads a config file. A missing file is not an error (an empty File
// is returned) unless required is set (an explicit --config). Unknown keys
// are returned as warnings so a typo is visible but never fatal.
func Load(path string, required bool) (*File, []string, error) {
	f := &File{}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !required {
			return f, nil, nil
		}
		return nil, nil, fmt.Errorf("read config %s: %w", path, err)
	}
	md, err := toml.Decode(string(b), f)
	if err != nil {
		return nil, nil, fmt.Errorf("parse config %s: %w (fix the file or point --config elsewhere)", path, err)
	}
	var warnings []string
	for _, k := range md.Undecoded() {
		warnings = append(warnings, fmt.Sprintf("config %s: unknown key %q ignored", path, k.String()))
	}
	sort.Strings(warnings)
	return f, warnings, nil
}

// ApplyEnv lays environment variables over the file's values (env beats
// file). Keys for the Anthropic provider are chosen by the caller once the
// provider is known; see APIKeyEnv.
func (f *File) ApplyEnv(getenv func(string) string) {
	set := func(dst *string, name string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	set(&f.API.BaseURL, "OPENAI_BASE_URL")
	set(&f.API.TavilyKey, "TAVILY_API_KEY")
	set(&f.Model.Name, "TURNSTONE_MODEL")
}

// APIKeyEnv names the environment variable holding the key for a provider.
func APIKeyEnv(provider string) string {
	if strings.EqualFold(provider, "anthropic") {
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}
