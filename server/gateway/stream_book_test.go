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

// toolState is a state of tool call m1 whose one content part has body.
func toolState(title, body string, status shared.MessageState) entry {
	msg := shared.Message{ID: "m1", SessionID: "s1", Type: shared.MessageToolCall, Content: title, Status: status,
		Metadata: &shared.MessageMetadata{ToolCallID: "t1", Content: []shared.ToolContent{{Type: shared.ToolContentText, Body: body, Size: len(body)}}}}
	return entry{key: "m1", msg: &messageFrame{session: "s1", stream: 1, action: shared.NotifySessionMessageUpdated, seq: 1, msg: msg}}
}

func TestToolOutputThatOnlyGrewTravelsAsADelta(t *testing.T) {
	b := newStreamBook()
	first := toolState("Run", "line 1\n", shared.MessagePending)
	first.msg.action = shared.NotifySessionMessageAdded
	first.frame = []byte("added")
	_, err := b.frame(first)
	require.NoError(t, err)

	grown := toolState("Run", "line 1\nline 2\n", shared.MessageStreaming)
	m := sent(t, b, grown)
	part := m.Metadata.Content[0]
	require.NotNil(t, part.AppendFrom)
	assert.Equal(t, 7, *part.AppendFrom)
	assert.Equal(t, "line 2\n", part.Body)
	assert.Equal(t, 14, part.Size, "the other fields travel whole")
	assert.Equal(t, "line 1\nline 2\n", grown.msg.msg.Metadata.Content[0].Body, "the shared message is not changed")

	// A new title is not an extension of the old: it goes whole.
	m = sent(t, b, toolState("Run make", "line 1\nline 2\n", shared.MessageStreaming))
	assert.Equal(t, 3, *m.AppendFrom, "the title extends the old one")
	m = sent(t, b, toolState("Build", "line 1\nline 2\n", shared.MessageStreaming))
	assert.Nil(t, m.AppendFrom)
	assert.Equal(t, "Build", m.Content)

	// Output replaced by other output goes whole; the final state carries
	// only what is new.
	m = sent(t, b, toolState("Build", "other\n", shared.MessageStreaming))
	assert.Nil(t, m.Metadata.Content[0].AppendFrom)
	assert.Equal(t, "other\n", m.Metadata.Content[0].Body)
	end := toolState("Build", "other\ndone\n", shared.MessageComplete)
	end.key, end.frame = "", []byte("whole")
	m = sent(t, b, end)
	assert.Equal(t, 6, *m.Metadata.Content[0].AppendFrom)
	assert.Equal(t, "done\n", m.Metadata.Content[0].Body)
	assert.Equal(t, shared.MessageComplete, m.Status)
	assert.Empty(t, b.sent["s1"])
}
