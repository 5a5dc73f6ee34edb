// Package endpointtest is the HTTP plumbing the scripted model endpoints
// (anthropictest, openaitest, geminiapitest) share: a server on a loopback
// port, a recorder of the requests it received, JSON and server-sent event
// writers, and the user-text helpers their Request types offer. Each
// endpoint keeps its own API's wire format; only what is the same for all
// of them lives here.
package endpointtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// MaxBody is the most of a request body an endpoint reads; real agents'
// conversations stay far below it.
const MaxBody = 64 << 20

// Server is an HTTP server on a loopback port.
type Server struct {
	// URL is the server's base URL, "http://127.0.0.1:PORT".
	URL string

	http *http.Server
}

// Serve serves h on a free loopback port until Close.
func Serve(h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), http: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	// The goroutine ends when Close closes the listener.
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// Close stops the server and ends the requests in flight.
func (s *Server) Close() error { return s.http.Close() }

// Recorder keeps every request an endpoint received, in arrival order; it
// is safe for concurrent use.
type Recorder[R any] struct {
	mu sync.Mutex
	// all holds the requests in arrival order; guarded by mu.
	all []R
}

// Add records r and, before any reader can see r, calls number with its
// place in arrival order (from 0), so the request can carry it.
func (rec *Recorder[R]) Add(r R, number func(n int)) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	number(len(rec.all))
	rec.all = append(rec.all, r)
}

// All returns every request recorded so far, in order.
func (rec *Recorder[R]) All() []R {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]R(nil), rec.all...)
}

// ReadBody reads r's body, up to MaxBody.
func ReadBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, MaxBody))
}

// WriteJSON answers with status and v as a JSON body (an API's response
// object or its error body).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Events writes one response as a stream of server-sent events.
type Events struct {
	w       http.ResponseWriter
	flusher http.Flusher
	ctx     context.Context
}

// StartEvents answers r with the headers of an event stream.
func StartEvents(w http.ResponseWriter, r *http.Request) *Events {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &Events{w: w, flusher: flusher, ctx: r.Context()}
}

// Send writes the event named event with data as its JSON payload; see
// Write for what it returns.
func (e *Events) Send(event string, data any) bool {
	b, _ := json.Marshal(data)
	return e.Write(fmt.Sprintf("event: %s\ndata: %s\n\n", event, b))
}

// Write writes frame, one or more complete events as the API frames them,
// and flushes it to the client. It returns false once the stream is over:
// the write failed or the client gave up.
func (e *Events) Write(frame string) bool {
	if _, err := io.WriteString(e.w, frame); err != nil {
		return false
	}
	if e.flusher != nil {
		e.flusher.Flush()
	}
	return e.ctx.Err() == nil
}

// UserTexts returns, for each message of the user's, oldest first, the
// texts of it that keep accepts, joined by newlines; texts returns a
// message's texts, or none when it is not the user's. Messages left with
// no text are left out.
func UserTexts[M any](messages []M, texts func(M) []string, keep func(string) bool) []string {
	var out []string
	for _, m := range messages {
		var parts []string
		for _, t := range texts(m) {
			if keep(t) {
				parts = append(parts, t)
			}
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, "\n"))
		}
	}
	return out
}

// Untagged reports whether s does not start with a tag: agents add their
// context (<environment_context>, <session_context> and the like) as user
// text that does.
func Untagged(s string) bool { return !strings.HasPrefix(strings.TrimSpace(s), "<") }

// Last returns the last of texts, or "" when there is none.
func Last(texts []string) string {
	if len(texts) == 0 {
		return ""
	}
	return texts[len(texts)-1]
}
