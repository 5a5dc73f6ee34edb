package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bounds returns outbox bounds for a unit test: room for 4 answers of any
// size, and the given notification bounds.
func bounds(semanticCap, allowance, maxBytes int) outboxBounds {
	return outboxBounds{maxOutstanding: 4, maxAnswerBytes: 1 << 20, semanticCap: semanticCap, allowance: allowance, maxBytes: maxBytes}
}

// answer admits a frame and queues its answer, as the reader and a request
// would.
func answer(t *testing.T, o *outbox, frame string) {
	t.Helper()
	require.True(t, o.admit(context.Background()))
	require.True(t, o.pushControl([]byte(frame)))
}

// push queues an encoded session frame, replaceable when key is set.
func push(o *outbox, sessionID, key string, frame []byte) pushResult {
	return o.pushSession(sessionID, entry{frame: frame, key: key})
}

// drain returns every frame the writer would send, in order.
func drain(o *outbox) []string {
	var got []string
	for {
		e, ok := o.next()
		if !ok {
			return got
		}
		got = append(got, string(e.frame))
	}
}

func TestOutboxDrainsControlFirst(t *testing.T) {
	o := newOutbox(bounds(8, 4, 1<<20))
	require.True(t, o.pushFeed([]byte("task-1")).ok)
	require.True(t, push(o, "s1", "", []byte("added-1")).ok)
	require.True(t, push(o, "s1", "m1", []byte("update-1")).ok)
	answer(t, o, "response-1")
	assert.Equal(t, []string{"response-1", "task-1", "added-1", "update-1"}, drain(o))
}

func TestReplaceableFrameReplacesItsQueuedStateInPlace(t *testing.T) {
	o := newOutbox(bounds(8, 4, 1<<20))
	push(o, "s1", "m1", []byte("m1 v1"))
	push(o, "s1", "m2", []byte("m2 v1"))
	res := push(o, "s1", "m1", []byte("m1 v2"))
	assert.True(t, res.ok)
	assert.True(t, res.replaced)
	assert.Zero(t, res.evicted)
	assert.Equal(t, []string{"m1 v2", "m2 v1"}, drain(o), "the newer state took the older one's place")
}

func TestSemanticFrameIsABarrierForReplacement(t *testing.T) {
	o := newOutbox(bounds(8, 4, 1<<20))
	push(o, "s1", "m1", []byte("m1 v1"))
	push(o, "s1", "", []byte("m2 added"))
	res := push(o, "s1", "m1", []byte("m1 v2"))
	assert.False(t, res.replaced, "a state produced after the barrier may not jump ahead of it")
	assert.Equal(t, []string{"m1 v1", "m2 added", "m1 v2"}, drain(o))
}

func TestAllowanceIsPerSessionAndEvictsTheNoisySessionsOwnOldest(t *testing.T) {
	o := newOutbox(bounds(64, 2, 1<<20))
	push(o, "quiet", "q1", []byte("quiet update"))
	push(o, "noisy", "", []byte("noisy added"))
	for i := range 5 {
		res := push(o, "noisy", fmt.Sprint("n", i), []byte(fmt.Sprint("noisy update ", i)))
		require.True(t, res.ok)
		if i >= 2 {
			assert.Equal(t, 1, res.evicted, "update %d", i)
		}
	}
	got := drain(o)
	assert.ElementsMatch(t, []string{"quiet update", "noisy added", "noisy update 3", "noisy update 4"}, got,
		"the noisy session kept its two newest; the quiet one and the semantic frame are untouched")
}

func TestSessionsAndTheFeedAreServedInTurn(t *testing.T) {
	o := newOutbox(bounds(256, 4, 1<<20))
	for i := range 50 {
		push(o, "noisy", "", []byte(fmt.Sprint("noisy ", i)))
	}
	push(o, "quiet", "", []byte("quiet"))
	o.pushFeed([]byte("task"))
	got := drain(o)
	assert.Equal(t, []string{"noisy 0", "quiet", "task", "noisy 1"}, got[:4], "one frame each per turn")
	assert.Len(t, got, 52)
}

func TestPerSessionOrderHolds(t *testing.T) {
	o := newOutbox(bounds(256, 4, 1<<20))
	for i := range 20 {
		push(o, "a", "", []byte(fmt.Sprint("a", i)))
		push(o, "b", "", []byte(fmt.Sprint("b", i)))
	}
	var a, b []string
	for _, f := range drain(o) {
		if strings.HasPrefix(f, "a") {
			a = append(a, f)
		} else {
			b = append(b, f)
		}
	}
	for i := range 20 {
		assert.Equal(t, fmt.Sprint("a", i), a[i])
		assert.Equal(t, fmt.Sprint("b", i), b[i])
	}
}

