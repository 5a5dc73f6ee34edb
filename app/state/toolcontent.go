package state

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

// partial reports whether an update carries only appended bytes of its
// content or of a tool content part (append_from), to be completed from
// the copy the client holds.
func partial(m shared.Message) bool {
	if m.AppendFrom != nil {
		return true
	}
	if m.Metadata != nil {
		for _, p := range m.Metadata.Content {
			if p.AppendFrom != nil {
				return true
			}
		}
	}
	return false
}

// completed returns the partial update m made whole from base, the copy
// held (had says there is one): each delta's first append_from bytes come
// from base. It reports false when base lacks them; the client must then
// fetch the message rather than guess.
func completed(base shared.Message, had bool, m shared.Message) (shared.Message, bool) {
	if !had {
		return m, false
	}
	if m.AppendFrom != nil {
		from := *m.AppendFrom
		if from < 0 || from > len(base.Content) {
			return m, false
		}
		m.Content = base.Content[:from] + m.Content
		m.AppendFrom = nil
	}
	if m.Metadata == nil || !partial(shared.Message{Metadata: m.Metadata}) {
		return m, true
	}
	var held []shared.ToolContent
	if base.Metadata != nil {
		held = base.Metadata.Content
	}
	meta := *m.Metadata
	meta.Content = slices.Clone(meta.Content)
	for i, p := range meta.Content {
		if p.AppendFrom == nil {
			continue
		}
		from := *p.AppendFrom
		if i >= len(held) || from < 0 || from > len(held[i].Body) {
			return m, false
		}
		meta.Content[i].Body = held[i].Body[:from] + p.Body
		meta.Content[i].AppendFrom = nil
	}
	m.Metadata = &meta
	return m, true
}

// maxFetchedTools bounds the tool calls whose fetched content the client
// keeps; past it the one fetched longest ago is dropped (and shows its
// first bytes again, with "Show all").
const maxFetchedTools = 8

// DiffCollapseLines is the length past which a diff starts collapsed.
const DiffCollapseLines = 40

// toolKey names one part of one tool call message.
type toolKey struct {
	msg  string
	part int
}

// ToolFetches holds the tool content parts whose rest the person asked
// for ("Show all"), fetched with message.tool_content.get. A fetched body
// is shown only while the part is still the one it was fetched for (same
// size, and the body on the wire a prefix of it); a part the agent has
// replaced since shows its own first bytes again.
type ToolFetches struct {
	revs  map[string]uint64 // message → changes to its fetches
	order []string          // messages with fetched parts, oldest first
	got   map[toolKey]string
	busy  map[toolKey]bool
	errs  map[toolKey]string
	// open holds the person's choice to expand or collapse a diff.
	open map[toolKey]bool
}

// NewToolFetches returns an empty record.
func NewToolFetches() *ToolFetches {
	return &ToolFetches{revs: map[string]uint64{}, got: map[toolKey]string{}, busy: map[toolKey]bool{}, errs: map[toolKey]string{}, open: map[toolKey]bool{}}
}

// Expanded reports whether diff part i of msgID shows its lines: as the
// person last chose, else when it is at most DiffCollapseLines long.
func (f *ToolFetches) Expanded(msgID string, i int, p shared.ToolContent) bool {
	if open, chosen := f.open[toolKey{msgID, i}]; chosen {
		return open
	}
	return p.Lines <= DiffCollapseLines
}

// SetExpanded records the person's choice for diff part i of msgID.
func (f *ToolFetches) SetExpanded(msgID string, i int, open bool) {
	f.open[toolKey{msgID, i}] = open
	f.revs[msgID]++
}

// Rev changes whenever what a message's parts show changes.
func (f *ToolFetches) Rev(msgID string) uint64 { return f.revs[msgID] }

// Body returns what to show of part i of message msgID, p as the message
// holds it: its whole body when it was fetched, else its first bytes.
// whole says nothing is left to fetch.
func (f *ToolFetches) Body(msgID string, i int, p shared.ToolContent) (body string, whole bool) {
	if !p.Truncated {
		return p.Body, true
	}
	if b, ok := f.got[toolKey{msgID, i}]; ok && len(b) == p.Size && strings.HasPrefix(b, p.Body) {
		return b, true
	}
	return p.Body, false
}

// Busy reports whether part i of msgID is being fetched.
func (f *ToolFetches) Busy(msgID string, i int) bool { return f.busy[toolKey{msgID, i}] }

// Err returns why the last fetch of part i of msgID failed; empty if it
// did not.
func (f *ToolFetches) Err(msgID string, i int) string { return f.errs[toolKey{msgID, i}] }

