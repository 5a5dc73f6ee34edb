package state

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

// LineSelection is the rows of a diff a person chose to comment on, from
// Anchor (the row clicked first) to Head, always within one hunk. The
// zero value selects nothing.
type LineSelection struct {
	Anchor, Head int
	Set          bool
}

// Bounds returns the first and last row selected, in diff order.
func (s LineSelection) Bounds() (first, last int) {
	return min(s.Anchor, s.Head), max(s.Anchor, s.Head)
}

// Has reports whether row i is selected.
func (s LineSelection) Has(i int) bool {
	a, b := s.Bounds()
	return s.Set && a <= i && i <= b
}

// single reports whether exactly one row is selected.
func (s LineSelection) single() bool { return s.Set && s.Anchor == s.Head }

// Click returns the selection after a click on row i's line number. With
// extend (shift-click) a selection stretches from its anchor to i when i
// is in the same hunk; otherwise row i alone is selected, and a click on
// the one row selected clears it. A row that is no numbered line (a
// hunk's header, git's "No newline" note) changes nothing.
func (d *ReviewDiff) Click(s LineSelection, i int, extend bool) LineSelection {
	if i < 0 || i >= len(d.lines) || !d.lines[i].Numbered() {
		return s
	}
	if extend && s.Set && s.Anchor < len(d.lines) && d.lines[s.Anchor].Hunk == d.lines[i].Hunk {
		s.Head = i
		return s
	}
	if s.single() && s.Anchor == i {
		return LineSelection{}
	}
	return LineSelection{Anchor: i, Head: i, Set: true}
}

// Tap is Click for a touch screen, which has no shift key: a tap on
// another row while one row is selected extends the selection to it; a
// tap after a range starts a new selection.
func (d *ReviewDiff) Tap(s LineSelection, i int) LineSelection {
	return d.Click(s, i, s.single() && s.Anchor != i)
}

// Comment returns the comment rows first to last make, without its text:
// the file, the side and line range, and the quoted rows with their
// marks. The side is SideNew when a row of the range is in the changed
// file, with the range of those rows; SideOld when every one was removed.
// It reports false when the range holds no numbered line.
func (d *ReviewDiff) Comment(first, last int) (shared.ReviewComment, bool) {
	first, last = max(first, 0), min(last, len(d.lines)-1)
	if first > last {
		return shared.ReviewComment{}, false
	}
	rows := d.lines[first : last+1]
	c := shared.ReviewComment{Path: d.key.Path, Side: SideOf(rows)}
	var quoted []string
	for _, l := range rows {
		if l.Mark == MarkHunk {
			continue
		}
		quoted = append(quoted, string(l.Mark)+l.Text)
		n := l.New
		if c.Side == shared.SideOld {
			n = l.Old
		}
		if n > 0 {
			if c.StartLine == 0 {
				c.StartLine = n
			}
			c.EndLine = n
		}
	}
	if c.StartLine == 0 {
		return shared.ReviewComment{}, false
	}
	c.Code = Quote(quoted, shared.MaxReviewQuoteBytes)
	return c, true
}

// SideOf returns the side a comment on rows takes: SideNew when one of
// them is in the changed file, else SideOld.
func SideOf(rows []ReviewLine) string {
	for _, l := range rows {
		if l.New > 0 {
			return shared.SideNew
		}
	}
	return shared.SideOld
}

// Quote joins diff lines for a comment within limit bytes: whole lines
// while they fit, then a line counting those left out. A first line
// longer than that keeps its start, cut on a character boundary.
func Quote(lines []string, limit int) string {
	if whole := strings.Join(lines, "\n"); len(whole) <= limit {
		return whole
	}
	var b strings.Builder
	for i, l := range lines {
		sep := ""
		if i > 0 {
			sep = "\n"
		}
		if b.Len()+len(sep)+len(l)+len("\n"+moreLines(len(lines)-i-1)) <= limit {
			b.WriteString(sep + l)
			continue
		}
		if i > 0 {
			// The line before made sure this note fits.
			return b.String() + "\n" + moreLines(len(lines)-i)
		}
		note := " (cut)"
		if len(lines) > 1 {
			note += "\n" + moreLines(len(lines)-1)
		}
		cut := max(limit-len(note), 0)
		for cut > 0 && !utf8.RuneStart(l[cut]) {
			cut--
		}
		return l[:cut] + note
	}
	return b.String()
}