func TestSemanticOverflowIsReported(t *testing.T) {
	o := newOutbox(bounds(3, 4, 1<<20))
	require.True(t, o.pushFeed([]byte("1")).ok)
	require.True(t, push(o, "s1", "", []byte("2")).ok)
	require.True(t, push(o, "s2", "", []byte("3")).ok)
	assert.False(t, push(o, "s1", "", []byte("4")).ok, "a full semantic bound refuses a session frame")
	assert.False(t, o.pushFeed([]byte("4")).ok, "and a feed frame")
	assert.True(t, push(o, "s1", "m1", []byte("update")).ok, "replaceable frames have their own allowance")
	answer(t, o, "response") // responses are never held back by notifications
}

// written has the writer take the next entry and report it written.
func written(t *testing.T, o *outbox) string {
	t.Helper()
	e, ok := o.next()
	require.True(t, ok)
	o.written(e)
	return string(e.frame)
}

// cannotAdmit reports that the reader would have to wait for a slot.
func cannotAdmit(o *outbox) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return !o.admit(ctx)
}

func TestAnAnswersSlotIsFreedWhenItIsWrittenNotWhenItIsQueued(t *testing.T) {
	o := newOutbox(outboxBounds{maxOutstanding: 2, maxAnswerBytes: 1 << 20, semanticCap: 4, allowance: 4, maxBytes: 1 << 20})
	answer(t, o, "r1")
	require.True(t, o.admit(context.Background()), "a request still running holds the second slot")
	assert.True(t, cannotAdmit(o), "two outstanding: the reader waits")

	e, ok := o.next()
	require.True(t, ok)
	assert.True(t, cannotAdmit(o), "an answer being written still holds its slot")
	o.written(e)
	assert.True(t, o.admit(context.Background()), "written: the reader reads on")
	outstanding, _ := o.answers()
	assert.Equal(t, 2, outstanding)
}

func TestUnwrittenAnswerBytesHoldTheReaderBack(t *testing.T) {
	o := newOutbox(outboxBounds{maxOutstanding: 8, maxAnswerBytes: 100, semanticCap: 4, allowance: 4, maxBytes: 1 << 20})
	answer(t, o, strings.Repeat("x", 60))
	answer(t, o, strings.Repeat("y", 60))
	_, bytes := o.answers()
	assert.Equal(t, 120, bytes, "an answer larger than the room left is still queued")
	assert.True(t, cannotAdmit(o), "no further frame is read while 100 bytes wait")
	written(t, o)
	assert.False(t, cannotAdmit(o), "60 bytes wait: the reader reads on")
}

func TestTheReaderWaitsForTheWriter(t *testing.T) {
	o := newOutbox(outboxBounds{maxOutstanding: 1, maxAnswerBytes: 1 << 20, semanticCap: 4, allowance: 4, maxBytes: 1 << 20})
	answer(t, o, "r1")
	admitted := make(chan bool)
	go func() { admitted <- o.admit(context.Background()) }()
	assert.Equal(t, "r1", written(t, o))
	assert.True(t, <-admitted, "the written answer woke the waiting reader")
}

func TestAnAnswerWithoutASlotIsRefused(t *testing.T) {
	o := newOutbox(bounds(4, 4, 1<<20))
	answer(t, o, "r1")
	assert.False(t, o.pushControl([]byte("r2")), "a second answer for one admitted frame is a bug the connection closes on")
}

func TestSemanticFrameEvictsReplaceableStatesOfAnySessionOldestFirst(t *testing.T) {
	o := newOutbox(bounds(64, 8, 100))
	state := func(c string) []byte { return []byte(strings.Repeat(c, 30)) }
	push(o, "s1", "m1", state("a"))
	push(o, "s2", "m2", state("b"))
	push(o, "s1", "m3", state("c"))
	require.True(t, push(o, "s1", "m1", state("A")).replaced, "a newer state of m1 keeps m1's place, and its age")

	res := push(o, "s3", "", []byte(strings.Repeat("S", 50)))
	require.True(t, res.ok, "the semantic frame is queued, not refused")
	assert.Equal(t, 2, res.yielded, "m1 (of s1) and m2 (of s2) made room, oldest first")
	assert.Zero(t, res.evicted)
	assert.ElementsMatch(t, []string{strings.Repeat("c", 30), strings.Repeat("S", 50)}, drain(o))
}

func TestFeedFrameEvictsReplaceableStates(t *testing.T) {
	o := newOutbox(bounds(64, 8, 100))
	push(o, "s1", "m1", []byte(strings.Repeat("a", 40)))
	push(o, "s1", "", []byte(strings.Repeat("b", 40)))
	res := o.pushFeed([]byte(strings.Repeat("f", 40)))
	require.True(t, res.ok)
	assert.Equal(t, 1, res.yielded)
	assert.ElementsMatch(t, []string{strings.Repeat("b", 40), strings.Repeat("f", 40)}, drain(o))
}