// Start marks part i of msgID as being fetched. It reports false when it
// already is, so a second press fetches nothing more.
func (f *ToolFetches) Start(msgID string, i int) bool {
	k := toolKey{msgID, i}
	if f.busy[k] {
		return false
	}
	f.busy[k] = true
	delete(f.errs, k)
	f.revs[msgID]++
	return true
}

// Done records the end of a fetch Start began: the whole body, or err.
func (f *ToolFetches) Done(msgID string, i int, body string, err error) {
	k := toolKey{msgID, i}
	delete(f.busy, k)
	f.revs[msgID]++
	if err != nil {
		f.errs[k] = err.Error()
		return
	}
	if !slices.Contains(f.order, msgID) {
		f.order = append(f.order, msgID)
	}
	f.got[k] = body
	for len(f.order) > maxFetchedTools {
		old := f.order[0]
		f.order = f.order[1:]
		for k := range f.got {
			if k.msg == old {
				delete(f.got, k)
			}
		}
		f.revs[old]++
	}
}

// DiffLineKind says what a line of a unified diff is.
type DiffLineKind uint8

// The kinds of diff lines.
const (
	DiffContext DiffLineKind = iota
	DiffAdded
	DiffRemoved
	DiffHunk
)

// DiffLine is one line of a unified diff, numbered: Old and New are its
// line numbers in the old and new text (0 where it has none).
type DiffLine struct {
	Kind     DiffLineKind
	Old, New int
	Text     string
}

// DiffLines parses a unified diff body (see shared.ToolContent) for
// display. It never fails: a line it does not recognise shows as context,
// and a hunk header it cannot read leaves the numbering as it was.
func DiffLines(body string) []DiffLine {
	if body == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	out := make([]DiffLine, 0, len(lines))
	old, new := 0, 0
	for _, l := range lines {
		if strings.HasPrefix(l, "@@ ") {
			var ol, nl int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &old, &ol, &new, &nl); err == nil {
				if ol == 0 {
					old++ // an empty side names the line before
				}
				if nl == 0 {
					new++
				}
			}
			out = append(out, DiffLine{Kind: DiffHunk, Text: l})
			continue
		}
		kind, text := DiffContext, l
		if l != "" {
			switch l[0] {
			case ' ':
				text = l[1:]
			case '+':
				kind, text = DiffAdded, l[1:]
			case '-':
				kind, text = DiffRemoved, l[1:]
			}
		}
		d := DiffLine{Kind: kind, Text: text}
		if kind != DiffAdded {
			d.Old = old
			old++
		}
		if kind != DiffRemoved {
			d.New = new
			new++
		}
		out = append(out, d)
	}
	return out
}

// DiffRun is a run of consecutive diff lines of one kind, rendered as one
// element whatever its length: Gutter holds their line numbers ("old new"
// a line) and Text the lines, each ending in a newline.
type DiffRun struct {
	Kind         DiffLineKind
	Gutter, Text string
	// Lines is how many lines the run holds.
	Lines int
}

// DiffRuns groups a diff's lines into runs, so a diff of thousands of
// lines renders as a few elements rather than one per line (a 5,000-line
// diff would otherwise stall a phone for over a second).
func DiffRuns(lines []DiffLine) []DiffRun {
	var runs []DiffRun
	var gutter, text strings.Builder
	flush := func(kind DiffLineKind, n int) {
		if n > 0 {
			runs = append(runs, DiffRun{Kind: kind, Gutter: gutter.String(), Text: text.String(), Lines: n})
		}
		gutter.Reset()
		text.Reset()
	}
	kind, n := DiffContext, 0
	for _, l := range lines {
		if l.Kind != kind || l.Kind == DiffHunk {
			flush(kind, n)
			kind, n = l.Kind, 0
		}
		if l.Kind != DiffHunk {
			fmt.Fprintf(&gutter, "%s %s\n", number(l.Old), number(l.New))
		}
		text.WriteString(l.Text + "\n")
		n++
	}
	flush(kind, n)
	return runs
}

// number shows a line number, blank for none.
func number(n int) string {
	if n == 0 {
		return "    "
	}
	return fmt.Sprintf("%4d", n)
}

// TextChunks cuts a tool part's text into pieces of at most max bytes,
// each ending at a line break where one falls in its second half, else on
// a character boundary, so the page can lay out the pieces on screen and
// skip the rest (a 1 MB output laid out whole is one long task). The
// pieces joined are the text.
func TextChunks(text string, max int) []string {
	if max <= 0 || len(text) <= max {
		return []string{text}
	}
	var out []string
	for len(text) > max {
		cut := strings.LastIndexByte(text[:max], '\n') + 1
		if cut <= max/2 {
			cut = max
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			if cut == 0 {
				_, cut = utf8.DecodeRuneInString(text)
			}
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
