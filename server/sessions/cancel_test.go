package sessions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// TestMain makes this test binary the mock agent of the tests' profiles
// (mocktest), closes the shared PostgreSQL connection after the tests and
// checks that no goroutine outlives them.
func TestMain(m *testing.M) {
	mocktest.RunIfChild()
	os.Exit(storetest.Main(m))
}

// mustTask opens a SQLite store in a temporary directory and creates a
// workspace and a task in it.
func mustTask(tb testing.TB) (*store.Store, shared.Task, string) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	st, err := store.Open(ctx, store.Config{DataDir: dir})
	require.NoError(tb, err)
	tb.Cleanup(func() { st.Close() })
	ws, err := st.CreateWorkspace(ctx, "w")
	require.NoError(tb, err)
	task, err := st.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "t"})
	require.NoError(tb, err)
	return st, task, dir
}

// agentRunning reports whether a process runs whose command line holds
// marker.
func agentRunning(marker string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), marker) {
			return true
		}
	}
	return false
}

// Cancelling a session whose agent is still starting cancels the session
// for good and stops the agent process.
func TestCancelWhileStartingStopsTheAgent(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)

	const marker = "--slow-start 2345"
	slow := mocktest.Profile(strings.Fields(marker)...)
	slow.ID, slow.Name = "slow", "Slow mock"
	pub := &recorder{}
	m, err := New(Config{
		Store:      st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return slow, nil },
		ScratchDir: filepath.Join(dir, "scratch"),
	})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(ctx, pub))

	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, AgentProfileID: "slow"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return pub.has(session.ID + " " + shared.NotifySessionStateChanged + " " + string(shared.SessionStarting))
	}, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return agentRunning(marker) }, 10*time.Second, 5*time.Millisecond)

	cancelled, err := m.Cancel(ctx, session.ID)
	require.NoError(t, err)
	require.Equal(t, shared.SessionCancelled, cancelled.State)
	require.Eventually(t, func() bool { return !agentRunning(marker) }, 15*time.Second, 20*time.Millisecond,
		"the agent that was starting is stopped")
	_, err = m.AddMessage(ctx, session.ID, "late", "hello")
	require.Equal(t, shared.CodeNotPromptable, shared.ErrorCode(err))
	got, err := st.GetSession(ctx, session.ID)
	require.NoError(t, err)
	require.Equal(t, shared.SessionCancelled, got.State, "starting does not overwrite the cancellation")
}