// moreLines says how many lines a quote leaves out.
func moreLines(n int) string {
	if n == 1 {
		return "… 1 more line"
	}
	return fmt.Sprintf("… %d more lines", n)
}

// Row returns the row after which a comment shows inline: the row of its
// last line on its side; false when that row is not paged in.
func (d *ReviewDiff) Row(c shared.ReviewComment) (int, bool) {
	if c.Path != d.key.Path {
		return 0, false
	}
	for i, l := range d.lines {
		if c.Side == shared.SideNew && l.New == c.EndLine || c.Side == shared.SideOld && l.Mark == '-' && l.Old == c.EndLine {
			return i, true
		}
	}
	return 0, false
}

// PendingComment is a comment written in review and not yet delivered to
// the agent: kept until the prompt that carries it is confirmed.
type PendingComment struct {
	// ID names the comment in this browser, for editing and deleting it.
	ID           string `json:"id"`
	RepositoryID string `json:"repository_id"`
	shared.ReviewComment
	// SentAs is the client_message_id of the prompt that carries the
	// comment, to SentTo, the session; both empty while it waits to be
	// sent.
	SentAs string `json:"sent_as,omitempty"`
	SentTo string `json:"sent_to,omitempty"`
}

// ReviewComments keeps a task's review comments until the agent has
// them: in a KV (localStorage) under one key per task, so a reload or a
// closed tab loses none. Comments wait (pending), then travel in one
// prompt through a session's Outbox, and are forgotten once the server
// confirms that prompt. Like Store it belongs to the UI goroutine.
type ReviewComments struct {
	kv    KV
	key   string
	newID func() string
	list  []PendingComment
}

// NewReviewComments returns the comments kept for the task.
func NewReviewComments(kv KV, taskID string, newID func() string) *ReviewComments {
	c := &ReviewComments{kv: kv, key: "herd.review." + taskID, newID: newID}
	if raw, ok := kv.Get(c.key); ok {
		var saved []PendingComment
		if json.Unmarshal([]byte(raw), &saved) == nil {
			for _, p := range saved {
				if p.ID != "" && p.Check() == nil {
					c.list = append(c.list, p)
				}
			}
		}
	}
	return c
}

// All returns every comment kept, pending or on its way, in the order
// written.
func (c *ReviewComments) All() []PendingComment { return slices.Clone(c.list) }

// Pending returns the comments waiting to be sent, in the order written.
func (c *ReviewComments) Pending() []PendingComment {
	var out []PendingComment
	for _, p := range c.list {
		if p.SentAs == "" {
			out = append(out, p)
		}
	}
	return out
}

// Sending returns the comments on their way in the prompt sentAs.
func (c *ReviewComments) Sending(sentAs string) []PendingComment {
	var out []PendingComment
	for _, p := range c.list {
		if p.SentAs == sentAs && sentAs != "" {
			out = append(out, p)
		}
	}
	return out
}

// SentPrompt is a prompt that carries comments: its client_message_id
// and its session.
type SentPrompt struct {
	ClientMessageID, SessionID string
}

