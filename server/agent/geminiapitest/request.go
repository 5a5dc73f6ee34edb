package geminiapitest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/herd-dev/herd/server/agent/endpointtest"
)

// Request is one generateContent or streamGenerateContent request as the
// endpoint received it.
type Request struct {
	// N numbers the requests from 0 in arrival order.
	N int
	// Model is the model named in the path; Stream is true for
	// streamGenerateContent.
	Model  string
	Stream bool
	// APIKey is the request's x-goog-api-key header.
	APIKey string
	// System is the system instruction's text.
	System string
	// Contents is the conversation, oldest first.
	Contents []Content
	// Tools names the functions the model was offered.
	Tools []string
	// Body is the request body as sent.
	Body []byte
}

// Content is one turn of the conversation.
type Content struct {
	// Role is user or model.
	Role string
	// Texts are the text of its text parts; function calls and responses
	// are left out.
	Texts []string
}

type wirePart struct {
	Text string `json:"text"`
}

func parseRequest(body []byte) (*Request, error) {
	var wire struct {
		Contents []struct {
			Role  string     `json:"role"`
			Parts []wirePart `json:"parts"`
		} `json:"contents"`
		SystemInstruction *struct {
			Parts []wirePart `json:"parts"`
		} `json:"systemInstruction"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	req := &Request{Body: body}
	if wire.SystemInstruction != nil {
		req.System = strings.Join(texts(wire.SystemInstruction.Parts), "\n")
	}
	for _, t := range wire.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	for _, c := range wire.Contents {
		req.Contents = append(req.Contents, Content{Role: c.Role, Texts: texts(c.Parts)})
	}
	return req, nil
}

func texts(parts []wirePart) []string {
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return out
}

// IsMain reports whether the request comes from the agent's own loop,
// which offers tools, rather than a side query such as the model router.
func (r *Request) IsMain() bool { return len(r.Tools) > 0 }

// UserTexts returns the text a person wrote in each user turn, oldest
// first, leaving out the context blocks Gemini CLI adds as user text
// (<session_context> and the like, which start with a tag).
func (r *Request) UserTexts() []string {
	return endpointtest.UserTexts(r.Contents, func(c Content) []string {
		if c.Role != "user" {
			return nil
		}
		return c.Texts
	}, endpointtest.Untagged)
}

// LastUserText returns the newest user text (see UserTexts), or "".
func (r *Request) LastUserText() string { return endpointtest.Last(r.UserTexts()) }

// Contains reports whether the request body contains s.
func (r *Request) Contains(s string) bool { return strings.Contains(string(r.Body), s) }
