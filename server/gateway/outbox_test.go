package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	o := newOutbox(4, 8, 4, 1<<20)
	require.True(t, o.pushFeed([]byte("task-1")))
	require.True(t, push(o, "s1", "", []byte("added-1")).ok)
	require.True(t, push(o, "s1", "m1", []byte("update-1")).ok)
	require.True(t, o.pushControl([]byte("response-1")))
	assert.Equal(t, []string{"response-1", "task-1", "added-1", "update-1"}, drain(o))
}

func TestReplaceableFrameReplacesItsQueuedStateInPlace(t *testing.T) {
	o := newOutbox(4, 8, 4, 1<<20)
	push(o, "s1", "m1", []byte("m1 v1"))
	push(o, "s1", "m2", []byte("m2 v1"))
	res := push(o, "s1", "m1", []byte("m1 v2"))
	assert.True(t, res.ok)
	assert.True(t, res.replaced)
	assert.Zero(t, res.evicted)
	assert.Equal(t, []string{"m1 v2", "m2 v1"}, drain(o), "the newer state took the older one's place")
}

func TestSemanticFrameIsABarrierForReplacement(t *testing.T) {
	o := newOutbox(4, 8, 4, 1<<20)
	push(o, "s1", "m1", []byte("m1 v1"))
	push(o, "s1", "", []byte("m2 added"))
	res := push(o, "s1", "m1", []byte("m1 v2"))
	assert.False(t, res.replaced, "a state produced after the barrier may not jump ahead of it")
	assert.Equal(t, []string{"m1 v1", "m2 added", "m1 v2"}, drain(o))
}

func TestAllowanceIsPerSessionAndEvictsTheNoisySessionsOwnOldest(t *testing.T) {
	o := newOutbox(4, 64, 2, 1<<20)
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
	o := newOutbox(4, 256, 4, 1<<20)
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
	o := newOutbox(4, 256, 4, 1<<20)
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
	o := newOutbox(4, 3, 4, 1<<20)
	require.True(t, o.pushFeed([]byte("1")))
	require.True(t, push(o, "s1", "", []byte("2")).ok)
	require.True(t, push(o, "s2", "", []byte("3")).ok)
	assert.False(t, push(o, "s1", "", []byte("4")).ok, "a full semantic bound refuses a session frame")
	assert.False(t, o.pushFeed([]byte("4")), "and a feed frame")
	assert.True(t, push(o, "s1", "m1", []byte("update")).ok, "replaceable frames have their own allowance")
	assert.True(t, o.pushControl([]byte("response")), "responses are never held back by notifications")
}

func TestControlOverflowIsReported(t *testing.T) {
	o := newOutbox(2, 4, 4, 1<<20)
	require.True(t, o.pushControl([]byte("r1")))
	require.True(t, o.pushControl([]byte("r2")))
	assert.False(t, o.pushControl([]byte("r3")))
}

func TestByteBoundEvictsOnlyReplaceableStates(t *testing.T) {
	o := newOutbox(4, 64, 8, 100)
	big := strings.Repeat("x", 40)
	require.True(t, push(o, "s1", "m1", []byte(big)).ok)
	require.True(t, push(o, "s1", "m2", []byte(big)).ok)
	res := push(o, "s1", "m3", []byte(big))
	require.True(t, res.ok)
	assert.Equal(t, 1, res.evicted, "the session's oldest state made room")
	_, bytes := o.queued()
	assert.Equal(t, 80, bytes)

	assert.False(t, o.pushFeed([]byte(big)), "an ordered frame over the byte bound is refused")
	res = push(o, "s2", "m9", []byte(big))
	assert.True(t, res.ok)
	assert.Equal(t, 1, res.evicted, "another session has nothing to give way: its new state goes, s1 keeps its own")
	assert.Equal(t, []string{big, big}, drain(o))
}

func TestGrowingReplacementStaysWithinTheByteBound(t *testing.T) {
	o := newOutbox(4, 64, 8, 100)
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
	o := newOutbox(4, 4, 4, 1<<20)
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

	o.close()
	_, ok := o.next()
	assert.False(t, ok)
	assert.False(t, o.pushControl([]byte("x")))
	frames, bytes = o.queued()
	assert.Zero(t, frames)
	assert.Zero(t, bytes)
}

func TestOutboxWakesTheWriterOnce(t *testing.T) {
	o := newOutbox(4, 4, 4, 1<<20)
	o.pushFeed([]byte("a"))
	o.pushControl([]byte("b"))
	push(o, "s1", "m1", []byte("c"))
	assert.Len(t, o.wake, 1, "the wake signal coalesces")
}
