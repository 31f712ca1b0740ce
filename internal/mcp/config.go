// Package mcp is turnstone's client for Model Context Protocol servers: it
// connects the configured servers (stdio subprocesses or HTTP endpoints)
// through the official Go SDK, turns their tools into tool.Tool values named
// mcp__{server}__{tool}, keeps the merged list current (push notifications,
// a periodic timer, manual refresh) and reconnects servers that crash.
//
// One Manager serves every session of a process; sessions read its
// copy-on-write snapshot and are told about changes through listeners.
package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ServerConfig is one configured server: a [mcp.servers.NAME] table in
// config.toml or one entry of an mcpServers JSON file.
type ServerConfig struct {
	Name    string            `json:"-" toml:"-"`
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env" toml:"env"`
	Cwd     string            `json:"cwd" toml:"cwd"`
	Type    string            `json:"type" toml:"type"`
	URL     string            `json:"url" toml:"url"`
	Headers map[string]string `json:"headers" toml:"headers"`
}

// Transport names as shown by /mcp.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Transport returns the transport a server uses: "http" for type http or
// streamable-http (or any url without a type), "sse" for the legacy
// HTTP+SSE protocol (type sse), "stdio" otherwise.
func (c ServerConfig) Transport() string {
	switch strings.ToLower(strings.TrimSpace(c.Type)) {
	case "http", "streamable-http", "streamable_http", "streamablehttp":
		return TransportHTTP
	case "sse":
		return TransportSSE
	case "stdio":
		return TransportStdio
	}
	if c.URL != "" {
		return TransportHTTP
	}
	return TransportStdio
}

// Validate reports a configuration problem that prevents connecting: a
// reserved name, an unknown type, a missing command or url.
func (c ServerConfig) Validate() error {
	if c.Name == "" {
		return errors.New("MCP server has an empty name")
	}
	if strings.Contains(c.Name, "__") {
		return fmt.Errorf("MCP server name %q contains \"__\", which is reserved as the separator in tool names (mcp__{server}__{tool}); rename the server", c.Name)
	}
	switch strings.ToLower(strings.TrimSpace(c.Type)) {
	case "", "stdio", "http", "streamable-http", "streamable_http", "streamablehttp", "sse":
	default:
		return fmt.Errorf("MCP server %q has unknown type %q; use \"stdio\", \"http\" (streamable HTTP) or \"sse\"", c.Name, c.Type)
	}
	switch c.Transport() {
	case TransportStdio:
		if strings.TrimSpace(c.Command) == "" {
			return fmt.Errorf("MCP server %q has no command; set command (stdio) or url (HTTP)", c.Name)
		}
	default:
		if strings.TrimSpace(c.URL) == "" {
			return fmt.Errorf("MCP server %q has type %q but no url", c.Name, c.Type)
		}
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			return fmt.Errorf("MCP server %q has url %q; it must start with http:// or https://", c.Name, c.URL)
		}
	}
	return nil
}

// LoadJSONConfig reads a standard MCP configuration file:
//
//	{"mcpServers": {"name": {"command": "...", "args": [...], "env": {...}}}}
//
// Servers are returned in file order. Entries are not validated here (a bad
// entry is reported when the Manager connects, so the others still work).
func LoadJSONConfig(path string) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read MCP config %s: %w", path, err)
	}
	servers, err := ParseJSONConfig(data)
	if err != nil {
		return nil, fmt.Errorf("MCP config %s: %w", path, err)
	}
	return servers, nil
}

// ParseJSONConfig parses the content of an mcpServers JSON file, keeping the
// order of the servers as written.
func ParseJSONConfig(data []byte) ([]ServerConfig, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	raw, ok := top["mcpServers"]
	if !ok {
		return nil, errors.New(`no "mcpServers" object`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if tok == nil {
			return nil, nil
		}
		return nil, errors.New(`"mcpServers" must be an object of server entries`)
	}
	var out []ServerConfig
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("mcpServers: %w", err)
		}
		name, _ := tok.(string)
		var sc ServerConfig
		if err := dec.Decode(&sc); err != nil {
			return nil, fmt.Errorf("mcpServers.%s: %w", name, err)
		}
		sc.Name = name
		out = append(out, sc)
	}
	return out, nil
}
