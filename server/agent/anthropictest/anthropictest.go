// Package anthropictest is a scripted model endpoint: an HTTP server on
// loopback that speaks the Anthropic Messages API (POST /v1/messages, with
// and without SSE streaming, and /v1/messages/count_tokens), so a real
// Claude Code, pointed at it with ANTHROPIC_BASE_URL, runs offline and
// without an API key. A Script chooses each reply from the conversation the
// request carries; the server records every request, so a test can assert
// what the model was shown (earlier turns, tool results, the tools it was
// offered).
//
// Claude Code sends more than the conversation's turns: a title request, a
// quota probe and, for subagents, conversations of their own. A script sees
// them all and tells them apart by what they carry (Request.IsMain,
// Request.LastUserText, the system prompt).
package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herd-dev/herd/server/agent/endpointtest"
)

// Script chooses the reply to one request. It runs on the request's own
// goroutine and may block (for example until a test releases a turn);
// the request's context ends when the client gives up.
type Script func(req *Request) Reply

// Reply is one assistant message: its content blocks in order and why it
// stopped. A zero StopReason is end_turn, or tool_use when a block is a
// tool use.
type Reply struct {
	Blocks     []Block
	StopReason string
	// Chunk is how many bytes of text each delta event carries; 0 sends
	// each block's text in one delta.
	Chunk int
	// Delay is waited between delta events.
	Delay time.Duration
	// Status, when not 0 or 200, answers with that HTTP status and an API
	// error body of type ErrorType (default api_error) instead of a
	// message.
	Status    int
	ErrorType string
}

// Block is one content block of a Reply.
type Block struct {
	// Type is text, thinking or tool_use.
	Type string
	// Text is the text of a text block or the reasoning of a thinking block.
	Text string
	// ID, Name and Input are a tool_use block's id, tool name and input.
	ID    string
	Name  string
	Input any
}

// Text is a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// Thinking is a thinking block.
func Thinking(s string) Block { return Block{Type: "thinking", Text: s} }

// ToolUse is a tool_use block calling the tool name with input; id must be
// unique in the conversation (Claude's ids look like "toolu_01…").
func ToolUse(id, name string, input any) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: input}
}

// Say is a reply of one text block.
func Say(s string) Reply { return Reply{Blocks: []Block{Text(s)}} }

// Server is a running scripted endpoint.
type Server struct {
	// URL is the base URL to give as ANTHROPIC_BASE_URL.
	URL string

	script Script
	http   *endpointtest.Server
	seq    atomic.Uint64
	// requests holds every /v1/messages request in arrival order.
	requests endpointtest.Recorder[*Request]

	mu sync.Mutex
	// firstByte is when each response's first delta was written, by
	// request number; guarded by mu.
	firstByte map[int]time.Time
}

// Start serves script on a loopback port until Close.
func Start(script Script) (*Server, error) {
	s := &Server{script: script, firstByte: map[int]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Claude Code asks for other things (settings, metrics); an empty
		// object satisfies it and keeps it offline.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	})
	srv, err := endpointtest.Serve(mux)
	if err != nil {
		return nil, err
	}
	s.http, s.URL = srv, srv.URL
	return s, nil
}

// Close stops the server and ends the requests in flight.
func (s *Server) Close() error { return s.http.Close() }

// Requests returns every Messages request received so far, in order.
func (s *Server) Requests() []*Request { return s.requests.All() }

// FirstByte returns when the first content delta of the request numbered
// n (Request.N) was written, and false when none was.
func (s *Server) FirstByte(n int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.firstByte[n]
	return t, ok
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"input_tokens":%d}`, max(1, len(body)/4))
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, err := endpointtest.ReadBody(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	req.Beta = r.URL.Query().Get("beta") == "true"
	req.ctx = r.Context()
	req.Received = time.Now()
	s.requests.Add(req, func(n int) { req.N = n })

	reply := s.script(req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		kind := reply.ErrorType
		if kind == "" {
			kind = "api_error"
		}
		apiError(w, reply.Status, kind, "scripted error")
		return
	}
	msgID := fmt.Sprintf("msg_scripted_%04d", s.seq.Add(1))
	if !req.Stream {
		endpointtest.WriteJSON(w, http.StatusOK, message(msgID, req.Model, reply, true))
		return
	}
	s.stream(w, r, req, msgID, reply)
}

// stream writes reply as the Messages API's server-sent events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, msgID string, reply Reply) {
	send := endpointtest.StartEvents(w, r).Send
	first := true
	delta := func(index int, d map[string]any) bool {
		if !first && reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-r.Context().Done():
				return false
			}
		}
		ok := send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		if first {
			first = false
			s.mu.Lock()
			s.firstByte[req.N] = time.Now()
			s.mu.Unlock()
		}
		return ok
	}
	start := message(msgID, req.Model, Reply{}, false)
	if !send("message_start", map[string]any{"type": "message_start", "message": start}) {
		return
	}
	for i, b := range reply.Blocks {
		switch b.Type {
		case "thinking":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, part := range chunks(b.Text, reply.Chunk) {
				if !delta(i, map[string]any{"type": "thinking_delta", "thinking": part}) {
					return
				}
			}
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "signature_delta", "signature": "scripted"}})
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			input, _ := json.Marshal(b.Input)
			if !delta(i, map[string]any{"type": "input_json_delta", "partial_json": string(input)}) {
				return
			}
		default:
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range chunks(b.Text, reply.Chunk) {
				if !delta(i, map[string]any{"type": "text_delta", "text": part}) {
					return
				}
			}
		}
		if !send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(reply), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outputTokens(reply)}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// message is the Messages API's message object; with content it carries
// the reply's blocks, else it is the empty message of message_start.
func message(id, model string, reply Reply, content bool) map[string]any {
	blocks := []any{}
	var stop any
	if content {
		for _, b := range reply.Blocks {
			switch b.Type {
			case "thinking":
				blocks = append(blocks, map[string]any{"type": "thinking", "thinking": b.Text, "signature": "scripted"})
			case "tool_use":
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": b.Input})
			default:
				blocks = append(blocks, map[string]any{"type": "text", "text": b.Text})
			}
		}
		stop = stopReason(reply)
	}
	if model == "" {
		model = "claude-scripted"
	}
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": 100, "output_tokens": outputTokens(reply),
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
		},
	}
}

func stopReason(reply Reply) string {
	if reply.StopReason != "" {
		return reply.StopReason
	}
	for _, b := range reply.Blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func outputTokens(reply Reply) int {
	n := 1
	for _, b := range reply.Blocks {
		n += len(b.Text) / 4
	}
	return n
}

// chunks splits s into parts of at most n bytes on rune boundaries; n <= 0
// keeps s whole.
func chunks(s string, n int) []string {
	if n <= 0 || len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !runeStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// apiError answers with status and the Messages API's error body.
func apiError(w http.ResponseWriter, status int, kind, msg string) {
	endpointtest.WriteJSON(w, status, map[string]any{
		"type": "error", "error": map[string]any{"type": kind, "message": msg},
	})
}

// joinText joins the text of a content value (a string or a list of
// blocks).
func joinText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []ContentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
