package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"turnstone/internal/llm"
	"turnstone/internal/llm/openai"
	"turnstone/internal/tool"
	"turnstone/internal/tool/fileops"
	"turnstone/internal/ui/terminal"
)

// app holds what one process shares between sessions: the provider, the
// built-in tools and (later) the MCP manager.
type app struct {
	set      *settings
	provider llm.Provider
	schemas  *tool.Schemas
	registry *tool.Registry
}

// newApp builds the provider and the tool registry. It does no network I/O
// except model auto-detection, which needs the endpoint anyway.
func newApp(ctx context.Context, s *settings, needModel bool) (*app, error) {
	a := &app{set: s, schemas: tool.MustLoadSchemas()}
	a.provider = newProvider(s)
	if needModel && s.model == "" {
		m, err := detectModel(ctx, s)
		if err != nil {
			return nil, err
		}
		s.model = m
	}
	reg, err := tool.NewRegistry(a.builtinTools()...)
	if err != nil {
		return nil, err
	}
	a.registry = reg
	return a, nil
}

func newProvider(s *settings) llm.Provider {
	return openai.New(openai.Options{BaseURL: s.baseURL, APIKey: s.apiKey})
}

// builtinTools constructs every built-in tool whose executor exists.
func (a *app) builtinTools() []tool.Tool {
	sc := a.schemas
	read := fileops.NewReadSet()
	vision := func() bool { return false }
	return []tool.Tool{
		fileops.NewBash(sc.MustSpec("bash"), fileops.BashOptions{Timeout: a.set.toolTimeout}),
		fileops.NewReadFile(sc.MustSpec("read_file"), read, fileops.ReadFileOptions{Vision: vision}),
		fileops.NewWriteFile(sc.MustSpec("write_file"), read),
		fileops.NewEditFile(sc.MustSpec("edit_file"), read),
	}
}

// detectProvider picks the wire protocol from the endpoint's host.
func detectProvider(baseURL string) string {
	if u, err := url.Parse(baseURL); err == nil && strings.HasSuffix(u.Hostname(), "anthropic.com") {
		return "anthropic"
	}
	return "openai"
}

// detectModel asks an OpenAI-compatible endpoint for its models and takes
// the first, as vLLM and llama.cpp serve exactly one.
func detectModel(ctx context.Context, s *settings) (string, error) {
	if s.provider != "openai" {
		return "", fmt.Errorf("no model given: pass --model or set [model] name in %s", s.configPath)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := strings.TrimRight(s.baseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("bad --base-url %q: %w", s.baseURL, err)
	}
	if s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("model endpoint %s unreachable (%v): start the server or pass --base-url", s.baseURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("cannot list models at %s (HTTP %d): pass --model", u, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", fmt.Errorf("endpoint %s lists no models: pass --model", u)
	}
	return list.Data[0].ID, nil
}

// catalog is what a main session offers: the built-in registry for now.
func (a *app) catalog() tool.Catalog { return a.registry }

// banner lines shown under "Chat with {model}".
func (a *app) banner() []string { return nil }

// replCommands are the extra slash commands the REPL offers.
func (a *app) replCommands() []terminal.Command { return nil }

// close releases process-wide resources.
func (a *app) close() {}
