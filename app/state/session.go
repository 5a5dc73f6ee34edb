package state

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/herd-dev/herd/shared"
)

// SessionDetail is the client's copy of one opened session: the session,
// its transcript ordered by seq, its queue, the latest git observation of
// its task's repositories, and the position in the session's notification
// stream. Like Store it is owned by the UI goroutine and needs no lock.
//
// The detail is fed in three ways, always in arrival order:
//
//   - Push takes every session notification. Before the subscribe
//     response it only buffers (the server joins the stream before it reads
//     the snapshot); afterwards it checks the seq and either applies the
//     notification at once or, for a session.message.updated, keeps it in
//     the frame's batch.
//   - Flush applies the batch; the UI calls it once per animation frame.
//     Every other notification flushes the batch before it is applied, so
//     the batch never reorders anything.
//   - Load applies the snapshot of session.subscribe and then the buffered
//     notifications.
//
// A gap in the seq (a semantic notification whose seq is not last+1) makes
// the detail stale: Resync reports it, nothing more is applied, and the UI
// subscribes again; Reset then Load start over.
type SessionDetail struct {
	id      string
	session shared.Session
	queue   []shared.QueuedPrompt
	// git holds the latest observation of each task repository, as the
	// snapshot or the newest session.git.updated carried it.
	git []shared.RepositoryGit
	// commands are the agent's slash commands (see facts.go).
	commands []shared.SlashCommand
	// msgs holds the transcript by message id; order is the ids by seq.
	msgs  map[string]shared.Message
	order []string
	// orderStale says order must be rebuilt before it is read.
	orderStale bool

	// loaded is set once a snapshot has been applied.
	loaded bool
	// early buffers notifications that arrived before the snapshot.
	early []shared.Envelope
	// lastSeq is the seq of the last semantic notification accepted.
	lastSeq uint64
	// resync is set when a gap was seen; nothing is applied until Load.
	resync bool

	// batch holds the newest session.message.updated per message id,
	// applied by Flush; batchOrder keeps first-arrival order.
	batch      map[string]shared.Message
	batchOrder []string

	// writes counts message writes that changed the transcript; tests and
	// the UI use it to tell whether anything needs rendering.
	writes uint64
	// earlier is set while the server may hold messages older than the
	// oldest one held: a snapshot carries only the newest ones.
	earlier bool
	// lowest is the lowest seq among the messages changed since
	// TakeLowestChanged last ran; 0 for none.
	lowest int64
}

// NewSessionDetail returns an empty, not yet loaded detail of a session.
func NewSessionDetail(sessionID string) *SessionDetail {
	return &SessionDetail{id: sessionID, msgs: make(map[string]shared.Message), batch: make(map[string]shared.Message)}
}

// ID returns the session's id.
func (d *SessionDetail) ID() string { return d.id }

// Loaded reports whether a snapshot has been applied since the last Reset.
func (d *SessionDetail) Loaded() bool { return d.loaded }

// Resync reports whether a gap was seen: the UI must unsubscribe and
// subscribe again, then Reset and Load the new snapshot.
func (d *SessionDetail) Resync() bool { return d.resync }

// Session returns the session as last known.
func (d *SessionDetail) Session() shared.Session { return d.session }

// Queue returns the prompts waiting for the running turn.
func (d *SessionDetail) Queue() []shared.QueuedPrompt { return d.queue }

// Git returns the latest git observation of each of the task's
// repositories, in the server's order; empty until a snapshot that carries
// them. Callers must not modify the slice.
func (d *SessionDetail) Git() []shared.RepositoryGit { return d.git }

// Writes returns how many message writes changed the transcript so far.
func (d *SessionDetail) Writes() uint64 { return d.writes }

