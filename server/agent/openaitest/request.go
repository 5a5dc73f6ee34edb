package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/herd-dev/herd/server/agent/endpointtest"
)

// Request is one Responses API request as the endpoint received it.
type Request struct {
	// N numbers the requests from 0 in arrival order.
	N int
	// Model and Stream are the request's own fields.
	Model  string
	Stream bool
	// Authorization is the request's Authorization header ("Bearer KEY").
	Authorization string
	// Input is the conversation, oldest first: the messages of the
	// request's input items (developer instructions included); other
	// items (tool calls, their outputs, reasoning) are left out.
	Input []Message
	// Tools names the tools the model was offered.
	Tools []string
	// Body is the request body as sent.
	Body []byte
}

// Message is one message item of the input.
type Message struct {
	// Role is developer, system, user or assistant.
	Role string
	// Texts are the text of its input_text and output_text parts.
	Texts []string
}

func parseRequest(body []byte) (*Request, error) {
	var wire struct {
		Model  string            `json:"model"`
		Stream bool              `json:"stream"`
		Input  []json.RawMessage `json:"input"`
		Tools  []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	req := &Request{Model: wire.Model, Stream: wire.Stream, Body: body}
	for _, t := range wire.Tools {
		name := t.Name
		if name == "" {
			name = t.Type // built-in tools such as web_search have no name
		}
		req.Tools = append(req.Tools, name)
	}
	for _, raw := range wire.Input {
		var item struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &item); err != nil {
			return nil, fmt.Errorf("decode input item: %w", err)
		}
		if item.Type != "message" && item.Type != "" {
			continue
		}
		msg := Message{Role: item.Role}
		var s string
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		switch {
		case json.Unmarshal(item.Content, &s) == nil:
			msg.Texts = []string{s}
		case json.Unmarshal(item.Content, &parts) == nil:
			for _, p := range parts {
				if p.Type == "input_text" || p.Type == "output_text" {
					msg.Texts = append(msg.Texts, p.Text)
				}
			}
		default:
			return nil, fmt.Errorf("decode message content: %s", item.Content)
		}
		req.Input = append(req.Input, msg)
	}
	return req, nil
}

// IsMain reports whether the request comes from the agent's own loop,
// which offers tools, rather than a side query such as the title.
func (r *Request) IsMain() bool { return len(r.Tools) > 0 }

// UserTexts returns the text a person wrote in each user message, oldest
// first, leaving out the context blocks Codex adds as user messages
// (<environment_context> and the like, which start with a tag).
func (r *Request) UserTexts() []string {
	return endpointtest.UserTexts(r.Input, func(m Message) []string {
		if m.Role != "user" {
			return nil
		}
		return m.Texts
	}, endpointtest.Untagged)
}

// LastUserText returns the newest user text (see UserTexts), or "".
func (r *Request) LastUserText() string { return endpointtest.Last(r.UserTexts()) }

// Contains reports whether the request body contains s.
func (r *Request) Contains(s string) bool { return strings.Contains(string(r.Body), s) }
