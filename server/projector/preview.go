package projector

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// promptPrefix marks a preview taken from the person's own prompt.
const promptPrefix = "You: "

// preview is what the primary session is doing, in one line: its oldest
// open permission request's title, else its oldest open clarification
// question, else its latest agent line, else its latest prompt line after
// "You: ". A source that leaves nothing to show gives way to the next.
func preview(src store.SummarySource) string {
	if src.PrimarySessionID == "" {
		return ""
	}
	var question string
	for _, p := range src.Pending {
		if p.SessionID != src.PrimarySessionID {
			continue
		}
		switch p.Type {
		case shared.MessagePermissionRequest:
			if line := previewLine(p.Content, shared.MaxPreviewBytes); line != "" {
				return line
			}
		case shared.MessageClarificationRequest:
			if question == "" {
				question = previewLine(p.Content, shared.MaxPreviewBytes)
			}
		}
	}
	if question != "" {
		return question
	}
	if line := previewLine(src.AgentLine, shared.MaxPreviewBytes); line != "" {
		return line
	}
	if line := previewLine(src.PromptLine, shared.MaxPreviewBytes-len(promptPrefix)); line != "" {
		return promptPrefix + line
	}
	return ""
}

// previewLine returns the first non-blank line of text, made fit for a
// task row in at most limit bytes:
//
//   - each run of invalid UTF-8 becomes one U+FFFD;
//   - lines end at "\n" or "\r";
//   - control characters are removed, every other white space character
//     (tabs, no-break spaces, U+2028 …) is a space, and runs of spaces
//     become one, none at either end;
//   - light Markdown goes: at the start of the line any sequence of a
//     heading's "#"s, a quote's ">", a list item's "-" or "*" and a
//     numbered item's "1." (each followed by a space), then "**" or
//     backticks around the whole line;
//   - a line with nothing left is blank, and the next line is taken;
//   - a line longer than limit is cut on a character boundary and ends
//     in "…", within limit.
//
// limit must be at least len("…").
func previewLine(text string, limit int) string {
	text = strings.ToValidUTF8(text, string(utf8.RuneError))
	for text != "" {
		line := text
		if end := strings.IndexAny(text, "\n\r"); end >= 0 {
			line, text = text[:end], text[end+1:]
		} else {
			text = ""
		}
		if line = stripMarkdown(clean(line)); line != "" {
			return shared.Clip(line, limit)
		}
	}
	return ""
}

// clean removes control characters, turns other white space into spaces,
// collapses runs of spaces and trims them at both ends.
func clean(line string) string {
	var b strings.Builder
	b.Grow(len(line))
	space := false
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			// ASCII, most of any text, without the rune tables.
			i++
			switch {
			case c == ' ' || c >= '\t' && c <= '\r':
				space = b.Len() > 0
				continue
			case c < ' ' || c == 0x7f:
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteByte(c)
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		piece := line[i : i+size]
		i += size
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(piece)
	}
	return b.String()
}

// stripMarkdown removes the markers that open a Markdown line (headings,
// quotes, list items) and emphasis or code marks around the whole of it.
// line is clean: no white space at either end, single spaces inside.
func stripMarkdown(line string) string {
	for {
		rest, ok := lineMarker(line)
		if !ok {
			break
		}
		line = rest
	}
	if len(line) >= 4 && strings.HasPrefix(line, "**") && strings.HasSuffix(line, "**") {
		line = strings.TrimSpace(line[2 : len(line)-2])
	}
	if strings.HasPrefix(line, "`") && strings.HasSuffix(line, "`") {
		line = strings.TrimSpace(strings.Trim(line, "`"))
	}
	return line
}

// lineMarker removes one opening marker of a Markdown line: "#"s, ">",
// "-", "*" or digits and "." followed by a space or ending the line. It
// reports false when line opens with none.
func lineMarker(line string) (string, bool) {
	n := 0
	switch {
	case line == "":
		return line, false
	case line[0] == '#':
		n = len(line) - len(strings.TrimLeft(line, "#"))
	case line[0] == '>' || line[0] == '-' || line[0] == '*':
		n = 1
	case line[0] >= '0' && line[0] <= '9':
		digits := len(line) - len(strings.TrimLeft(line, "0123456789"))
		if digits > 9 || digits >= len(line) || line[digits] != '.' {
			return line, false
		}
		n = digits + 1
	default:
		return line, false
	}
	switch {
	case n == len(line):
		return "", true
	case line[n] == ' ':
		return line[n+1:], true
	case line[0] == '>':
		return line[n:], true // ">quote" is a quote too
	}
	return line, false
}