// Prompts returns the prompts on their way, in the order they were sent.
func (c *ReviewComments) Prompts() []SentPrompt {
	var out []SentPrompt
	for _, p := range c.list {
		if s := (SentPrompt{p.SentAs, p.SentTo}); p.SentAs != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Add keeps a new comment, pending. It refuses one that does not Check
// and one past MaxReviewComments, the most one prompt carries.
func (c *ReviewComments) Add(repositoryID string, rc shared.ReviewComment) (PendingComment, error) {
	rc.Body = strings.TrimSpace(rc.Body)
	if err := rc.Check(); err != nil {
		return PendingComment{}, err
	}
	if n := len(c.Pending()); n >= shared.MaxReviewComments {
		return PendingComment{}, shared.Errorf(shared.CodeBadRequest, "%d comments wait already, the most one prompt carries; send them first", n)
	}
	p := PendingComment{ID: c.newID(), RepositoryID: repositoryID, ReviewComment: rc}
	c.list = append(c.list, p)
	c.save()
	return p, nil
}

// Edit replaces a pending comment's text; it refuses text that does not
// Check, and a comment already sent.
func (c *ReviewComments) Edit(id, body string) error {
	i := slices.IndexFunc(c.list, func(p PendingComment) bool { return p.ID == id && p.SentAs == "" })
	if i < 0 {
		return shared.Errorf(shared.CodeNotFound, "that comment is no longer pending")
	}
	next := c.list[i].ReviewComment
	next.Body = strings.TrimSpace(body)
	if err := next.Check(); err != nil {
		return err
	}
	c.list[i].ReviewComment = next
	c.save()
	return nil
}

// Delete forgets a pending comment.
func (c *ReviewComments) Delete(id string) {
	n := len(c.list)
	c.list = slices.DeleteFunc(c.list, func(p PendingComment) bool { return p.ID == id && p.SentAs == "" })
	if len(c.list) != n {
		c.save()
	}
}

// Prompt writes the pending comments as one prompt (shared.ReviewPrompt),
// each path as rename names it: with several repositories, path names
// the comment's file in its repository's directory.
func (c *ReviewComments) Prompt(rename func(PendingComment) string) (string, error) {
	pending := c.Pending()
	comments := make([]shared.ReviewComment, len(pending))
	for i, p := range pending {
		comments[i] = p.ReviewComment
		if rename != nil {
			comments[i].Path = rename(p)
		}
	}
	return shared.ReviewPrompt(comments)
}

// Sent records that the pending comments travel in the prompt sentAs to
// session sentTo, and returns how many do.
func (c *ReviewComments) Sent(sentAs, sentTo string) int {
	n := 0
	for i := range c.list {
		if c.list[i].SentAs == "" {
			c.list[i].SentAs, c.list[i].SentTo = sentAs, sentTo
			n++
		}
	}
	c.save()
	return n
}

// Delivered forgets the comments of prompt sentAs, which the server
// confirmed, and returns how many it carried.
func (c *ReviewComments) Delivered(sentAs string) int {
	n := len(c.list)
	c.list = slices.DeleteFunc(c.list, func(p PendingComment) bool { return sentAs != "" && p.SentAs == sentAs })
	if len(c.list) != n {
		c.save()
	}
	return n - len(c.list)
}

// Unsent makes the comments of prompt sentAs pending again, the person
// having given up on that prompt (the server refused it, or its outcome
// stayed unknown), so they can be edited and sent once more.
func (c *ReviewComments) Unsent(sentAs string) {
	for i := range c.list {
		if c.list[i].SentAs == sentAs && sentAs != "" {
			c.list[i].SentAs, c.list[i].SentTo = "", ""
		}
	}
	c.save()
}

// Reconcile forgets the comments sent to session sessionID whose prompt
// o, that session's outbox, no longer holds: it was confirmed meanwhile
// (perhaps by the session's own page). It returns how many it forgot.
func (c *ReviewComments) Reconcile(sessionID string, o *Outbox) int {
	held := map[string]bool{}
	for _, s := range o.Sends() {
		held[s.ClientMessageID] = true
	}
	n := 0
	for _, p := range c.Prompts() {
		if p.SessionID == sessionID && !held[p.ClientMessageID] {
			n += c.Delivered(p.ClientMessageID)
		}
	}
	return n
}

// save writes the comments to the KV, or deletes the key when none is
// left.
func (c *ReviewComments) save() {
	if len(c.list) == 0 {
		c.kv.Delete(c.key)
		return
	}
	raw, err := json.Marshal(c.list)
	if err != nil {
		return
	}
	c.kv.Set(c.key, string(raw))
}
