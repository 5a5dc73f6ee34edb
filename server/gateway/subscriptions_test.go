package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// snapshotSessions serves session snapshots of one task; the tests here
// use no other session action.
type snapshotSessions struct {
	Sessions
	taskID string
}

func (s snapshotSessions) Snapshot(_ context.Context, sessionID string) (shared.SessionSnapshot, error) {
	return shared.SessionSnapshot{Session: shared.Session{ID: sessionID, TaskID: s.taskID}}, nil
}

// Subscription changes for a session apply in the order the client sent
// them: unsubscribe and subscribe sent back to back, many times over,
// leave the session open on the connection, with a snapshot, and its
// notifications flowing.
func TestSessionSubscriptionChangesApplyInOrder(t *testing.T) {
	sessions := &snapshotSessions{}
	g, workspace, url := lanesGateway(t, func(c *Config) { c.Sessions = sessions })
	task, err := g.cfg.Store.CreateTask(t.Context(), shared.TaskCreateRequest{WorkspaceID: workspace, Title: "t"})
	require.NoError(t, err)
	sessions.taskID = task.ID
	client := dial(t, url, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	ref := map[string]any{"session_id": "s1"}
	const rounds = 20
	for i := range rounds {
		require.NoError(t, client.Write(ctx, websocket.MessageText, request(fmt.Sprint("u", i), shared.ActionSessionUnsubscribe, ref)))
		require.NoError(t, client.Write(ctx, websocket.MessageText, request(fmt.Sprint("s", i), shared.ActionSessionSubscribe, ref)))
	}
	last := fmt.Sprint("s", rounds-1)
	for {
		_, data, err := client.Read(ctx)
		require.NoError(t, err)
		var env shared.Envelope
		require.NoError(t, json.Unmarshal(data, &env))
		require.Equal(t, shared.TypeResponse, env.Type, string(data))
		if env.ID == last {
			var resp shared.SessionSubscribeResponse
			require.NoError(t, json.Unmarshal(env.Payload, &resp))
			assert.True(t, resp.Joined, "the last subscribe followed an unsubscribe")
			require.NotNil(t, resp.Snapshot)
			break
		}
	}

	g.PublishSession("s1", shared.NotifySessionStateChanged, map[string]any{"session_id": "s1"}, false)
	_, data, err := client.Read(ctx)
	require.NoError(t, err, "the session is open on the connection")
	var env shared.Envelope
	require.NoError(t, json.Unmarshal(data, &env))
	assert.Equal(t, shared.NotifySessionStateChanged, env.Action)
	assert.Equal(t, uint64(1), env.Seq, "counted from the last snapshot")
}
