// Package engine drives a conversation: it streams the model's answer,
// prepares, approves and executes the tool calls it asks for, feeds the
// results back and repeats until the model answers without tools. Every
// user-facing interaction goes through the UI interface; nothing here prints,
// reads stdin or knows which frontend it serves.
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// Defaults of behavior.md §1.1 (tool timeout lives with the tools).
const (
	DefaultMaxTokens     = 32768
	DefaultContextWindow = 131072
	DefaultTemperature   = 0.5
	DefaultEffort        = "medium"
	// Workers is the size of the pool that runs several calls of one batch.
	Workers = 4
)

// ErrInterrupted is returned by Send when its context was cancelled
// (Ctrl-C). The history is left so that the model can continue from it.
var ErrInterrupted = errors.New("turn interrupted")

// Options configures a Session. Provider, Catalog and UI are required.
type Options struct {
	Provider llm.Provider
	Model    string
	Catalog  tool.Catalog
	UI       UI
	// WorkspaceID identifies the conversation; a random one when empty.
	WorkspaceID string

	MaxTokens       int      // 0 → DefaultMaxTokens
	Temperature     *float64 // nil → omitted from requests
	ReasoningEffort string
	ContextWindow   int // 0 → DefaultContextWindow
	// ToolTruncation bounds every tool result (chars); 0 → automatic,
	// context window × chars-per-token × 0.5 (behavior.md §1.7).
	ToolTruncation int
	// SkipPermissions approves every call without asking.
	SkipPermissions bool
	// Instructions are appended to the system prompt verbatim.
	Instructions string
	// Redact, when set, is applied to every tool result and output chunk
	// before anyone sees it, so known secrets (API keys) never reach the
	// model or a frontend.
	Redact func(string) string
}

// Turn is the outcome of one Send.
type Turn struct {
	// Text is the final assistant answer.
	Text string
	// Usage sums the token usage of every model request of the turn.
	Usage llm.Usage
	// LastUsage is the usage of the turn's last request: its prompt tokens
	// are how full the context window is.
	LastUsage llm.Usage
}

// Session is one conversation. Send must not be called concurrently; the
// setters may be called between turns.
type Session struct {
	opts Options
	ui   UI

	mu            sync.Mutex
	model         string
	messages      []llm.Message
	always        map[string]bool
	debug         bool
	charsPerToken float64
	truncLimit    int
	callSeq       int
}

// New checks the options and creates a session.
func New(opts Options) (*Session, error) {
	switch {
	case opts.Provider == nil:
		return nil, errors.New("engine: no model provider configured")
	case opts.Catalog == nil:
		return nil, errors.New("engine: no tool catalog configured")
	case opts.UI == nil:
		return nil, errors.New("engine: no UI configured")
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.ContextWindow <= 0 {
		opts.ContextWindow = DefaultContextWindow
	}
	if opts.Redact == nil {
		opts.Redact = func(s string) string { return s }
	}
	if opts.WorkspaceID == "" {
		opts.WorkspaceID = newID()
	}
	s := &Session{opts: opts, ui: opts.UI, model: opts.Model, always: map[string]bool{}, charsPerToken: 4.0}
	s.truncLimit = s.autoTruncation()
	return s, nil
}

// newID returns a random 32-hex identifier.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ID is the workspace id.
func (s *Session) ID() string { return s.opts.WorkspaceID }

// Model is the current model name.
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// SetModel switches the model for the next request and recomputes the
// automatic truncation limit with the chars-per-token ratio measured so far.
func (s *Session) SetModel(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = name
	s.truncLimit = s.autoTruncation()
}

// SetDebug toggles request summaries as info events.
func (s *Session) SetDebug(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.debug = on
}

// Clear drops the history; the per-session "always" approvals stay.
func (s *Session) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = nil
}

// Messages returns a copy of the history (without the system prompt).
func (s *Session) Messages() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Message(nil), s.messages...)
}

// TruncationLimit is the current bound on tool results, in chars.
func (s *Session) TruncationLimit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncLimit
}

func (s *Session) autoTruncation() int {
	if s.opts.ToolTruncation > 0 {
		return s.opts.ToolTruncation
	}
	return int(float64(s.opts.ContextWindow) * s.charsPerToken * 0.5)
}

func (s *Session) emit(e Event) { s.ui.Emit(e) }

func (s *Session) state(st State) { s.emit(StateEvent{State: st}) }

func (s *Session) append(msgs ...llm.Message) {
	s.mu.Lock()
	s.messages = append(s.messages, msgs...)
	s.mu.Unlock()
}

// Send runs one user turn to completion: model → tools → model … until the
// model answers without tool calls. It returns ErrInterrupted (wrapped) when
// ctx is cancelled, and the provider's error when the endpoint fails; in
// both cases the history stays consistent and the session can go on.
func (s *Session) Send(ctx context.Context, text string) (Turn, error) {
	s.append(llm.Message{Role: llm.RoleUser, Content: text})
	var turn Turn
	for {
		resp, err := s.stream(ctx)
		if err != nil {
			s.state(StateError)
			if ctx.Err() != nil {
				return turn, fmt.Errorf("%w while the model was answering", ErrInterrupted)
			}
			return turn, err
		}
		addUsage(&turn.Usage, resp.Usage)
		turn.LastUsage = resp.Usage
		msg := resp.Message
		if len(msg.ToolCalls) == 0 {
			if msg.Content != "" || len(msg.ProviderBlocks) > 0 {
				s.append(msg)
			}
			turn.Text = msg.Content
			s.state(StateIdle)
			return turn, nil
		}
		s.append(msg)
		s.state(StateRunning)
		feedback := s.runTools(ctx, msg.ToolCalls)
		if feedback != "" {
			s.append(llm.Message{Role: llm.RoleUser, Content: feedback})
		}
		if ctx.Err() != nil {
			s.state(StateError)
			return turn, fmt.Errorf("%w while tools were running", ErrInterrupted)
		}
	}
}

func addUsage(sum *llm.Usage, u llm.Usage) {
	sum.PromptTokens += u.PromptTokens
	sum.CompletionTokens += u.CompletionTokens
	sum.TotalTokens += u.TotalTokens
}
