// Package geminiapitest is a scripted model endpoint: an HTTP server on
// loopback that speaks the Gemini API (POST
// /v1beta/models/MODEL:streamGenerateContent?alt=sse, :generateContent and
// :countTokens), so a real Gemini CLI, given the endpoint as
// GOOGLE_GEMINI_BASE_URL, runs offline and without an API key. A Script
// chooses each reply from the conversation the request carries; the server
// records every generate request, so a test can assert what the model was
// shown.
//
// Gemini CLI sends more than the conversation's turns: when its model is
// "auto" it first asks a router, without tools and without streaming, to
// rate the prompt. A script sees both and tells them apart with
// Request.IsMain.
package geminiapitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/herd-dev/herd/server/agent/endpointtest"
)

// Script chooses the reply to one request. It runs on the request's own
// goroutine and may block; the request's context ends when the client
// gives up.
type Script func(req *Request) Reply

// Reply is one model message.
type Reply struct {
	// Parts are the message's text, each sent as one streamed chunk, in
	// order; the last chunk also carries finishReason STOP and the usage.
	Parts []string
	// Status, when not 0 or 200, answers with that HTTP status and an API
	// error body instead of a message.
	Status int
}

// Say is a reply whose text streams as the given parts.
func Say(parts ...string) Reply { return Reply{Parts: parts} }

// Text is the whole text of the reply.
func (r Reply) Text() string { return strings.Join(r.Parts, "") }

// Server is a running scripted endpoint.
type Server struct {
	// URL is the base URL to give as GOOGLE_GEMINI_BASE_URL.
	URL string

	script Script
	http   *endpointtest.Server
	// requests holds every generate request in arrival order.
	requests endpointtest.Recorder[*Request]
}

// Start serves script on a loopback port until Close.
func Start(script Script) (*Server, error) {
	s := &Server{script: script}
	mux := http.NewServeMux()
	// The method follows the model in one path segment
	// ("gemini-2.5-flash:streamGenerateContent"), which a pattern cannot
	// split; call does.
	mux.HandleFunc("POST /v1beta/models/{call}", s.call)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "the scripted endpoint serves only POST /v1beta/models/MODEL:METHOD")
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

// Requests returns every generate request received so far, in order.
func (s *Server) Requests() []*Request { return s.requests.All() }

func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	model, method, ok := strings.Cut(r.PathValue("call"), ":")
	if !ok || model == "" {
		apiError(w, http.StatusNotFound, "no model:method in the path")
		return
	}
	body, err := endpointtest.ReadBody(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if method == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"totalTokens":%d}`, max(1, len(body)/4))
		return
	}
	stream := method == "streamGenerateContent"
	if !stream && method != "generateContent" {
		apiError(w, http.StatusNotFound, "unknown method "+method)
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	req.Model, req.Stream, req.APIKey = model, stream, r.Header.Get("X-Goog-Api-Key")
	s.requests.Add(req, func(n int) { req.N = n })

	reply := s.script(req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		apiError(w, reply.Status, "scripted error")
		return
	}
	if !stream {
		endpointtest.WriteJSON(w, http.StatusOK, chunk(model, reply.Text(), reply, true))
		return
	}
	events := endpointtest.StartEvents(w, r)
	parts := reply.Parts
	if len(parts) == 0 {
		parts = []string{""}
	}
	for i, text := range parts {
		// The Gemini API frames its events with CRLF and names none.
		b, _ := json.Marshal(chunk(model, text, reply, i == len(parts)-1))
		if !events.Write(fmt.Sprintf("data: %s\r\n\r\n", b)) {
			return
		}
	}
}

// chunk is one GenerateContentResponse carrying text; the last one of a
// reply also says why it stopped and what it used.
func chunk(model, text string, reply Reply, last bool) map[string]any {
	candidate := map[string]any{
		"index":   0,
		"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
	}
	out := map[string]any{"candidates": []any{candidate}, "modelVersion": model}
	if last {
		candidate["finishReason"] = "STOP"
		output := 1 + len(reply.Text())/4
		out["usageMetadata"] = map[string]any{
			"promptTokenCount": 100, "candidatesTokenCount": output, "totalTokenCount": 100 + output,
		}
	}
	return out
}

// apiError answers with status and the Gemini API's error body.
func apiError(w http.ResponseWriter, status int, msg string) {
	endpointtest.WriteJSON(w, status, map[string]any{
		"error": map[string]any{"code": status, "message": msg, "status": http.StatusText(status)},
	})
}
