package state

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Mention is an @file mention being typed in the composer: the text from
// Start (the @) to the caret, whose Query (what follows the @) completes
// to a worktree path.
type Mention struct {
	Start int
	Query string
}

// MentionAt finds the mention the caret is at: an @ at the start of the
// text or after a space or line break, followed by no space up to caret
// (a byte offset into text). An e-mail address ("a@b") is not a mention.
func MentionAt(text string, caret int) (Mention, bool) {
	if caret < 0 || caret > len(text) {
		return Mention{}, false
	}
	for i := caret; i > 0; {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		i -= size
		if unicode.IsSpace(r) {
			return Mention{}, false
		}
		if r != '@' {
			continue
		}
		if i > 0 {
			before, _ := utf8.DecodeLastRuneInString(text[:i])
			if !unicode.IsSpace(before) {
				return Mention{}, false
			}
		}
		return Mention{Start: i, Query: text[i+1 : caret]}, true
	}
	return Mention{}, false
}

// Complete replaces the mention, up to caret, with "@path " and returns
// the new text and the caret after it.
func (m Mention) Complete(text string, caret int, path string) (string, int) {
	insert := "@" + path + " "
	out := text[:m.Start] + insert + text[caret:]
	return out, m.Start + len(insert)
}

// MaxMentionChoices bounds the completions the composer lists at once.
const MaxMentionChoices = 8

// Completions keeps the answer to the newest file listing the composer
// asked for: an answer to an older query (the person typed on) is
// dropped, so a slow answer never replaces a newer one.
type Completions struct {
	asked   uint64
	query   string
	files   []string
	pending bool
	// Selected is the index of the highlighted choice.
	Selected int
}

// Ask records a new query and returns its number for Answer.
func (c *Completions) Ask(query string) uint64 {
	c.asked++
	c.query, c.pending = query, true
	return c.asked
}

// Answer applies the files listed for query number n; it reports whether
// they were applied (n is the newest query).
func (c *Completions) Answer(n uint64, files []string) bool {
	if n != c.asked {
		return false
	}
	if len(files) > MaxMentionChoices {
		files = files[:MaxMentionChoices]
	}
	c.files, c.pending, c.Selected = files, false, 0
	return true
}

// Close forgets the completion: the caret left the mention, or a choice
// was made. A late answer to the last query is dropped.
func (c *Completions) Close() {
	c.asked++
	c.files, c.query, c.pending, c.Selected = nil, "", false, 0
}

// Files returns the choices of the newest answer.
func (c *Completions) Files() []string { return c.files }

// Open reports whether a completion is under way (asked or answered).
func (c *Completions) Open() bool { return c.pending || len(c.files) > 0 }

// Move moves the highlight by delta, wrapping around the choices.
func (c *Completions) Move(delta int) {
	if n := len(c.files); n > 0 {
		c.Selected = ((c.Selected+delta)%n + n) % n
	}
}

// Choice returns the highlighted file, if any.
func (c *Completions) Choice() (string, bool) {
	if c.Selected < 0 || c.Selected >= len(c.files) {
		return "", false
	}
	return c.files[c.Selected], true
}

// ByteOffset converts a caret the browser gives in UTF-16 code units (a
// textarea's selectionStart) to a byte offset into text; a caret past the
// end is the end.
func ByteOffset(text string, units int) int {
	for i, r := range text {
		if units <= 0 {
			return i
		}
		units -= utf16.RuneLen(r)
	}
	return len(text)
}

// UTF16Len is the length of s in UTF-16 code units, as the browser counts
// a caret.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
