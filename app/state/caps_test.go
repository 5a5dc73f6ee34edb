package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// A session created before its agent started learns what the agent takes
// in a prompt from the start's state event; a later event without them
// keeps what is known.
func TestSessionLearnsPromptCapabilitiesFromTheStartsStateEvent(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Session: sessionAt(1, shared.SessionStarting, "", 0)})
	require.Nil(t, d.Session().PromptCapabilities)
	caps := &shared.PromptCapabilities{Image: true, EmbeddedContext: true}
	ready := shared.SessionStateEvent{TaskID: "t1", SessionID: "s1", State: shared.SessionWaitingForInput, StateRevision: 2, PromptCapabilities: caps}
	d.Push(note(shared.NotifySessionStateChanged, 1, ready))
	assert.Equal(t, caps, d.Session().PromptCapabilities)
	d.Push(stateNote(shared.NotifySessionStateChanged, 2, 3, shared.SessionRunning, shared.ActivityGenerating, 0))
	assert.Equal(t, caps, d.Session().PromptCapabilities)
}
