// Package openaitest is a scripted model endpoint: an HTTP server on
// loopback that speaks the OpenAI Responses API (POST /v1/responses with
// SSE streaming), so a real Codex, given the endpoint as a custom model
// provider's base_url, runs offline and without an API key. A Script
// chooses each reply from the conversation the request carries; the server
// records every request, so a test can assert what the model was shown.
//
// Codex sends more than the conversation's turns: after the first turn it
// asks, in a separate conversation without tools, for a title. A script
// sees both and tells them apart with Request.IsMain.
package openaitest

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/herd-dev/herd/server/agent/endpointtest"
)

// Script chooses the reply to one request. It runs on the request's own
// goroutine and may block; the request's context ends when the client
// gives up.
type Script func(req *Request) Reply

// Reply is one assistant message.
type Reply struct {
	// Parts are the message's text, each sent as one
	// response.output_text.delta event, in order.
	Parts []string
	// Status, when not 0 or 200, answers with that HTTP status and an API
	// error body instead of a stream. Codex retries such answers a few
	// times before it gives up on the turn.
	Status int
}

// Say is a reply whose text streams as the given parts.
func Say(parts ...string) Reply { return Reply{Parts: parts} }

// Text is the whole text of the reply.
func (r Reply) Text() string { return strings.Join(r.Parts, "") }

// Server is a running scripted endpoint.
type Server struct {
	// URL is the API's base URL, ending in /v1, to give as a model
	// provider's base_url.
	URL string

	script Script
	http   *endpointtest.Server
	seq    atomic.Uint64
	// requests holds every Responses request in arrival order.
	requests endpointtest.Recorder[*Request]
}

// Start serves script on a loopback port until Close.
func Start(script Script) (*Server, error) {
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "not_found", "the scripted endpoint serves only POST /v1/responses")
	})
	srv, err := endpointtest.Serve(mux)
	if err != nil {
		return nil, err
	}
	s.http, s.URL = srv, srv.URL+"/v1"
	return s, nil
}

// Close stops the server and ends the requests in flight.
func (s *Server) Close() error { return s.http.Close() }

// Requests returns every Responses request received so far, in order.
func (s *Server) Requests() []*Request { return s.requests.All() }

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
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
	req.Authorization = r.Header.Get("Authorization")
	s.requests.Add(req, func(n int) { req.N = n })

	reply := s.script(req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		apiError(w, reply.Status, "server_error", "scripted error")
		return
	}
	n := s.seq.Add(1)
	respID, msgID := fmt.Sprintf("resp_scripted_%04d", n), fmt.Sprintf("msg_scripted_%04d", n)
	if !req.Stream {
		endpointtest.WriteJSON(w, http.StatusOK, response(respID, req.Model, msgID, reply, true))
		return
	}
	s.stream(w, r, req, respID, msgID, reply)
}

// stream writes reply as the Responses API's server-sent events: the
// response is created, one message item is added, its text streams as
// deltas, the item is done and the response completes.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, respID, msgID string, reply Reply) {
	events := endpointtest.StartEvents(w, r)
	send := func(event string, data map[string]any) bool {
		data["type"] = event
		return events.Send(event, data)
	}
	item := func(done bool) map[string]any {
		content := []any{}
		status := "in_progress"
		if done {
			content = append(content, map[string]any{"type": "output_text", "text": reply.Text(), "annotations": []any{}})
			status = "completed"
		}
		return map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": status, "content": content}
	}
	if !send("response.created", map[string]any{"response": response(respID, req.Model, msgID, reply, false)}) ||
		!send("response.output_item.added", map[string]any{"output_index": 0, "item": item(false)}) {
		return
	}
	for _, part := range reply.Parts {
		if !send("response.output_text.delta", map[string]any{
			"item_id": msgID, "output_index": 0, "content_index": 0, "delta": part,
		}) {
			return
		}
	}
	if !send("response.output_item.done", map[string]any{"output_index": 0, "item": item(true)}) {
		return
	}
	send("response.completed", map[string]any{"response": response(respID, req.Model, msgID, reply, true)})
}

// response is the Responses API's response object; when done it carries
// the reply's message and usage, else it is the empty response of
// response.created.
func response(id, model, msgID string, reply Reply, done bool) map[string]any {
	out := map[string]any{"id": id, "object": "response", "model": model, "status": "in_progress", "output": []any{}}
	if done {
		out["status"] = "completed"
		out["output"] = []any{map[string]any{
			"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Text(), "annotations": []any{}}},
		}}
		output := 1 + len(reply.Text())/4
		out["usage"] = map[string]any{
			"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 100 + output,
		}
	}
	return out
}

// apiError answers with status and the Responses API's error body.
func apiError(w http.ResponseWriter, status int, kind, msg string) {
	endpointtest.WriteJSON(w, status, map[string]any{
		"error": map[string]any{"type": kind, "message": msg, "code": nil, "param": nil},
	})
}
