package gateway

import "sync"

// Outbox bounds. The control lane holds responses and errors; it is sized
// well above the per-connection in-flight request limit, so it fills only
// when a client stops reading. The semantic bound counts ordered
// notifications over the feed and every session. The allowance bounds the
// replaceable entries one session may have queued, and the byte bound all
// queued notification bytes of a connection.
const (
	defaultControlCap  = 256
	defaultSemanticCap = 1024
	defaultAllowance   = 8
	defaultQueuedBytes = 16 << 20
	// messageOverhead is what a replaceable message state counts beyond
	// its content: its envelope and other fields.
	messageOverhead = 512
)

// laneClass names an outbound queue class in metrics and close reasons.
type laneClass string

const (
	laneControl     laneClass = "control"
	laneSemantic    laneClass = "semantic"
	laneReplaceable laneClass = "replaceable"
)

// pushResult says what a push did.
type pushResult struct {
	// ok is false when the frame could not be queued: the caller closes
	// the connection.
	ok bool
	// replaced is set when a replaceable frame took the place of a queued
	// one with the same key.
	replaced bool
	// evicted counts the session's own older replaceable entries dropped
	// to keep within its allowance or the byte bound (the new entry itself
	// when nothing else could go).
	evicted int
}

// entry is a queued frame. For a session, key is the message id of a
// replaceable entry and empty for a semantic one, which is a barrier:
// nothing queued after it is delivered before it. A replaceable entry has
// no frame yet: the writer encodes its message (see streamBook); a
// semantic entry carrying a message keeps it too, for the writer's
// record.
type entry struct {
	frame []byte
	key   string
	msg   *messageFrame
	// replacing marks the entry a newer state is about to replace.
	replacing bool
}

// size is what the entry counts against the byte bound.
func (e entry) size() int {
	if e.frame == nil && e.msg != nil {
		return len(e.msg.msg.Content) + messageOverhead
	}
	return len(e.frame)
}

// sessionQueue is one session's ordered notifications.
type sessionQueue struct {
	entries     []entry
	replaceable int // entries with a key
}

// outbox is one connection's bounded outbound queues, drained by the
// connection's single writer goroutine: control first; then, one frame at
// a time in turn, the workspace feed and each session with something
// queued, so a noisy session never holds back another or the feed.
//
// Overflow policies: a full control lane, semantic bound or byte bound on
// a semantic frame reports failure and the connection is closed (a dropped
// response or ordered notification would leave the client wrong). A
// replaceable frame (an intermediate state of a streaming message) replaces
// the queued one of the same message after the session's last barrier, in
// place; over the session's allowance or the byte bound it evicts that
// session's own oldest replaceable entries, never another session's and
// never a semantic frame. A message's final state is always semantic, so
// eviction loses only intermediate states.
type outbox struct {
	wake chan struct{} // capacity 1: signals the writer that work is queued

	controlCap, semanticCap, allowance, maxBytes int

	mu       sync.Mutex // guards the fields below
	control  [][]byte
	feed     [][]byte
	sessions map[string]*sessionQueue
	// turn lists the sessions with queued entries, and "" for the feed
	// when it has some, in serving order; cursor is the next to serve.
	turn     []string
	cursor   int
	semantic int // queued semantic entries, feed included
	bytes    int // queued notification bytes
	closed   bool
}

func newOutbox(controlCap, semanticCap, allowance, maxBytes int) *outbox {
	return &outbox{
		wake:       make(chan struct{}, 1),
		controlCap: controlCap, semanticCap: semanticCap, allowance: allowance, maxBytes: maxBytes,
		sessions: make(map[string]*sessionQueue),
	}
}

// signal wakes the writer without blocking.
func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// pushControl queues a response or error. It reports false when the lane is
// full or the outbox closed.
func (o *outbox) pushControl(frame []byte) bool {
	o.mu.Lock()
	ok := !o.closed && len(o.control) < o.controlCap
	if ok {
		o.control = append(o.control, frame)
	}
	o.mu.Unlock()
	if ok {
		o.signal()
	}
	return ok
}

// pushFeed queues a workspace feed notification (semantic).
func (o *outbox) pushFeed(frame []byte) bool {
	o.mu.Lock()
	ok := !o.closed && o.semantic < o.semanticCap && o.bytes+len(frame) <= o.maxBytes
	if ok {
		if len(o.feed) == 0 {
			o.turn = append(o.turn, "")
		}
		o.feed = append(o.feed, frame)
		o.semantic++
		o.bytes += len(frame)
	}
	o.mu.Unlock()
	if ok {
		o.signal()
	}
	return ok
}

