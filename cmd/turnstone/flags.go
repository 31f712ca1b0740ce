package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"turnstone/internal/config"
	"turnstone/internal/llm"
	"turnstone/internal/toolsearch"
)

// flags are the global flags; they work before or after a subcommand.
type flags struct {
	configPath      string
	baseURL         string
	apiKey          string
	provider        string
	model           string
	temperature     float64
	maxTokens       int
	effort          string
	contextWindow   int
	instructions    string
	toolTimeout     float64
	toolTruncation  int
	skipPermissions bool
	toolSearch      string
	searchThreshold int
	searchMax       int
	mcpConfig       string
	mcpRefresh      float64
	prompt          string
	outputFormat    string
}

func (f *flags) register(root *cobra.Command) {
	p := root.PersistentFlags()
	p.StringVar(&f.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/turnstone/config.toml)")
	p.StringVar(&f.baseURL, "base-url", "", "model endpoint base URL (env OPENAI_BASE_URL; default http://localhost:8000/v1)")
	p.StringVar(&f.apiKey, "api-key", "", "API key (env OPENAI_API_KEY or ANTHROPIC_API_KEY by provider)")
	p.StringVar(&f.provider, "provider", "", "wire protocol: openai or anthropic (default: detected from --base-url)")
	p.StringVar(&f.model, "model", "", "model name (default: the first model the endpoint lists)")
	p.Float64Var(&f.temperature, "temperature", 0.5, "sampling temperature")
	p.IntVar(&f.maxTokens, "max-tokens", 32768, "maximum tokens per response")
	p.StringVar(&f.effort, "reasoning-effort", "medium", "reasoning effort: none, minimal, low, medium, high")
	p.IntVar(&f.contextWindow, "context-window", 131072, "model context window in tokens")
	p.StringVar(&f.instructions, "instructions", "", "extra instructions appended to the system prompt")
	p.Float64Var(&f.toolTimeout, "tool-timeout", 120, "timeout in seconds for bash, search and math")
	p.IntVar(&f.toolTruncation, "tool-truncation", 0, "bound on each tool result in chars (0 = auto: half the context window in chars)")
	p.BoolVar(&f.skipPermissions, "skip-permissions", false, "run every tool call without asking")
	p.StringVar(&f.toolSearch, "tool-search", "auto", "dynamic tool search: auto, on or off")
	p.IntVar(&f.searchThreshold, "tool-search-threshold", 20, "tool count at which auto tool search activates")
	p.IntVar(&f.searchMax, "tool-search-max-results", 5, "maximum tools returned per tool_search call")
	p.StringVar(&f.mcpConfig, "mcp-config", "", "MCP servers file in the standard mcpServers JSON format")
	p.Float64Var(&f.mcpRefresh, "mcp-refresh-interval", 14400, "seconds between MCP tool-list polls for servers without push (0 disables)")
	root.Flags().StringVarP(&f.prompt, "prompt", "p", "", "run one prompt headless and exit (- reads it from stdin)")
	root.Flags().StringVar(&f.outputFormat, "output-format", "text", "headless output: text, json or stream-json")
}

// settings are the resolved values: flag > env > file > default.
type settings struct {
	file          *config.File
	configPath    string
	baseURL       string
	apiKey        string
	provider      string
	model         string
	temperature   *float64
	maxTokens     int
	effort        string
	contextWindow int
	// contextWindowSet: given by flag or file; otherwise the capability
	// table's value for the model wins over the default.
	contextWindowSet bool
	instructions     string
	toolTimeout      time.Duration
	toolTruncation   int
	skipPermissions  bool
	toolSearch       string
	searchThreshold  int
	searchMax        int
	mcpConfig        string
	mcpRefresh       time.Duration
}

const defaultBaseURL = "http://localhost:8000/v1"

