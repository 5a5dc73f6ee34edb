package sessions

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
	"github.com/herd-dev/herd/shared"
)

// The real Claude Code keeps its sessions under its home directory; herd
// keeps Claude's session id. After herd restarts, the next prompt resumes
// that session, so the model is shown the turn from before the restart.
func TestClaudeResumesItsSessionAfterAHerdRestart(t *testing.T) {
	const before, after = "The secret word is marmalade.", "What was the secret word?"
	srv, err := anthropictest.Start(func(req *anthropictest.Request) anthropictest.Reply {
		if !req.IsMain() {
			return anthropictest.Say("ok") // the title and suggestion side requests
		}
		return anthropictest.Say("noted: " + req.LastUserText())
	})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	// One profile, so one home directory, on both sides of the restart.
	profile := claudetest.Profile(t, srv.URL, claudetest.ModeBypass)
	ctx := context.Background()
	st, task, dir := mustTask(t)

	m1, pub1 := startManager(t, st, dir, profile)
	session, err := m1.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: before})
	require.NoError(t, err)
	pub1.waitSettled(t, 1)
	first, err := st.GetSession(ctx, session.ID)
	require.NoError(t, err)
	require.NotEmpty(t, first.AgentSessionID)
	m1.Close()

	m2, pub2 := startManager(t, st, dir, profile)
	_, err = m2.AddMessage(ctx, session.ID, "c-after", after)
	require.NoError(t, err)
	pub2.waitSettled(t, 1)

	var shown []string
	for _, req := range srv.Requests() {
		if req.IsMain() && strings.Contains(req.LastUserText(), after) {
			shown = req.UserTexts()
		}
	}
	require.NotNil(t, shown, "the prompt after the restart reached the model")
	require.True(t, containsText(shown, before), "the model was shown the turn before the restart: %q", shown)

	got, err := st.GetSession(ctx, session.ID)
	require.NoError(t, err)
	require.Equal(t, first.AgentSessionID, got.AgentSessionID, "the same Claude session continues")
	require.Empty(t, got.ContextLost)
	msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
	require.NoError(t, err)
	var transcript []string
	for _, msg := range msgs {
		require.NotEqual(t, shared.MessageStatus, msg.Type, "no context notice: %q", msg.Content)
		if msg.Type == shared.MessageUser || msg.Type == shared.MessageAgent {
			transcript = append(transcript, string(msg.Type)+": "+msg.Content)
		}
	}
	require.Equal(t, []string{"user: " + before, "agent: noted: " + before, "user: " + after, "agent: noted: " + after}, transcript)
}

// containsText reports whether one of texts contains s.
func containsText(texts []string, s string) bool {
	for _, t := range texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
