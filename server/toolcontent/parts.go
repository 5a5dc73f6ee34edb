package toolcontent

import (
	"strings"
	"unicode/utf8"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/shared"
)

// Part is one part of a tool call's content as herd keeps it.
type Part struct {
	// Meta is the part's wire form without its body.
	Meta shared.ToolContent
	// Body is the whole body kept (see shared.ToolContent.Body).
	Body string
}

// Build turns a tool call's content into parts, keeping at most
// shared.ToolStoredBytes of bodies in all: the body that crosses the
// bound is cut there (a diff at a line's end) and marked Cut, and the
// bodies after it are empty and Cut.
func Build(content []agent.ToolContent) []Part {
	parts := make([]Part, 0, len(content))
	budget := shared.ToolStoredBytes
	for _, c := range content {
		var p Part
		switch c.Type {
		case agent.ToolDiff:
			old := ""
			if c.OldText != nil {
				old = *c.OldText
			}
			body, added, removed := Unified(old, c.NewText)
			p.Body = body
			p.Meta = shared.ToolContent{Type: shared.ToolContentDiff, Path: c.Path, NewFile: c.OldText == nil,
				Added: added, Removed: removed}
		case agent.ToolTerminal:
			p.Meta = shared.ToolContent{Type: shared.ToolContentTerminal, TerminalID: c.TerminalID}
		default:
			p.Meta = shared.ToolContent{Type: shared.ToolContentText}
			p.Body = c.Text
		}
		if len(p.Body) > budget {
			p.Body = cut(p.Body, budget, p.Meta.Type == shared.ToolContentDiff)
			p.Meta.Cut = true
			budget = 0 // what follows the cut is cut too
		} else {
			budget -= len(p.Body)
		}
		p.Meta.Size = len(p.Body)
		p.Meta.Lines = countLines(p.Body)
		parts = append(parts, p)
	}
	return parts
}

// Wire returns the part as a message's metadata carries it: the body's
// first bytes within the part's bound (ToolTextWireBytes for text; for a
// diff ToolDiffWireLines lines and ToolDiffWireBytes), Truncated when
// that is not all of it.
func (p Part) Wire() shared.ToolContent {
	w := p.Meta
	w.Body = p.Body
	if p.Meta.Type == shared.ToolContentDiff {
		w.Body = firstLines(w.Body, shared.ToolDiffWireLines)
		if len(w.Body) > shared.ToolDiffWireBytes {
			w.Body = cut(w.Body, shared.ToolDiffWireBytes, false)
		}
	} else if len(w.Body) > shared.ToolTextWireBytes {
		w.Body = cut(w.Body, shared.ToolTextWireBytes, false)
	}
	w.Truncated = len(w.Body) < len(p.Body)
	return w
}

// Bodies returns the parts' bodies, in order.
func Bodies(parts []Part) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Body
	}
	return out
}

// cut returns the first bytes of s within limit, ending on a character
// boundary, or on a line's end when atLine (if a line ends within it).
func cut(s string, limit int, atLine bool) string {
	if len(s) <= limit {
		return s
	}
	if atLine {
		if i := strings.LastIndexByte(s[:limit], '\n'); i >= 0 {
			return s[:i+1]
		}
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit]
}

// firstLines returns the first n lines of s, with their newlines.
func firstLines(s string, n int) string {
	end := 0
	for range n {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			return s
		}
		end += i + 1
	}
	return s[:end]
}

// countLines counts s's lines; a last line without a newline counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