// Messages returns the transcript in ascending seq. The slice is fresh;
// callers may keep it.
func (d *SessionDetail) Messages() []shared.Message {
	if d.orderStale {
		d.order = d.order[:0]
		for id := range d.msgs {
			d.order = append(d.order, id)
		}
		slices.SortFunc(d.order, func(a, b string) int {
			if c := cmp.Compare(d.msgs[a].Seq, d.msgs[b].Seq); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		d.orderStale = false
	}
	out := make([]shared.Message, len(d.order))
	for i, id := range d.order {
		out[i] = d.msgs[id]
	}
	return out
}

// Message returns one message of the transcript.
func (d *SessionDetail) Message(id string) (shared.Message, bool) {
	m, ok := d.msgs[id]
	return m, ok
}

// HasEarlier reports whether the server may hold messages older than the
// oldest one held (see Earlier).
func (d *SessionDetail) HasEarlier() bool { return d.earlier }

// OldestSeq returns the seq of the oldest message held; 0 when none is.
func (d *SessionDetail) OldestSeq() int64 {
	var oldest int64
	for _, m := range d.msgs {
		if oldest == 0 || (m.Seq > 0 && m.Seq < oldest) {
			oldest = m.Seq
		}
	}
	return oldest
}

// Earlier adds a page of older messages (a message.list answer read before
// OldestSeq) and whether the server has more before them. A copy of a
// message the detail already holds passes the same newest-wins rule as a
// live update, so a page read before a live update never undoes it.
func (d *SessionDetail) Earlier(msgs []shared.Message, hasMore bool) {
	if !d.loaded {
		return
	}
	for _, m := range msgs {
		if m.SessionID == d.id || m.SessionID == "" {
			d.writeMessage(m)
		}
	}
	d.earlier = hasMore
}

// Reset forgets everything but the session record, the git observations
// and the slash commands and starts buffering for the next snapshot, as after a
// reconnect or a resync. Both stay so the view keeps showing the last known
// state until the snapshot replaces them; the record's StateRevision also
// still gates what follows: the server persists revisions, and they keep
// rising across reconnects and restarts.
func (d *SessionDetail) Reset() {
	held, git, commands := d.session, d.git, d.commands
	*d = *NewSessionDetail(d.id)
	d.session, d.git, d.commands = held, git, commands
}

// SetSession records the session from a session.list, session.create or
// session.subscribe answer. A record whose StateRevision is at least the
// held one replaces the held copy whole: state, foreground activity (an
// omitted one clears a stale background) and subagent count. An older one
// is ignored, so a live event applied while the request was in flight
// stays. Equal revisions are accepted because a restarted server keeps the
// revision but not the in-memory activity it counted.
//
// Once a snapshot is loaded, the fields that change without a revision —
// the configuration, the title and the usage — are the snapshot's and
// those of the notifications that followed it: a record read before the
// newest of those may carry older ones. The prompt capabilities stay too
// when the record has none.
func (d *SessionDetail) SetSession(s shared.Session) {
	if d.session.ID == "" || s.StateRevision >= d.session.StateRevision {
		if d.loaded {
			s.Config, s.Title, s.Usage = d.session.Config, d.session.Title, d.session.Usage
			if s.PromptCapabilities == nil {
				s.PromptCapabilities = d.session.PromptCapabilities
			}
		}
		d.session = s
	}
}

// SetConfig records the configuration a session.config.set answered
// with. The session.config.updated that carries the same change may come
// before or after it; a later change's event, should one overtake the
// answer, comes again with the next change.
func (d *SessionDetail) SetConfig(c shared.SessionConfig) {
	d.session.Config = &c
}

// Load applies the snapshot of session.subscribe, then the notifications
// that arrived before it. Those were sent after the server joined the
// stream, so applying them over the snapshot only moves it forward.
func (d *SessionDetail) Load(snap shared.SessionSnapshot) {
	early := d.early
	d.Reset()
	// The snapshot's unrevisioned fields are the ones at subscription,
	// even when the held record's revision is newer.
	d.session.Config, d.session.Title, d.session.Usage = snap.Session.Config, snap.Session.Title, snap.Session.Usage
	d.SetSession(snap.Session)
	for _, m := range snap.Messages {
		d.writeMessage(m)
	}
	for _, m := range snap.Pending {
		d.writeMessage(m)
	}
	d.setQueue(snap.Queue)
	d.git = slices.Clone(snap.Git)
	d.commands = slices.Clone(snap.Commands)
	d.loaded = true
	d.earlier = d.OldestSeq() > 1
	for _, env := range currentStream(early) {
		d.Push(env)
	}
	d.Flush()
}

// currentStream drops the notifications of an earlier subscription from
// the buffer: after an unsubscribe and subscribe the server counts from 1
// again, and frames of the old stream that were already on their way come
// first.
func currentStream(early []shared.Envelope) []shared.Envelope {
	start := 0
	for i := 1; i < len(early); i++ {
		if early[i].Seq < early[i-1].Seq {
			start = i
		}
	}
	if start < len(early) && early[start].Seq != 1 {
		return nil
	}
	return early[start:]
}

// Push takes one session notification in arrival order and reports
// whether the detail needs a resync. Notifications of other sessions (a
// session just closed may still send some) are ignored. A streaming
// update is decoded here once, for the session check and the batch alike.
func (d *SessionDetail) Push(env shared.Envelope) bool {
	if d.resync {
		return true
	}
	var update shared.Message
	if env.Action == shared.NotifySessionMessageUpdated {
		m, ok := decode[shared.Message](env.Payload)
		if !ok || m.ID == "" || m.SessionID != d.id {
			return false
		}
		update = m
	} else if ref, ok := decode[struct {
		SessionID string `json:"session_id"`
	}](env.Payload); !ok || ref.SessionID != d.id {
		return false
	}
	if !d.loaded {
		if env.Seq >= 1 {
			d.early = append(d.early, env)
		}
		return false
	}
	if !d.acceptSeq(env) {
		d.resync = true
		d.dropBatch()
		return true
	}
	if env.Action == shared.NotifySessionMessageUpdated {
		m := update
		if partial(m) {
			// Complete a partial update from the newest copy known, so the
			// batch holds whole messages only.
			base, ok := d.batch[m.ID]
			if !ok {
				base, ok = d.msgs[m.ID]
			}
			if m, ok = completed(base, ok, m); !ok {
				d.resync = true
				d.dropBatch()
				return true
			}
		}
		if _, seen := d.batch[m.ID]; !seen {
			d.batchOrder = append(d.batchOrder, m.ID)
			d.batch[m.ID] = m
			return false
		}
		d.batch[m.ID] = newer(d.batch[m.ID], m)
		return false
	}
	// Every other notification is an ordered barrier.
	d.Flush()
	d.apply(env)
	return false
}

// acceptSeq checks env's seq against the stream and advances it. A
// session.message.updated of a still-streaming message may be
// intermediate (same seq as the last semantic frame) or semantic (the
// next); everything else must be the next.
func (d *SessionDetail) acceptSeq(env shared.Envelope) bool {
	if env.Seq == d.lastSeq+1 {
		d.lastSeq = env.Seq
		return true
	}
	if env.Action == shared.NotifySessionMessageUpdated && env.Seq == d.lastSeq {
		if m, ok := decode[shared.Message](env.Payload); ok && m.Status == shared.MessageStreaming {
			return true
		}
	}
	return false
}

// Flush applies the batched message updates, one write per changed
// message, and reports how many changed the transcript.
func (d *SessionDetail) Flush() int {
	n := 0
	for _, id := range d.batchOrder {
		if d.writeMessage(d.batch[id]) {
			n++
		}
	}
	d.dropBatch()
	return n
}

// Pending reports whether Flush has anything to apply.
func (d *SessionDetail) Pending() bool { return len(d.batchOrder) > 0 }

func (d *SessionDetail) dropBatch() {
	clear(d.batch)
	d.batchOrder = d.batchOrder[:0]
}

// apply makes one semantic notification other than a message update.
func (d *SessionDetail) apply(env shared.Envelope) {
	switch env.Action {
	case shared.NotifySessionMessageAdded:
		if m, ok := decode[shared.Message](env.Payload); ok && m.ID != "" {
			d.writeMessage(m)
			d.setQueue(d.queue)
		}
	case shared.NotifySessionMessageDeleted:
		if m, ok := decode[shared.Message](env.Payload); ok {
			if _, had := d.msgs[m.ID]; had {
				d.changed(d.msgs[m.ID].Seq)
				delete(d.msgs, m.ID)
				d.orderStale = true
			}
		}
	case shared.NotifySessionStateChanged, shared.NotifySessionActivityChanged:
		if ev, ok := decode[shared.SessionStateEvent](env.Payload); ok {
			d.applyState(ev)
		}
	case shared.NotifySessionQueueChanged:
		if ev, ok := decode[shared.QueueChangedEvent](env.Payload); ok {
			d.setQueue(ev.Queue)
		}
	case shared.NotifySessionConfigUpdated:
		// The whole configuration, every time.
		if ev, ok := decode[shared.SessionConfigEvent](env.Payload); ok {
			c := ev.Config
			d.session.Config = &c
		}
	case shared.NotifySessionGitUpdated:
		// Every repository of the task, every time: a whole replacement.
		if ev, ok := decode[shared.SessionGitEvent](env.Payload); ok {
			d.git = ev.Repositories
		}
	case shared.NotifySessionInfoUpdated, shared.NotifySessionCommandsUpdated:
		d.applyFacts(env)
	}
}

// setQueue stores the queue without the prompts the transcript already
// holds: a queued prompt leaves the queue by joining the transcript, and a
// queue listing read just before that may arrive after it.
func (d *SessionDetail) setQueue(q []shared.QueuedPrompt) {
	d.queue = slices.DeleteFunc(slices.Clone(q), func(p shared.QueuedPrompt) bool {
		m, ok := d.msgs[p.ID]
		return ok && m.Status != shared.MessagePending
	})
}

// applyState applies a session.state_changed or session.activity_changed
// whose StateRevision is newer than the held one; an omitted foreground
// activity means settled and clears the held one, and an omitted
// context_lost says the agent's context was restored. An event without a
// revision (zero: a session's first change already raises it to one) comes
// from a server that does not count them yet and is applied in arrival
// order, without moving the held revision.
func (d *SessionDetail) applyState(ev shared.SessionStateEvent) {
	if ev.StateRevision != 0 && ev.StateRevision <= d.session.StateRevision {
		return
	}
	if ev.State != "" {
		d.session.State = ev.State
	}
	d.session.ForegroundActivity = ev.ForegroundActivity
	d.session.ActiveSubagentCount = max(ev.ActiveSubagentCount, 0)
	d.session.ContextLost = ev.ContextLost
	if ev.PromptCapabilities != nil {
		// Absent says nothing new: the capabilities change only when the
		// agent starts, and its start's event carries them.
		d.session.PromptCapabilities = ev.PromptCapabilities
	}
	if ev.StateRevision != 0 {
		d.session.StateRevision = ev.StateRevision
	}
}

// writeMessage is the one function that changes the transcript. The
// stored copy is replaced only by a copy that is not older (see newer); an
// update that carries only appended text (AppendFrom) is completed from
// the stored copy first. It reports whether the transcript changed.
func (d *SessionDetail) writeMessage(m shared.Message) bool {
	old, had := d.msgs[m.ID]
	if partial(m) {
		var ok bool
		if m, ok = completed(old, had, m); !ok {
			return false
		}
	}
	if had {
		n := newer(old, m)
		if n.UpdatedAt.Equal(old.UpdatedAt) && n.Status == old.Status && n.Content == old.Content &&
			n.Seq == old.Seq && sameJSON(n.Metadata, old.Metadata) {
			return false
		}
		if n.Seq != old.Seq {
			d.orderStale = true
		}
		d.msgs[m.ID] = n
		d.lower(old.Seq) // where it was, should its seq have moved
	} else {
		d.msgs[m.ID] = m
		d.orderStale = true
	}
	d.changed(m.Seq)
	return true
}

// changed counts a transcript write at seq.
func (d *SessionDetail) changed(seq int64) {
	d.writes++
	d.lower(seq)
}

// lower notes a change at seq for TakeLowestChanged.
func (d *SessionDetail) lower(seq int64) {
	if d.lowest == 0 || (seq > 0 && seq < d.lowest) {
		d.lowest = seq
	}
}

// TakeLowestChanged returns the lowest seq among the messages written or
// deleted since it last ran (0 for none), and starts over: a view that
// renders its older messages apart can tell whether any of them changed.
func (d *SessionDetail) TakeLowestChanged() int64 {
	l := d.lowest
	d.lowest = 0
	return l
}

// newer picks between two copies of a message: the later UpdatedAt wins;
// at equal times a terminal status beats a streaming one, and otherwise
// the later arrival (b) wins. A late intermediate update therefore never
// overwrites a final state.
func newer(a, b shared.Message) shared.Message {
	switch c := b.UpdatedAt.Compare(a.UpdatedAt); {
	case c > 0:
		return b
	case c < 0:
		return a
	}
	if a.Status != shared.MessageStreaming && b.Status == shared.MessageStreaming {
		return a
	}
	return b
}

// decode reads a notification payload.
func decode[T any](raw json.RawMessage) (T, bool) {
	var v T
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return v, false
	}
	return v, true
}

// sameJSON compares two messages' metadata by their encodings.
func sameJSON(a, b *shared.MessageMetadata) bool {
	if a == nil && b == nil {
		return true
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
