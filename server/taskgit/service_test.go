package taskgit_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/taskgit"
	"github.com/herd-dev/herd/shared"
)

func TestMain(m *testing.M) {
	os.Exit(gittest.Main(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener")))
}

// marks records the tasks marked for the projector.
type marks struct {
	mu  sync.Mutex
	ids []string
}

func (m *marks) Mark(taskID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids = append(m.ids, taskID)
}

// fixture is a Service on a fresh SQLite store, observing every 20 ms.
type fixture struct {
	st    *store.Store
	svc   *taskgit.Service
	marks *marks
	ws    shared.Workspace
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, marks: &marks{}}
	f.svc, err = taskgit.New(taskgit.Config{
		Store: st, Summaries: f.marks, WorktreeDir: filepath.Join(t.TempDir(), "worktrees"),
		SlowInterval: 20 * time.Millisecond, FastInterval: 10 * time.Millisecond,
	})
	require.NoError(t, err)
	f.svc.Start(nil)
	t.Cleanup(f.svc.Close)
	f.ws, err = st.CreateWorkspace(ctx, "W")
	require.NoError(t, err)
	return f
}

// additions returns the task's first repository's observed additions, or
// -1 while it has none.
func (f *fixture) additions(t *testing.T, taskID string) int {
	t.Helper()
	gits, err := f.st.RepositoryGits(context.Background(), taskID)
	require.NoError(t, err)
	if gits[0].ObservedAt == nil {
		return -1
	}
	return gits[0].Additions
}

// awaitAdditions waits until the task's first repository was observed with
// n additions.
func (f *fixture) awaitAdditions(t *testing.T, taskID string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return f.additions(t, taskID) == n },
		5*time.Second, 5*time.Millisecond, "additions never reached %d (last %d)", n, f.additions(t, taskID))
}

func TestRunningTaskIsWatchedAndASettledOneKeepsItsLastSnapshot(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	task, err := f.svc.CreateTask(ctx, shared.TaskCreateRequest{
		WorkspaceID: f.ws.ID, Title: "watched", Repositories: []shared.RepositoryInput{{Path: gittest.Init(t)}},
	})
	require.NoError(t, err)
	worktree := task.Repositories[0].WorktreePath
	f.awaitAdditions(t, task.ID, 0) // observed once at creation

	f.svc.SessionState(task.ID, "s1", shared.SessionRunning)
	gittest.Write(t, worktree, "a.txt", "one\n")
	f.awaitAdditions(t, task.ID, 1) // the slow cadence sees it

	// A second session starting and stopping keeps the task watched.
	f.svc.SessionState(task.ID, "s2", shared.SessionRunning)
	f.svc.SessionState(task.ID, "s2", shared.SessionWaitingForInput)
	gittest.Write(t, worktree, "b.txt", "two\n")
	f.awaitAdditions(t, task.ID, 2)

	// The last one settling takes a final observation; then polling stops.
	gittest.Write(t, worktree, "c.txt", "three\n")
	f.svc.SessionState(task.ID, "s1", shared.SessionWaitingForInput)
	f.awaitAdditions(t, task.ID, 3)
	gittest.Write(t, worktree, "d.txt", "four\n")
	time.Sleep(200 * time.Millisecond) // ten slow intervals: nothing may observe it
	assert.Equal(t, 3, f.additions(t, task.ID), "a settled task keeps its last snapshot")

	f.marks.mu.Lock()
	assert.Contains(t, f.marks.ids, task.ID)
	f.marks.mu.Unlock()
}

func TestArchiveRefusesWhileASessionRuns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	task, err := f.svc.CreateTask(ctx, shared.TaskCreateRequest{
		WorkspaceID: f.ws.ID, Title: "busy", Repositories: []shared.RepositoryInput{{Path: gittest.Init(t)}},
	})
	require.NoError(t, err)
	f.svc.SessionState(task.ID, "s1", shared.SessionRunning)

	_, err = f.svc.ArchiveTask(ctx, shared.TaskArchiveRequest{TaskID: task.ID})
	assert.Equal(t, shared.CodeConflict, shared.ErrorCode(err), "%v", err)
	assert.DirExists(t, task.Repositories[0].WorktreePath)

	f.svc.SessionState(task.ID, "s1", shared.SessionWaitingForInput)
	archived, err := f.svc.ArchiveTask(ctx, shared.TaskArchiveRequest{TaskID: task.ID})
	require.NoError(t, err)
	assert.True(t, archived.Archived)
	assert.NoDirExists(t, task.Repositories[0].WorktreePath)
}
