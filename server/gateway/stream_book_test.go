package gateway

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// state is a queued replaceable state of message m1 of session s1.
func state(stream uint64, content string) entry {
	return entry{key: "m1", msg: &messageFrame{
		session: "s1", stream: stream, action: shared.NotifySessionMessageUpdated, seq: 1,
		msg: shared.Message{ID: "m1", SessionID: "s1", Content: content, Status: shared.MessageStreaming},
	}}
}

// added is the semantic first state of message m1.
func added(stream uint64, content string) entry {
	msg := shared.Message{ID: "m1", SessionID: "s1", Content: content, Status: shared.MessageStreaming}
	return entry{frame: []byte("added"), msg: &messageFrame{session: "s1", stream: stream, msg: msg}}
}

// sent decodes the message a written frame carries.
func sent(t *testing.T, b *streamBook, e entry) shared.Message {
	t.Helper()
	frame, err := b.frame(e)
	require.NoError(t, err)
	var env shared.Envelope
	require.NoError(t, json.Unmarshal(frame, &env))
	var m shared.Message
	require.NoError(t, json.Unmarshal(env.Payload, &m))
	return m
}

func TestUpdatesCarryOnlyTheBytesTheConnectionLacks(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hel"))
	require.NoError(t, err)

	m := sent(t, b, state(1, "Hello, wo"))
	require.NotNil(t, m.AppendFrom)
	assert.Equal(t, 3, *m.AppendFrom)
	assert.Equal(t, "lo, wo", m.Content)

	// An intermediate state evicted before the writer saw it changes
	// nothing: the next delta starts where the last sent one ended.
	m = sent(t, b, state(1, "Hello, world and more"))
	assert.Equal(t, 9, *m.AppendFrom)
	assert.Equal(t, "rld and more", m.Content)
}

func TestANewSubscriptionGetsWholeStates(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hel"))
	require.NoError(t, err)
	m := sent(t, b, state(2, "Hello"))
	assert.Nil(t, m.AppendFrom, "the snapshot of the new subscription is the client's copy, not what this writer sent")
	assert.Equal(t, "Hello", m.Content)
	m = sent(t, b, state(2, "Hello!"))
	assert.Equal(t, 5, *m.AppendFrom)
}

// final is the semantic final state of message m1, encoded whole as the
// connection queued it.
func final(stream uint64, content string) entry {
	msg := shared.Message{ID: "m1", SessionID: "s1", Content: content, Status: shared.MessageComplete}
	return entry{frame: []byte("whole"), msg: &messageFrame{
		session: "s1", stream: stream, action: shared.NotifySessionMessageUpdated, seq: 2, msg: msg,
	}}
}

func TestTheFinalStateCarriesOnlyTheBytesTheConnectionLacks(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hel"))
	require.NoError(t, err)
	sent(t, b, state(1, "Hello"))

	m := sent(t, b, final(1, "Hello, world"))
	require.NotNil(t, m.AppendFrom)
	assert.Equal(t, 5, *m.AppendFrom)
	assert.Equal(t, ", world", m.Content)
	assert.Equal(t, shared.MessageComplete, m.Status, "status and metadata travel whole")
	assert.Empty(t, b.sent["s1"], "the final state ends the record")
}

func TestAFinalStateWithNothingNewCarriesNoContent(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hel"))
	require.NoError(t, err)
	sent(t, b, state(1, "Hello"))
	frame, err := b.frame(final(1, "Hello"))
	require.NoError(t, err)
	var env shared.Envelope
	require.NoError(t, json.Unmarshal(frame, &env))
	assert.Equal(t, uint64(2), env.Seq, "the delta keeps the semantic frame's seq")
	var m shared.Message
	require.NoError(t, json.Unmarshal(env.Payload, &m))
	assert.Equal(t, 5, *m.AppendFrom)
	assert.Empty(t, m.Content)
}

func TestAFinalStateAfterAnEvictedIntermediateOneStartsWhereTheLastSentEnded(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hel"))
	require.NoError(t, err)
	// "Hello" was queued, then replaced or evicted: the writer never saw it.
	m := sent(t, b, final(1, "Hello there"))
	assert.Equal(t, 3, *m.AppendFrom)
	assert.Equal(t, "lo there", m.Content)
}

func TestAReconnectedClientGetsTheFinalStateWhole(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hel"))
	require.NoError(t, err)
	frame, err := b.frame(final(2, "Hello"))
	require.NoError(t, err)
	assert.Equal(t, "whole", string(frame), "the new subscription holds only its snapshot")
}

func TestAFinalStateThatDoesNotExtendWhatWasSentGoesWhole(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hello"))
	require.NoError(t, err)
	frame, err := b.frame(final(1, "Help!"))
	require.NoError(t, err)
	assert.Equal(t, "whole", string(frame))
	_, err = b.frame(added(1, "Hello"))
	require.NoError(t, err)
	frame, err = b.frame(final(1, "Hi"))
	require.NoError(t, err)
	assert.Equal(t, "whole", string(frame), "shorter than what was sent")
}

func TestTheFirstStateIsWhole(t *testing.T) {
	b := newStreamBook()
	_, err := b.frame(added(1, "Hel"))
	require.NoError(t, err)
	again := added(1, "Hello")
	again.msg.action = shared.NotifySessionMessageAdded
	frame, err := b.frame(again)
	require.NoError(t, err)
	assert.Equal(t, "added", string(frame), "only session.message.updated carries deltas")
}