func TestSemanticFrameIsRefusedOnlyWhenEvictionCannotMakeRoom(t *testing.T) {
	o := newOutbox(bounds(64, 8, 100))
	push(o, "s1", "", []byte(strings.Repeat("a", 60)))
	push(o, "s2", "m1", []byte(strings.Repeat("b", 30)))
	res := push(o, "s3", "", []byte(strings.Repeat("c", 50)))
	assert.False(t, res.ok, "60 semantic bytes leave too little room even without the 30 replaceable ones")
	assert.Zero(t, res.yielded, "nothing was evicted in vain")
	_, bytes := o.queued()
	assert.Equal(t, 90, bytes)
}

func TestByteBoundEvictsOnlyReplaceableStates(t *testing.T) {
	o := newOutbox(bounds(64, 8, 100))
	big := strings.Repeat("x", 40)
	require.True(t, push(o, "s1", "m1", []byte(big)).ok)
	require.True(t, push(o, "s1", "m2", []byte(big)).ok)
	res := push(o, "s1", "m3", []byte(big))
	require.True(t, res.ok)
	assert.Equal(t, 1, res.evicted, "the session's oldest state made room")
	_, bytes := o.queued()
	assert.Equal(t, 80, bytes)

	res = push(o, "s2", "m9", []byte(big))
	assert.True(t, res.ok)
	assert.Equal(t, 1, res.evicted, "another session has nothing to give way: its new state goes, s1 keeps its own")
	assert.Equal(t, []string{big, big}, drain(o))
}

func TestGrowingReplacementStaysWithinTheByteBound(t *testing.T) {
	o := newOutbox(bounds(64, 8, 100))
	push(o, "s1", "m1", []byte(strings.Repeat("a", 30)))
	push(o, "s1", "m2", []byte(strings.Repeat("b", 30)))
	res := push(o, "s1", "m2", []byte(strings.Repeat("b", 60)))
	assert.True(t, res.replaced)
	assert.Zero(t, res.evicted)
	res = push(o, "s1", "m2", []byte(strings.Repeat("b", 90)))
	assert.Equal(t, 1, res.evicted, "the other state gave way")
	assert.Equal(t, []string{strings.Repeat("b", 90)}, drain(o))
}

func TestDroppedSessionAndClosedOutboxFreeTheirFrames(t *testing.T) {
	o := newOutbox(bounds(4, 4, 1<<20))
	push(o, "s1", "", []byte("a"))
	push(o, "s1", "m1", []byte("b"))
	push(o, "s2", "", []byte("c"))
	o.dropSession("s1")
	frames, bytes := o.queued()
	assert.Equal(t, 1, frames)
	assert.Equal(t, 1, bytes)
	assert.True(t, push(o, "s3", "", []byte("d")).ok, "the dropped frames no longer count")
	assert.True(t, push(o, "s3", "", []byte("e")).ok)
	assert.True(t, push(o, "s3", "", []byte("f")).ok)

	answer(t, o, "r1")
	o.close()
	_, ok := o.next()
	assert.False(t, ok)
	assert.False(t, o.pushControl([]byte("x")))
	assert.False(t, o.admit(context.Background()), "a closed outbox admits nothing")
	outstanding, answerBytes := o.answers()
	assert.Zero(t, outstanding)
	assert.Zero(t, answerBytes)
	frames, bytes = o.queued()
	assert.Zero(t, frames)
	assert.Zero(t, bytes)
}

func TestOutboxWakesTheWriterOnce(t *testing.T) {
	o := newOutbox(bounds(4, 4, 1<<20))
	o.pushFeed([]byte("a"))
	answer(t, o, "b")
	push(o, "s1", "m1", []byte("c"))
	assert.Len(t, o.wake, 1, "the wake signal coalesces")
}

// A streaming state that evicts every entry its session had queued leaves
// the session in the serving order once: served twice, the second turn
// would find no queue.
func TestEvictingASessionsWholeQueueKeepsOneTurn(t *testing.T) {
	o := newOutbox(bounds(8, 8, 100))
	require.True(t, push(o, "s1", "m1", make([]byte, 60)).ok)
	res := push(o, "s1", "m2", make([]byte, 60))
	require.True(t, res.ok)
	assert.Equal(t, 1, res.evicted, "m1's state made way")
	assert.Equal(t, []string{"s1"}, o.turn)
	assert.NotPanics(t, func() { assert.Len(t, drain(o), 1) })
	frames, bytes := o.queued()
	assert.Zero(t, frames)
	assert.Zero(t, bytes)
}
