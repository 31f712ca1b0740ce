package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"turnstone/internal/config"
	"turnstone/internal/llm"
	"turnstone/internal/llm/anthropic"
	"turnstone/internal/llm/openai"
	"turnstone/internal/mcp"
	"turnstone/internal/netguard"
	"turnstone/internal/secrets"
	"turnstone/internal/tool"
	"turnstone/internal/tool/compute"
	"turnstone/internal/tool/fileops"
	"turnstone/internal/tool/info"
	"turnstone/internal/toolsearch"
	"turnstone/internal/ui/terminal"
)

// app holds what one process shares: the provider, the built-in tools and
// the MCP manager. Sessions are created from it.
type app struct {
	set       *settings
	provider  llm.Provider
	schemas   *tool.Schemas
	registry  *tool.Registry
	overrides map[string]llm.CapabilityOverride
	// model is the current model name; /model changes it through the
	// session, and tools that depend on the model (vision) read it here.
	model atomic.Pointer[string]
	// redactor hides turnstone's own credentials in tool output.
	redactor *secrets.Redactor
	// logSink receives background events (MCP) while a frontend runs.
	logSink atomic.Pointer[func(string)]
	// mcp is shared by every session; nil when no servers are configured.
	mcp *mcp.Manager
}

// newApp builds the provider and the tool registry. It does no network I/O
// except model auto-detection, which needs the endpoint anyway.
func newApp(ctx context.Context, s *settings, needModel bool) (*app, error) {
	a := &app{set: s, schemas: tool.MustLoadSchemas(), overrides: capabilityOverrides(s.file)}
	secretValues := []string{s.apiKey, s.file.API.APIKey, s.file.API.TavilyKey}
	for _, name := range secrets.EnvNames() {
		secretValues = append(secretValues, os.Getenv(name))
	}
	a.redactor = secrets.NewRedactor(secretValues...)
	if needModel && s.model == "" {
		m, err := detectModel(ctx, s)
		if err != nil {
			return nil, err
		}
		s.model = m
	}
	a.setModel(s.model)
	if !s.contextWindowSet {
		if cw := a.caps().ContextWindow; cw > 0 {
			s.contextWindow = cw
		}
	}
	a.provider = a.newProvider()
	reg, err := tool.NewRegistry(a.builtinTools()...)
	if err != nil {
		return nil, err
	}
	a.registry = reg
	return a, nil
}

// openApp builds the app and, when withMCP is set, connects the MCP
// servers. The caller must close it.
func openApp(ctx context.Context, s *settings, needModel, withMCP bool) (*app, error) {
	a, err := newApp(ctx, s, needModel)
	if err != nil {
		return nil, err
	}
	if withMCP {
		if err := a.startMCP(ctx); err != nil {
			a.close()
			return nil, err
		}
	}
	return a, nil
}

func (a *app) setModel(name string) { a.model.Store(&name) }

// caps are the current model's capabilities (table + config overrides).
func (a *app) caps() llm.Capabilities {
	return llm.LookupCapabilities(*a.model.Load(), a.overrides)
}

func (a *app) newProvider() llm.Provider {
	s := a.set
	capsOf := func(model string) llm.Capabilities { return llm.LookupCapabilities(model, a.overrides) }
	if s.provider == llm.ProviderAnthropic {
		return anthropic.New(anthropic.Options{BaseURL: s.baseURL, APIKey: s.apiKey, Capabilities: capsOf})
	}
	return openai.New(openai.Options{BaseURL: s.baseURL, APIKey: s.apiKey, Capabilities: capsOf})
}

// capabilityOverrides turns [models.NAME.capabilities] tables into
// overrides keyed by both the alias and the model name.
func capabilityOverrides(f *config.File) map[string]llm.CapabilityOverride {
	out := map[string]llm.CapabilityOverride{}
	for alias, m := range f.Models {
		c := m.Capabilities
		o := llm.CapabilityOverride{
			SupportsVision: c.SupportsVision, SupportsWebSearch: c.SupportsWebSearch,
			SupportsToolSearch: c.SupportsToolSearch, SupportsTemperature: c.SupportsTemperature,
			ContextWindow: c.ContextWindow, MaxOutput: c.MaxOutput,
		}
		out[alias] = o
		if m.Model != "" {
			out[m.Model] = o
		}
	}
	return out
}

