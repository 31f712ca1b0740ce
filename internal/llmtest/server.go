// Package llmtest is a scripted fake model server for tests. Tests queue
// provider-neutral Replies; each model request consumes the next one and is
// answered in the wire format its path names (OpenAI chat completions in
// openai.go; other formats plug in through Server.Handle and formats.go).
// Every request is recorded for assertions.
//
//	s := llmtest.NewServer()
//	defer s.Close()
//	s.Enqueue(llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "bash", Arguments: `{"command":"ls"}`}}},
//		llmtest.Reply{Content: "done"})
//	p := openai.New(openai.Options{BaseURL: s.URL()})
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// ModelID is the one model GET {base}/models lists.
const ModelID = "fake-model"

// Recorded is one request the server received.
type Recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// JSON is the decoded body, nil when the body is not a JSON object.
	JSON map[string]any
}

// Stream reports whether the request asked for a streamed answer.
func (r Recorded) Stream() bool {
	b, _ := r.JSON["stream"].(bool)
	return b
}

// Exchange is one scripted request/reply pair handed to an Encoder.
type Exchange struct {
	Request Recorded
	Reply   Reply
	// ID is unique per exchange ("fake-3"); encoders derive response and
	// tool-call ids from it.
	ID string
}

// Model returns the model the request named, or ModelID.
func (ex Exchange) Model() string {
	if m, _ := ex.Request.JSON["model"].(string); m != "" {
		return m
	}
	return ModelID
}

// Encoder answers one exchange in a wire format. ctx is done when the client
// goes away or the server closes; a Hang reply blocks on it.
type Encoder func(ctx context.Context, w http.ResponseWriter, ex Exchange)

// Server is a scripted fake model endpoint. It is safe for concurrent use.
type Server struct {
	srv       *httptest.Server
	done      chan struct{}
	closeOnce sync.Once

	mu        sync.Mutex
	encoders  map[string]Encoder // path suffix → encoder
	queue     []Reply
	responder func(Recorded) Reply
	requests  []Recorded
	chat      []Recorded
	seq       int
}

// NewServer starts a server on a local port with the wire formats of
// formats.go registered.
func NewServer() *Server {
	s := &Server{done: make(chan struct{}), encoders: map[string]Encoder{}}
	for suffix, enc := range wireFormats() {
		s.encoders[suffix] = enc
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL returns the OpenAI-style base URL, "http://127.0.0.1:PORT/v1".
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// RootURL returns the server root without a version path (Anthropic-style
// clients append "/v1/messages" themselves).
func (s *Server) RootURL() string { return s.srv.URL }

// Close releases hanging handlers and shuts the server down.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Handle answers requests whose path ends with pathSuffix (for example
// "/messages") with enc, replacing an earlier encoder for that suffix.
func (s *Server) Handle(pathSuffix string, enc Encoder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.encoders[pathSuffix] = enc
}

// Enqueue appends replies to the script; each model request takes the next.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Respond sets a function that answers model requests once the queued
// script is used up (nil removes it).
func (s *Server) Respond(fn func(req Recorded) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = fn
}

// Pending returns the number of queued replies not yet consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far (model calls and
// GET /models), in arrival order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ChatRequests returns only the model calls (requests that consumed a
// reply or found the script empty), in arrival order.
func (s *Server) ChatRequests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.chat)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if len(body) > 0 {
		_ = json.Unmarshal(body, &rec.JSON) // stays nil for non-JSON bodies
	}

	s.mu.Lock()
	s.requests = append(s.requests, rec)
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		s.mu.Unlock()
		writeModels(w)
		return
	}
	enc := s.encoderFor(r.URL.Path)
	if enc == nil {
		s.mu.Unlock()
		WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("llmtest: no wire format for %s %s", r.Method, r.URL.Path)}})
		return
	}
	s.chat = append(s.chat, rec)
	s.seq++
	ex := Exchange{Request: rec, ID: fmt.Sprintf("fake-%d", s.seq)}
	switch {
	case len(s.queue) > 0:
		ex.Reply = s.queue[0]
		s.queue = s.queue[1:]
	case s.responder != nil:
		fn := s.responder
		s.mu.Unlock()
		ex.Reply = fn(rec)
		s.mu.Lock()
	default:
		ex.Reply = Reply{Status: http.StatusInternalServerError, ErrorMessage: fmt.Sprintf(
			"llmtest: script ran out: no reply queued for model request %d (%s %s)", s.seq, r.Method, r.URL.Path)}
	}
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() { // a hanging handler must end when the server closes
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()

	if ex.Reply.Delay > 0 && !sleep(ctx, ex.Reply.Delay) {
		return
	}
	if ex.Reply.RawSSE != "" {
		writeRaw(w, ex)
		return
	}
	enc(ctx, w, ex)
}

// encoderFor returns the encoder with the longest matching path suffix.
// s.mu must be held.
func (s *Server) encoderFor(path string) Encoder {
	best := ""
	var enc Encoder
	for suffix, e := range s.encoders {
		if strings.HasSuffix(path, suffix) && len(suffix) > len(best) {
			best, enc = suffix, e
		}
	}
	return enc
}

// writeModels lists ModelID in a shape both OpenAI-style and
// Anthropic-style clients accept.
func writeModels(w http.ResponseWriter) {
	WriteJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": ModelID, "object": "model", "type": "model", "display_name": "Fake Model",
			"created": 0, "created_at": "2026-01-01T00:00:00Z", "owned_by": "llmtest",
		}},
		"has_more": false, "first_id": ModelID, "last_id": ModelID,
	})
}

// writeRaw sends Reply.RawSSE verbatim (malformed-stream tests).
func writeRaw(w http.ResponseWriter, ex Exchange) {
	if ex.Request.Stream() {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	status := ex.Reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, ex.Reply.RawSSE)
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
