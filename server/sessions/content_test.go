package sessions

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// A prompt with attachments that a crashed process had claimed but not
// sent runs after the restart with its attachments: the fresh agent gets
// the same blocks the first one would have.
func TestARestartSendsAPromptWithItsAttachments(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	session, err := st.CreateSession(ctx, task.ID, agent.MockProfileID)
	require.NoError(t, err)
	for _, step := range [][2]shared.SessionState{
		{shared.SessionCreated, shared.SessionStarting}, {shared.SessionStarting, shared.SessionWaitingForInput},
		{shared.SessionWaitingForInput, shared.SessionRunning},
	} {
		_, err := st.Transition(ctx, session.ID, []shared.SessionState{step[0]}, step[1], "", store.Activity{})
		require.NoError(t, err)
	}
	stored := []shared.Attachment{
		{Type: shared.AttachmentImage, MimeType: "image/png", Data: "iVBORw0KGgo=", Size: 8},
		{Type: shared.AttachmentFile, Path: "notes.txt", URI: "file:///w/notes.txt", Embedded: true, Text: "remember me\n", Size: 12},
	}
	prompt, _, err := st.AddUserMessage(ctx, session.ID, "c-1", "/scenario content", stored...)
	require.NoError(t, err)
	_, claimed, err := st.ClaimDispatch(ctx, prompt.ID, "dead-process")
	require.NoError(t, err)
	require.True(t, claimed)

	pub := &recorder{}
	mock := mocktest.Profile()
	m, err := New(Config{
		Store:      st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return mock, nil },
		ScratchDir: filepath.Join(dir, "scratch"),
	})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(ctx, pub))
	require.Eventually(t, func() bool {
		return pub.has(session.ID + " " + shared.NotifySessionTurnSettled + " end_turn")
	}, 30*time.Second, 20*time.Millisecond)
	msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
	require.NoError(t, err)
	var answers []string
	for _, msg := range msgs {
		if msg.Type == shared.MessageAgent {
			answers = append(answers, msg.Content)
		}
	}
	require.Equal(t, []string{"received: image image/png 8 bytes; resource file:///w/notes.txt 12 bytes"}, answers)
	again, err := st.GetSession(ctx, session.ID)
	require.NoError(t, err)
	require.Equal(t, &shared.PromptCapabilities{Image: true, EmbeddedContext: true}, again.PromptCapabilities,
		"the fresh agent's capabilities are stored")
}