// pushSession queues a notification of a session: a semantic one (key
// empty) behind everything the session has queued, or a replaceable one
// keyed by its message id (see outbox).
func (o *outbox) pushSession(sessionID string, e entry) pushResult {
	key, size := e.key, e.size()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return pushResult{}
	}
	// A session is in sessions and turn exactly while it has entries.
	q := o.sessions[sessionID]
	if q == nil {
		q = &sessionQueue{}
	}
	var res pushResult
	if key == "" {
		if o.semantic >= o.semanticCap || o.bytes+size > o.maxBytes {
			return pushResult{}
		}
		o.semantic++
	} else {
		res.ok = true
		if i := q.replaceableAfterBarrier(key); i >= 0 {
			o.bytes -= q.entries[i].size()
			q.entries[i].replacing = true // not counted while making room
			res.evicted += o.makeRoom(q, size, 0)
			j := q.replacing()
			if o.bytes+size > o.maxBytes {
				o.bytes += q.entries[j].size() // removeEntry takes it off again
				o.removeEntry(q, j)            // the new state goes too
				res.evicted++
				o.dropIfEmpty(sessionID, q)
				return res
			}
			q.entries[j] = e
			o.bytes += size
			res.replaced = true
			o.signal()
			return res
		}
		res.evicted += o.makeRoom(q, size, 1)
		if o.bytes+size > o.maxBytes {
			res.evicted++ // nothing of this session left to give way: the new state goes
			o.dropIfEmpty(sessionID, q)
			return res
		}
		q.replaceable++
	}
	if len(q.entries) == 0 {
		o.sessions[sessionID] = q
		o.turn = append(o.turn, sessionID)
	}
	q.entries = append(q.entries, e)
	o.bytes += size
	res.ok = true
	o.signal()
	return res
}

// makeRoom evicts the session's oldest replaceable entries (other than the
// one being replaced) until one more entry fits its
// allowance (adding is 1) and size more bytes fit the byte bound, or it
// has none left. It returns how many it evicted.
func (o *outbox) makeRoom(q *sessionQueue, size, adding int) int {
	evicted := 0
	for {
		over := q.replaceable+adding > o.allowance || o.bytes+size > o.maxBytes
		i := q.oldestReplaceable()
		if !over || i < 0 {
			return evicted
		}
		o.removeEntry(q, i)
		evicted++
	}
}

// oldestReplaceable returns the index of the session's oldest replaceable
// entry that is not being replaced, or -1.
func (q *sessionQueue) oldestReplaceable() int {
	for i, e := range q.entries {
		if e.key != "" && !e.replacing {
			return i
		}
	}
	return -1
}

// replacing returns the index of the entry being replaced.
func (q *sessionQueue) replacing() int {
	for i, e := range q.entries {
		if e.replacing {
			return i
		}
	}
	return -1
}

// removeEntry takes entry i out of the session's queue.
func (o *outbox) removeEntry(q *sessionQueue, i int) {
	e := q.entries[i]
	o.bytes -= e.size()
	if e.key == "" {
		o.semantic--
	} else {
		q.replaceable--
	}
	q.entries = append(q.entries[:i], q.entries[i+1:]...)
}

// replaceableAfterBarrier returns the index of the replaceable entry with
// key queued after the session's last semantic entry, or -1.
func (q *sessionQueue) replaceableAfterBarrier(key string) int {
	for i := len(q.entries) - 1; i >= 0; i-- {
		switch q.entries[i].key {
		case "":
			return -1
		case key:
			return i
		}
	}
	return -1
}

// dropIfEmpty forgets a session queue that eviction emptied.
func (o *outbox) dropIfEmpty(sessionID string, q *sessionQueue) {
	if len(q.entries) > 0 || o.sessions[sessionID] != q {
		return
	}
	delete(o.sessions, sessionID)
	o.removeTurn(sessionID)
}

// removeTurn takes id out of the serving order.
func (o *outbox) removeTurn(id string) {
	for i, t := range o.turn {
		if t == id {
			o.turn = append(o.turn[:i], o.turn[i+1:]...)
			if o.cursor > i {
				o.cursor--
			}
			break
		}
	}
	if o.cursor >= len(o.turn) {
		o.cursor = 0
	}
}

// dropSession discards what a session has queued (the connection closed
// it).
func (o *outbox) dropSession(sessionID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.sessions[sessionID]
	if q == nil {
		return
	}
	for _, e := range q.entries {
		o.bytes -= e.size()
		if e.key == "" {
			o.semantic--
		}
	}
	delete(o.sessions, sessionID)
	o.removeTurn(sessionID)
}

// next removes and returns the entry to write next: a control frame, or
// the head of the feed or session whose turn it is.
func (o *outbox) next() (entry, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.control) > 0 {
		f := o.control[0]
		o.control[0] = nil
		o.control = o.control[1:]
		return entry{frame: f}, true
	}
	if len(o.turn) == 0 {
		return entry{}, false
	}
	id := o.turn[o.cursor]
	var e entry
	empty := false
	if id == "" {
		e.frame = o.feed[0]
		o.feed[0] = nil
		o.feed = o.feed[1:]
		o.semantic--
		empty = len(o.feed) == 0
	} else {
		q := o.sessions[id]
		e = q.entries[0]
		q.entries[0] = entry{}
		q.entries = q.entries[1:]
		if e.key == "" {
			o.semantic--
		} else {
			q.replaceable--
		}
		empty = len(q.entries) == 0
		if empty {
			delete(o.sessions, id)
		}
	}
	o.bytes -= e.size()
	if empty {
		o.removeTurn(id)
	} else {
		o.cursor = (o.cursor + 1) % len(o.turn)
	}
	return e, true
}

// queued reports the queued frames and notification bytes (for tests).
func (o *outbox) queued() (frames, bytes int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	frames = len(o.control) + len(o.feed)
	for _, q := range o.sessions {
		frames += len(q.entries)
	}
	return frames, o.bytes
}

// close empties the outbox and refuses further frames, freeing its memory.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.control, o.feed, o.sessions, o.turn = nil, nil, nil, nil
	o.semantic, o.bytes, o.cursor = 0, 0, 0
	o.mu.Unlock()
}