func resolve(cmd *cobra.Command, f *flags) (*settings, error) {
	changed := func(name string) bool {
		fl := cmd.Flags().Lookup(name)
		if fl == nil {
			fl = cmd.InheritedFlags().Lookup(name)
		}
		return fl != nil && fl.Changed
	}
	path, required := f.configPath, true
	if path == "" {
		path, required = config.DefaultPath(os.Getenv), false
	}
	file, warns, err := config.Load(path, required)
	if err != nil {
		return nil, err
	}
	file.ApplyEnv(os.Getenv)
	for _, w := range warns {
		fmt.Fprintln(os.Stderr, "turnstone: warning:", w)
	}
	s := &settings{file: file, configPath: path}

	pick := func(flagName, flagVal, fileVal, def string) string {
		return pickValue(changed(flagName), flagVal, fileVal, def)
	}
	s.baseURL = pick("base-url", f.baseURL, file.API.BaseURL, "")
	s.provider = pick("provider", f.provider, file.API.Provider, "")
	if s.provider == "" {
		s.provider = llm.DetectProvider(s.baseURL)
	}
	if s.provider != "openai" && s.provider != "anthropic" {
		return nil, fmt.Errorf("unknown provider %q: use --provider openai or --provider anthropic", s.provider)
	}
	if s.baseURL == "" {
		s.baseURL = defaultBaseURL
		if s.provider == "anthropic" {
			s.baseURL = "https://api.anthropic.com"
		}
	}
	// The key's environment variable depends on the provider, so env and
	// file are layered here: flag, then env, then [api] api_key.
	s.apiKey = pick("api-key", f.apiKey, os.Getenv(config.APIKeyEnv(s.provider)), file.API.APIKey)
	s.model = pick("model", f.model, file.Model.Name, "")
	switch {
	case changed("temperature"):
		s.temperature = &f.temperature
	case file.Model.Temperature != nil:
		s.temperature = file.Model.Temperature
	default:
		t := 0.5
		s.temperature = &t
	}
	s.maxTokens = pickValue(changed("max-tokens"), f.maxTokens, file.Model.MaxTokens, 32768)
	s.effort = pick("reasoning-effort", f.effort, file.Model.ReasoningEffort, "medium")
	s.contextWindow = pickValue(changed("context-window"), f.contextWindow, file.Model.ContextWindow, 131072)
	s.contextWindowSet = changed("context-window") || file.Model.ContextWindow != 0
	s.instructions = pick("instructions", f.instructions, file.Session.Instructions, "")
	timeout := pickValue(changed("tool-timeout"), f.toolTimeout, file.Tools.Timeout, 120)
	if timeout <= 0 {
		return nil, fmt.Errorf("tool timeout must be positive seconds (got %v from --tool-timeout or [tools] timeout in %s)", timeout, path)
	}
	s.toolTimeout = time.Duration(timeout * float64(time.Second))
	s.toolTruncation = pickValue(changed("tool-truncation"), f.toolTruncation, file.Tools.Truncation, 0)
	s.skipPermissions = f.skipPermissions || (!changed("skip-permissions") && file.Tools.SkipPermissions)
	s.toolSearch = pick("tool-search", f.toolSearch, file.Tools.Search, "auto")
	s.searchThreshold = pickValue(changed("tool-search-threshold"), f.searchThreshold, file.Tools.SearchThreshold, 20)
	s.searchMax = pickValue(changed("tool-search-max-results"), f.searchMax, file.Tools.SearchMaxResults, 5)
	s.mcpConfig = pick("mcp-config", f.mcpConfig, file.MCP.ConfigPath, "")
	refresh := 14400.0
	if file.MCP.RefreshInterval != nil {
		refresh = *file.MCP.RefreshInterval
	}
	refresh = pickValue(changed("mcp-refresh-interval"), f.mcpRefresh, 0, refresh)
	if refresh < 0 {
		return nil, fmt.Errorf("MCP refresh interval must be 0 (off) or more seconds (got %v from --mcp-refresh-interval or [mcp] refresh_interval in %s)", refresh, path)
	}
	s.mcpRefresh = time.Duration(refresh * float64(time.Second))
	if !toolsearch.ValidMode(s.toolSearch) {
		return nil, fmt.Errorf("tool search mode %q (from --tool-search or [tools] search in %s) must be auto, on or off", s.toolSearch, path)
	}
	if s.searchThreshold <= 0 || s.searchMax <= 0 {
		return nil, fmt.Errorf("tool search threshold and max results must be positive (got %d and %d; set by --tool-search-threshold/--tool-search-max-results or [tools] search_threshold/search_max_results in %s)", s.searchThreshold, s.searchMax, path)
	}
	if s.maxTokens <= 0 || s.contextWindow <= 0 {
		return nil, fmt.Errorf("max tokens and context window must be positive (got %d and %d from --max-tokens/--context-window or [model] max_tokens/context_window in %s)", s.maxTokens, s.contextWindow, path)
	}
	return s, nil
}

// pickValue applies the precedence for one setting: the flag when given,
// else the file's value when set (non-zero), else the default.
func pickValue[T comparable](flagSet bool, flagVal, fileVal, def T) T {
	var zero T
	switch {
	case flagSet:
		return flagVal
	case fileVal != zero:
		return fileVal
	}
	return def
}
