package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent/adaptertest"
	"github.com/herd-dev/herd/shared"
)

// A session whose agent refuses to start until authenticated fails with a
// message that names the agent's own auth methods and the variables to
// set, shown on the session itself.
func TestASessionWhoseAgentNeedsAuthenticationFailsSayingHow(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	m, pub := startManager(t, st, dir, adaptertest.Profile(t, adaptertest.Codex))
	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return pub.lastState().State == shared.SessionFailed }, 60*time.Second, 20*time.Millisecond)
	got, err := st.GetSession(ctx, session.ID)
	require.NoError(t, err)
	require.Contains(t, got.ErrorMessage, "Codex needs authentication (Authentication required)")
	require.Contains(t, got.ErrorMessage, "API Key (Use an API key to authenticate): set CODEX_API_KEY or OPENAI_API_KEY in the profile's env")
	require.Contains(t, got.ErrorMessage, "ChatGPT (Use ChatGPT to authenticate)")
}
