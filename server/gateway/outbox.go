package gateway

import (
	"context"
	"sync"
)

// Outbox bounds. Answers (responses and errors) are bounded where they are
// admitted: a connection may have at most defaultOutstanding requests read
// and not yet answered on the socket, and the reader reads no further
// request while defaultAnswerBytes of answers wait to be written. The
// semantic bound counts ordered notifications over the feed and every
// session. The allowance bounds the replaceable entries one session may
// have queued, and the byte bound all queued notification bytes of a
// connection.
const (
	defaultOutstanding = 16
	defaultAnswerBytes = 4 << 20
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
	// yielded counts the replaceable entries, of any session, dropped to
	// make room under the byte bound for a semantic frame.
	yielded int
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
	// stamp orders entries by when they were first queued, across
	// sessions; a replacement keeps the stamp of the state it replaces.
	stamp uint64
	// answer marks a response or error: it frees its request's slot once
	// written (see outbox.written).
	answer bool
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
// Answers are bounded by backpressure, not by a policy: the reader admits
// each frame it reads (admit) before reading it, which waits while
// maxOutstanding requests are running or answered but not yet written, or
// while maxAnswerBytes of answers wait to be written. Every frame read is
// answered exactly once, and the answer's slot is freed when the writer
// has written it (written). A reader that waits reads nothing, so the
// client's own requests wait in its socket: only that client slows down.
// An answer without an admitted slot would be a bug; pushControl refuses
// it and the connection is closed.
//
// Overflow policies for notifications: a semantic frame over the semantic
// bound reports failure; over the byte bound it first evicts queued
// replaceable entries of any session, oldest first (they are only
// intermediate states), and reports failure only when that cannot make
// room. Failure closes the connection (a dropped ordered notification
// would leave the client wrong). A replaceable frame (an intermediate
// state of a streaming message) replaces the queued one of the same
// message after the session's last barrier, in place; over the session's
// allowance or the byte bound it evicts that session's own oldest
// replaceable entries, never another session's and never a semantic
// frame. A message's final state is always semantic, so eviction loses
// only intermediate states.
type outbox struct {
	wake chan struct{} // capacity 1: signals the writer that work is queued
	room chan struct{} // capacity 1: signals the reader that an answer was written
	outboxBounds

	mu sync.Mutex // guards the fields below
	// outstanding counts admitted frames whose answer is not yet written;
	// unwritten, those of them answered (queued or being written); and
	// answerBytes, the bytes of the unwritten answers.
	outstanding, unwritten, answerBytes int
	control, feed                       [][]byte
	sessions                            map[string]*sessionQueue
	// turn lists the sessions with queued entries, and "" for the feed
	// when it has some, in serving order; cursor is the next to serve.
	turn     []string
	cursor   int
	semantic int    // queued semantic entries, feed included
	bytes    int    // queued notification bytes
	stamps   uint64 // the last entry stamp given
	closed   bool
}

// outboxBounds are an outbox's limits (see outbox).
type outboxBounds struct {
	maxOutstanding, maxAnswerBytes   int
	semanticCap, allowance, maxBytes int
}

func newOutbox(b outboxBounds) *outbox {
	return &outbox{
		wake:         make(chan struct{}, 1),
		room:         make(chan struct{}, 1),
		outboxBounds: b,
		sessions:     make(map[string]*sessionQueue),
	}
}

// signal wakes the writer without blocking.
func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// admit takes a slot for the answer to the next frame the reader reads,
// waiting while the connection has maxOutstanding frames unanswered on the
// socket or maxAnswerBytes of answers unwritten. It reports false when ctx
// ends or the outbox is closed first. Only the reader calls it, so one
// wake-up channel suffices.
func (o *outbox) admit(ctx context.Context) bool {
	for {
		o.mu.Lock()
		closed := o.closed
		ok := !closed && o.outstanding < o.maxOutstanding && o.answerBytes < o.maxAnswerBytes
		if ok {
			o.outstanding++
		}
		o.mu.Unlock()
		if ok || closed {
			return ok
		}
		select {
		case <-o.room:
		case <-ctx.Done():
			return false
		}
	}
}

// pushControl queues the answer to an admitted frame. It reports false when
// the outbox is closed or the answer has no slot (every admitted frame is
// answered once, so that would be a bug).
func (o *outbox) pushControl(frame []byte) bool {
	o.mu.Lock()
	ok := !o.closed && o.unwritten < o.outstanding
	if ok {
		o.control = append(o.control, frame)
		o.unwritten++
		o.answerBytes += len(frame)
	}
	o.mu.Unlock()
	if ok {
		o.signal()
	}
	return ok
}

// written frees the slot of an answer the writer has written, and lets a
// waiting reader read on.
func (o *outbox) written(e entry) {
	if !e.answer {
		return
	}
	o.mu.Lock()
	if !o.closed {
		o.outstanding--
		o.unwritten--
		o.answerBytes -= len(e.frame)
	}
	o.mu.Unlock()
	select {
	case o.room <- struct{}{}:
	default:
	}
}

// pushFeed queues a workspace feed notification (semantic).
func (o *outbox) pushFeed(frame []byte) pushResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.semantic >= o.semanticCap {
		return pushResult{}
	}
	yielded, ok := o.yield(len(frame))
	if !ok {
		return pushResult{}
	}
	if len(o.feed) == 0 {
		o.turn = append(o.turn, "")
	}
	o.feed = append(o.feed, frame)
	o.semantic++
	o.bytes += len(frame)
	o.signal()
	return pushResult{ok: true, yielded: yielded}
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
	var res pushResult
	if key == "" {
		if o.semantic >= o.semanticCap {
			return pushResult{}
		}
		var ok bool
		if res.yielded, ok = o.yield(size); !ok {
			return pushResult{}
		}
		o.semantic++
	}
	// A session is in sessions and turn exactly while it has entries;
	// look it up only now, since yielding may have emptied it.
	q := o.sessions[sessionID]
	if q == nil {
		q = &sessionQueue{}
	}
	if key != "" {
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
			e.stamp = q.entries[j].stamp
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
	// Eviction may have emptied a queue that is still in the serving
	// order: only a queue not in it joins it.
	if o.sessions[sessionID] != q {
		o.sessions[sessionID] = q
		o.turn = append(o.turn, sessionID)
	}
	o.stamps++
	e.stamp = o.stamps
	q.entries = append(q.entries, e)
	o.bytes += size
	res.ok = true
	o.signal()
	return res
}

// yield makes room under the byte bound for a semantic frame of size
// bytes by evicting queued replaceable entries of any session, oldest
// first. It evicts nothing, and reports false, when even evicting all of
// them would not make enough room. It returns how many it evicted.
func (o *outbox) yield(size int) (int, bool) {
	need := o.bytes + size - o.maxBytes
	if need <= 0 {
		return 0, true
	}
	replaceable := 0
	for _, q := range o.sessions {
		for _, e := range q.entries {
			if e.key != "" {
				replaceable += e.size()
			}
		}
	}
	if replaceable < need {
		return 0, false
	}
	evicted := 0
	for o.bytes+size > o.maxBytes {
		// Within a session, queue order is stamp order: each session's
		// oldest replaceable entry is a candidate.
		var oldest *sessionQueue
		var oldestID string
		at := -1
		for id, q := range o.sessions {
			if i := q.oldestReplaceable(); i >= 0 && (at < 0 || q.entries[i].stamp < oldest.entries[at].stamp) {
				oldest, oldestID, at = q, id, i
			}
		}
		o.removeEntry(oldest, at)
		o.dropIfEmpty(oldestID, oldest)
		evicted++
	}
	return evicted, true
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

// next removes and returns the entry to write next: an answer, or the head
// of the feed or session whose turn it is. An answer keeps its slot until
// the writer reports it written.
func (o *outbox) next() (entry, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.control) > 0 {
		f := o.control[0]
		o.control[0] = nil
		o.control = o.control[1:]
		return entry{frame: f, answer: true}, true
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

// answers reports the admitted frames not yet answered on the socket and
// the bytes of the answers waiting to be written (for tests).
func (o *outbox) answers() (outstanding, bytes int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.outstanding, o.answerBytes
}

// close empties the outbox and refuses further frames, freeing its memory.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.control, o.feed, o.sessions, o.turn = nil, nil, nil, nil
	o.semantic, o.bytes, o.cursor = 0, 0, 0
	o.outstanding, o.unwritten, o.answerBytes = 0, 0, 0
	o.mu.Unlock()
}