// builtinTools constructs every built-in tool whose executor exists.
func (a *app) builtinTools() []tool.Tool {
	sc := a.schemas
	read := fileops.NewReadSet()
	vision := func() bool { return a.caps().SupportsVision }
	f := a.set.file
	return []tool.Tool{
		fileops.NewBash(sc.MustSpec("bash"), fileops.BashOptions{Timeout: a.set.toolTimeout, Env: secrets.ScrubEnv(os.Environ())}),
		fileops.NewReadFile(sc.MustSpec("read_file"), read, fileops.ReadFileOptions{Vision: vision}),
		fileops.NewWriteFile(sc.MustSpec("write_file"), read),
		fileops.NewEditFile(sc.MustSpec("edit_file"), read),
		fileops.NewSearch(sc.MustSpec("search"), fileops.SearchOptions{Timeout: a.set.toolTimeout}),
		compute.NewMath(sc.MustSpec("math"), compute.MathOptions{
			Python: f.Tools.Python, Timeout: a.set.toolTimeout, AllowUnsandboxed: f.Tools.AllowUnsandboxed,
		}),
		info.NewMan(sc.MustSpec("man"), info.ManOptions{}),
		info.NewWebFetch(sc.MustSpec("web_fetch"), info.WebFetchOptions{
			Client:   netguard.NewClient(netguard.Options{AllowPrivate: f.Tools.WebFetchAllowPrivate, Timeout: a.set.toolTimeout}),
			Model:    func() (llm.Provider, string) { return a.provider, *a.model.Load() },
			MaxBytes: f.Tools.WebFetchMaxBytes,
			Timeout:  a.set.toolTimeout,
		}),
		info.NewWebSearch(sc.MustSpec("web_search"), info.WebSearchOptions{
			Key: f.API.TavilyKey, BaseURL: f.API.TavilyBaseURL, Timeout: a.set.toolTimeout, ConfigPath: a.set.configPath,
		}),
	}
}

// detectModel asks an OpenAI-compatible endpoint for its models and takes
// the first, as vLLM and llama.cpp serve exactly one.
func detectModel(ctx context.Context, s *settings) (string, error) {
	if s.provider != llm.ProviderOpenAI {
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

// inner is the catalog shared by all sessions: built-in tools, then the
// live MCP snapshot.
func (a *app) inner() tool.Catalog {
	if a.mcp == nil {
		return a.registry
	}
	return mcp.NewCatalog(a.registry, a.mcp)
}

// catalog is what a main session offers: the shared catalog behind a
// per-session tool-search layer (expanded tools are per session).
func (a *app) catalog() *toolsearch.Catalog {
	return toolsearch.New(a.inner(), a.schemas.BuiltinNames(), toolsearch.Options{
		Mode: a.set.toolSearch, Threshold: a.set.searchThreshold, MaxResults: a.set.searchMax,
		Native: a.nativeToolSearch,
	})
}

// nativeToolSearch picks the tool-search tier for the current model.
func (a *app) nativeToolSearch() toolsearch.NativeKind {
	if !a.caps().NativeToolSearch {
		return toolsearch.NativeNone
	}
	if a.set.provider == llm.ProviderAnthropic {
		return toolsearch.NativeAnthropic
	}
	return toolsearch.NativeOpenAI
}

// banner lines shown under "Chat with {model}".
func (a *app) banner() []string {
	if a.mcp == nil {
		return nil
	}
	return []string{a.mcp.Summary()}
}

// replCommands are the extra slash commands the REPL offers.
func (a *app) replCommands() []terminal.Command { return []terminal.Command{a.mcpCommand()} }

// close releases process-wide resources (MCP server processes).
func (a *app) close() {
	if a.mcp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.mcp.Close(ctx)
	}
}
