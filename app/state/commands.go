package state

import (
	"strings"
	"unicode"

	"github.com/herd-dev/herd/shared"
)

// MaxCompletions bounds the commands a completion list shows at once: a
// real agent offers dozens, and a phone shows a handful.
const MaxCompletions = 12

// Completion is the composer's slash command list: open while the prompt
// starts with "/" and the caret is still in that first word, filtered by
// what follows the "/". It is pure state; the UI feeds it the text, the
// caret and the session's commands, and renders what it says. The zero
// value is closed.
type Completion struct {
	matches []shared.SlashCommand
	active  int
	// dismissed is the text the person closed the list at (Escape); the
	// list stays closed until the text changes.
	dismissed string
	text      string
	open      bool
}

// CommandQuery returns the part of text the completion filters by: what
// follows a leading "/" up to the caret (a byte offset), provided no white
// space comes before the caret. ok is false when text does not start a
// command there.
func CommandQuery(text string, caret int) (query string, ok bool) {
	if !strings.HasPrefix(text, "/") || caret < 1 || caret > len(text) {
		return "", false
	}
	query = text[1:caret]
	if strings.IndexFunc(query, unicode.IsSpace) >= 0 {
		return "", false
	}
	return query, true
}

// MatchCommands returns the commands that match query, case-insensitively,
// best first: names that start with it, then names that contain it, then
// descriptions that contain it, each group in the agent's order. An empty
// query matches every command. At most MaxCompletions are returned.
func MatchCommands(cmds []shared.SlashCommand, query string) []shared.SlashCommand {
	q := strings.ToLower(query)
	var prefix, inName, inDesc []shared.SlashCommand
	for _, c := range cmds {
		name := strings.ToLower(c.Name)
		switch {
		case strings.HasPrefix(name, q):
			prefix = append(prefix, c)
		case strings.Contains(name, q):
			inName = append(inName, c)
		case q != "" && strings.Contains(strings.ToLower(c.Description), q):
			inDesc = append(inDesc, c)
		}
	}
	out := append(append(prefix, inName...), inDesc...)
	return out[:min(len(out), MaxCompletions)]
}

// Update takes the composer's text and caret and the session's commands,
// and opens, filters or closes the list. The highlighted command stays the
// same one while it still matches, else the best match is highlighted.
func (c *Completion) Update(text string, caret int, cmds []shared.SlashCommand) {
	if text != c.text {
		c.dismissed = ""
	}
	c.text = text
	query, ok := CommandQuery(text, caret)
	if !ok || len(cmds) == 0 || c.dismissed != "" {
		c.open, c.matches, c.active = false, nil, 0
		return
	}
	var was string
	if c.open && c.active < len(c.matches) {
		was = c.matches[c.active].Name
	}
	c.matches = MatchCommands(cmds, query)
	c.open = len(c.matches) > 0
	c.active = 0
	for i, m := range c.matches {
		if m.Name == was {
			c.active = i
		}
	}
}

// Open reports whether the list shows.
func (c *Completion) Open() bool { return c.open }

// Matches returns the commands the list shows, best first.
func (c *Completion) Matches() []shared.SlashCommand { return c.matches }

// Active returns the index of the highlighted command.
func (c *Completion) Active() int { return c.active }

// Move highlights the next (delta 1) or previous (-1) command, wrapping
// around the list's ends.
func (c *Completion) Move(delta int) {
	if !c.open {
		return
	}
	n := len(c.matches)
	c.active = ((c.active+delta)%n + n) % n
}

// Dismiss closes the list until the text changes (Escape).
func (c *Completion) Dismiss() {
	c.open, c.matches, c.active = false, nil, 0
	c.dismissed = c.text
}

// Pick returns the composer's text after choosing the command at index i:
// "/name " followed by whatever came after the first word, and closes the
// list. ok is false for an index the list does not show.
func (c *Completion) Pick(i int) (text string, ok bool) {
	if !c.open || i < 0 || i >= len(c.matches) {
		return "", false
	}
	rest := ""
	if j := strings.IndexFunc(c.text, unicode.IsSpace); j >= 0 {
		rest = strings.TrimLeftFunc(c.text[j:], unicode.IsSpace)
	}
	text = "/" + c.matches[i].Name + " " + rest
	c.open, c.matches, c.active = false, nil, 0
	c.text = text
	return text, true
}

// CommandHint returns the input hint of the command the text starts with
// ("/debug " shows "[issue description]"), once its name is complete (a
// space follows it); "" when the text names no command or it takes no
// input.
func CommandHint(text string, cmds []shared.SlashCommand) (name, hint string) {
	if !strings.HasPrefix(text, "/") {
		return "", ""
	}
	word, _, complete := strings.Cut(text[1:], " ")
	if !complete {
		return "", ""
	}
	for _, c := range cmds {
		if c.Name == word {
			return c.Name, c.Hint
		}
	}
	return "", ""
}
