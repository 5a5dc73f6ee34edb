package state

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/herd-dev/herd/shared"
)

// MaxClosedRemembered bounds how many closed pending ids an Inbox keeps so
// that a late open or an older listing cannot bring them back. Past it the
// oldest is forgotten (and counted): by then no answer still in flight can
// carry it, since a listing never holds more than shared.MaxInboxRequests.
const MaxClosedRemembered = 1024

// Inbox holds a workspace's unanswered permission and clarification
// requests, by pending id, as inbox.list and the workspace feed's
// inbox.request.opened / inbox.request.closed say. Like the Store it is
// used only on the UI goroutine.
//
// A close is final: its pending id is remembered (up to
// MaxClosedRemembered), so an open that arrives after it, or a listing
// that was read before it, never brings the request back. A listing
// replaces what the inbox holds, except requests a live open wrote after
// the listing's mark was taken, which the server had not seen when it
// read the list.
type Inbox struct {
	workspaceID string
	entries     map[string]*inboxEntry
	// closed holds the remembered closed ids; closedOrder is the same ids
	// oldest first, for the bound.
	closed      map[string]struct{}
	closedOrder []string
	// forgotten counts closed ids dropped by the bound; evicted counts
	// requests dropped because the inbox held MaxInboxRequests already.
	forgotten, evicted int
	// writes counts live opens, for marks.
	writes uint64
	// loaded is set once a listing was applied; loadErr is why the last
	// one failed, empty otherwise. truncated is the listing's flag, or set
	// when live opens overflowed.
	loaded    bool
	loadErr   string
	truncated bool
	// sorted caches Requests; nil when a write changed membership.
	sorted []shared.InboxRequest
}

// inboxEntry is one request with what the UI does with it.
type inboxEntry struct {
	req shared.InboxRequest
	// opened is the write count of the live open that wrote it; zero when
	// a listing did.
	opened uint64
	answer Answer
	// draft is the text typed into a clarification's answer box.
	draft string
}

// InboxMark is an Inbox's position, taken just before inbox.list is sent.
type InboxMark uint64

// AnswerState says where the person's answer to a request is.
type AnswerState int

// The states of an answer.
const (
	// AnswerNone: nothing sent; the choices are enabled.
	AnswerNone AnswerState = iota
	// AnswerSending: permission.respond or clarification.respond is in
	// flight; the choices are disabled.
	AnswerSending
	// AnswerFailed: the server refused or the connection dropped; Err says
	// why and Retry sends the same answer again.
	AnswerFailed
)

// Answer is the person's answer to one request: the option chosen (a
// permission) or the text (a clarification), and how sending it went.
type Answer struct {
	State    AnswerState
	OptionID string
	Text     string
	Err      string
}

// NewInbox returns an empty inbox, not loaded.
func NewInbox() *Inbox {
	return &Inbox{entries: map[string]*inboxEntry{}, closed: map[string]struct{}{}}
}

// SetWorkspace makes the inbox the workspace's; a different workspace
// empties it, closed ids and answers included, until its listing arrives.
func (b *Inbox) SetWorkspace(id string) {
	if id == b.workspaceID {
		return
	}
	*b = *NewInbox()
	b.workspaceID = id
}

// Mark returns the inbox's position, for Load.
func (b *Inbox) Mark() InboxMark { return InboxMark(b.writes) }

// Load applies an inbox.list answer requested at mark. It replaces the
// requests held, keeping the answer in flight and the draft of a request
// that stays, and keeping a request a live open wrote after mark.
// Requests already closed, or of another workspace, are left out.
func (b *Inbox) Load(resp shared.InboxListResponse, mark InboxMark) {
	next := make(map[string]*inboxEntry, len(resp.Requests))
	for _, r := range resp.Requests {
		if !b.takes(r.WorkspaceID, r.PendingID) {
			continue
		}
		e := &inboxEntry{req: r}
		if old, ok := b.entries[r.PendingID]; ok {
			e.answer, e.draft, e.opened = old.answer, old.draft, old.opened
		}
		next[r.PendingID] = e
	}
	for id, e := range b.entries {
		if _, listed := next[id]; !listed && e.opened > uint64(mark) {
			next[id] = e
		}
	}
	b.entries, b.sorted = next, nil
	b.loaded, b.loadErr, b.truncated = true, "", resp.Truncated
	b.bound()
}

// LoadFailed records why inbox.list failed; what the inbox holds stays.
func (b *Inbox) LoadFailed(reason string) { b.loadErr = reason }

// Open applies inbox.request.opened. It reports whether the request is
// new to the inbox: not held, not closed, and of its workspace.
func (b *Inbox) Open(r shared.InboxRequest) bool {
	if !b.takes(r.WorkspaceID, r.PendingID) {
		return false
	}
	b.writes++
	if e, ok := b.entries[r.PendingID]; ok {
		e.req, e.opened = r, b.writes
		b.sorted = nil
		return false
	}
	b.entries[r.PendingID] = &inboxEntry{req: r, opened: b.writes}
	b.sorted = nil
	b.bound()
	return true
}

// Close applies inbox.request.closed: the request leaves, and its id is
// remembered so that it does not come back.
func (b *Inbox) Close(ev shared.InboxRequestClosed) {
	if b.workspaceID != "" && ev.WorkspaceID != "" && ev.WorkspaceID != b.workspaceID {
		return
	}
	b.close(ev.PendingID)
}

