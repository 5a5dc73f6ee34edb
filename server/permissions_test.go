package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// messageByID finds a message of the session's transcript.
func messageByID(t *testing.T, c *wsClient, sessionID, id any) map[string]any {
	t.Helper()
	for _, m := range c.call("message.list", map[string]any{"session_id": sessionID})["messages"].([]any) {
		if m.(map[string]any)["id"] == id {
			return m.(map[string]any)
		}
	}
	t.Fatalf("message %v is not in the transcript", id)
	return nil
}

// The pinned card offers the agent's own options, each with its kind;
// choosing "Allow always" answers the agent with that option, the request
// is stored with the choice, and no second answer, nor an answer to a
// request that never was, is taken.
func TestPermissionChoiceByKindIsAnsweredOnce(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "k-1", "content": "/scenario permission-kinds"})
	request := awaitRequest(t, c, "permission_request")
	var kinds, names []any
	for _, o := range request["metadata"].(map[string]any)["options"].([]any) {
		kinds = append(kinds, o.(map[string]any)["kind"])
		names = append(names, o.(map[string]any)["name"])
	}
	assert.Equal(t, []any{"allow_once", "allow_always", "reject_once", "reject_always"}, kinds)
	assert.Equal(t, []any{"Allow once", "Allow always", "Reject", "Reject always"}, names)

	respond := func(pendingID, optionID any) map[string]any {
		return map[string]any{"session_id": session["id"], "pending_id": pendingID, "option_id": optionID}
	}
	c.callErr("permission.respond", respond(request["pending_id"], "allow"), "bad_request")
	c.callErr("permission.respond", respond("stale-pending-id", "always"), "not_found")
	c.callErr("clarification.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "answer": "yes"}, "not_found")
	resolved := c.call("permission.respond", respond(request["pending_id"], "always"))
	assert.Equal(t, "resolved", resolved["status"])
	assert.Equal(t, "always", resolved["metadata"].(map[string]any)["selected_option_id"])
	c.callErr("permission.respond", respond(request["pending_id"], "never"), "not_found")

	require.Equal(t, "end_turn", awaitSettled(t, c))
	assert.Contains(t, transcript(t, c, session["id"]), "agent:chose allow_always")
	stored := messageByID(t, c, session["id"], request["id"])
	assert.Equal(t, "resolved", stored["status"])
	assert.Equal(t, "always", stored["metadata"].(map[string]any)["selected_option_id"], "the second answer changed nothing")
}

// session.cancel answers the open request cancelled to the agent, whose
// turn ends cancelled, and stores the request cancelled; an answer after
// that is refused.
func TestCancelAnswersTheOpenRequestCancelled(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "x-1", "content": "/scenario permission-kinds"})
	request := awaitRequest(t, c, "permission_request")
	c.call("session.cancel", map[string]any{"session_id": session["id"]})
	require.Equal(t, "cancelled", awaitSettled(t, c))
	stored := messageByID(t, c, session["id"], request["id"])
	assert.Equal(t, "cancelled", stored["status"])
	assert.Nil(t, stored["metadata"].(map[string]any)["selected_option_id"])
	c.callErr("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": "always"}, "not_found")
	for _, line := range transcript(t, c, session["id"]) {
		assert.NotContains(t, line, "chose", "the agent acted on no choice")
	}
}

// An agent that dies while its request waits leaves the request
// cancelled, never open and never allowed, and an answer to it is
// refused.
func TestADeadAgentsRequestIsCancelled(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "d-1", "content": "/scenario permission-kinds die"})
	request := awaitRequest(t, c, "permission_request")
	awaitState(t, c, session["id"], "FAILED")
	stored := messageByID(t, c, session["id"], request["id"])
	assert.Equal(t, "cancelled", stored["status"])
	p := c.callErr("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": "always"}, "not_found")
	assert.NotEmpty(t, p["message"])
}

// Two requests open at once are both stored cancelled by session.cancel.
func TestCancelStoresEveryOpenRequestCancelled(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "pair-1", "content": "/scenario permission-pair"})
	first := awaitRequest(t, c, "permission_request")
	second := awaitRequest(t, c, "permission_request")
	c.call("session.cancel", map[string]any{"session_id": session["id"]})
	require.Equal(t, "cancelled", awaitSettled(t, c))
	for _, r := range []map[string]any{first, second} {
		assert.Equal(t, "cancelled", messageByID(t, c, session["id"], r["id"])["status"])
		c.callErr("permission.respond", map[string]any{"session_id": session["id"], "pending_id": r["pending_id"], "option_id": "allow"}, "not_found")
	}
}