// close removes pendingID and remembers it as closed.
func (b *Inbox) close(pendingID string) {
	if _, ok := b.entries[pendingID]; ok {
		delete(b.entries, pendingID)
		b.sorted = nil
	}
	if _, ok := b.closed[pendingID]; ok {
		return
	}
	b.closed[pendingID] = struct{}{}
	b.closedOrder = append(b.closedOrder, pendingID)
	if len(b.closedOrder) > MaxClosedRemembered {
		delete(b.closed, b.closedOrder[0])
		b.closedOrder = slices.Delete(b.closedOrder, 0, 1)
		b.forgotten++
	}
}

// takes reports whether a request of workspace with pendingID may enter:
// it is of the inbox's workspace (when it has one) and not closed.
func (b *Inbox) takes(workspaceID, pendingID string) bool {
	if pendingID == "" {
		return false
	}
	if b.workspaceID != "" && workspaceID != b.workspaceID {
		return false
	}
	_, closed := b.closed[pendingID]
	return !closed
}

// bound keeps the newest shared.MaxInboxRequests, as the server's list
// does: the oldest are evicted, counted, and the inbox says it is
// truncated.
func (b *Inbox) bound() {
	over := len(b.entries) - shared.MaxInboxRequests
	if over <= 0 {
		return
	}
	reqs := b.Requests()
	for _, r := range reqs[len(reqs)-over:] {
		delete(b.entries, r.PendingID)
	}
	b.evicted += over
	b.truncated, b.sorted = true, nil
}

// Requests returns the requests newest first (the pending id, descending,
// breaks ties). The slice is shared until the next change of membership:
// do not modify it.
func (b *Inbox) Requests() []shared.InboxRequest {
	if b.sorted != nil || len(b.entries) == 0 {
		return b.sorted
	}
	out := make([]shared.InboxRequest, 0, len(b.entries))
	for _, e := range b.entries {
		out = append(out, e.req)
	}
	slices.SortFunc(out, func(x, y shared.InboxRequest) int {
		if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(y.PendingID, x.PendingID)
	})
	b.sorted = out
	return out
}

// Len is how many requests wait.
func (b *Inbox) Len() int { return len(b.entries) }

// ForTask returns the requests of one task, newest first.
func (b *Inbox) ForTask(taskID string) []shared.InboxRequest {
	var out []shared.InboxRequest
	for _, r := range b.Requests() {
		if r.TaskID == taskID {
			out = append(out, r)
		}
	}
	return out
}

// Request returns the request with pendingID, if held.
func (b *Inbox) Request(pendingID string) (shared.InboxRequest, bool) {
	e, ok := b.entries[pendingID]
	if !ok {
		return shared.InboxRequest{}, false
	}
	return e.req, true
}

// Loaded reports whether a listing has been applied since the workspace
// was set.
func (b *Inbox) Loaded() bool { return b.loaded }

// LoadError is why the last listing failed; empty when it did not.
func (b *Inbox) LoadError() string { return b.loadErr }

// Truncated reports whether there are more requests than the inbox holds.
func (b *Inbox) Truncated() bool { return b.truncated }

// Dropped counts what the bounds dropped: closed ids forgotten, and
// requests evicted as the oldest of a full inbox.
func (b *Inbox) Dropped() (forgotten, evicted int) { return b.forgotten, b.evicted }

// Answer returns the state of the answer to pendingID.
func (b *Inbox) Answer(pendingID string) Answer {
	if e, ok := b.entries[pendingID]; ok {
		return e.answer
	}
	return Answer{}
}

// BeginAnswer records that a is being sent for pendingID. It reports
// false, and nothing changes, when the request is not held or an answer
// is already in flight: one answer per request at a time.
func (b *Inbox) BeginAnswer(pendingID string, a Answer) bool {
	e, ok := b.entries[pendingID]
	if !ok || e.answer.State == AnswerSending {
		return false
	}
	a.State, a.Err = AnswerSending, ""
	e.answer = a
	return true
}

// Answered records the server's confirmation of the answer to pendingID:
// the request is answered, so it closes as inbox.request.closed would.
func (b *Inbox) Answered(pendingID string) { b.close(pendingID) }

// AnswerFailed records why the answer to pendingID was not taken; the
// request stays, with its answer kept for a retry.
func (b *Inbox) AnswerFailed(pendingID, reason string) {
	if e, ok := b.entries[pendingID]; ok && e.answer.State == AnswerSending {
		e.answer.State, e.answer.Err = AnswerFailed, reason
	}
}

// Draft is the text typed into pendingID's answer box.
func (b *Inbox) Draft(pendingID string) string {
	if e, ok := b.entries[pendingID]; ok {
		return e.draft
	}
	return ""
}

// SetDraft keeps the text typed into pendingID's answer box.
func (b *Inbox) SetDraft(pendingID, text string) {
	if e, ok := b.entries[pendingID]; ok {
		e.draft = text
	}
}

// Ago says how long before now t was, in a few words: "just now",
// "5 min ago", "3 h ago", "2 d ago". A t after now (a clock ahead of
// this one) is "just now".
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " d ago"
}
