package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// assertUnavailable checks that err says the database is unavailable, both
// to the store's callers and, as a protocol code, to clients.
func assertUnavailable(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	assert.True(t, Unavailable(err), "%s: Unavailable(%v)", what, err)
	assert.Equal(t, shared.CodeUnavailable, shared.ErrorCode(err), "%s: %v", what, err)
}

// A SQLite file whose write lock another process holds takes no writes:
// they wait out the busy timeout and fail as unavailable, reads go on, and
// writes succeed again once the lock is released.
func TestSQLiteLockedByAnotherProcessIsUnavailable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpenConfig(t, Config{DataDir: dir, BusyTimeout: 100 * time.Millisecond})
	ws, err := s.CreateWorkspace(ctx, "before")
	require.NoError(t, err)

	release := storetest.LockSQLite(t, filepath.Join(dir, "herd.db"))
	_, err = s.CreateWorkspace(ctx, "during")
	assertUnavailable(t, err, "write while locked")
	assertUnavailable(t, s.Ping(ctx), "ping while locked")
	got, err := s.GetWorkspace(ctx, ws.ID)
	require.NoError(t, err, "reads go on while another process writes")
	assert.Equal(t, "before", got.Name)

	release()
	_, err = s.CreateWorkspace(ctx, "after")
	require.NoError(t, err)
	require.NoError(t, s.Ping(ctx))
}

// A PostgreSQL server that stops makes every read and write fail as
// unavailable, not as an internal error; once it is back, the same store
// works again without being reopened.
func TestPostgresOutageIsUnavailableAndRecovers(t *testing.T) {
	ctx := context.Background()
	pg := storetest.OwnPostgres(t)
	s := mustOpenConfig(t, Config{URL: pg.CreateDatabase("herd")})
	ws, err := s.CreateWorkspace(ctx, "before")
	require.NoError(t, err)

	pg.Stop()
	_, err = s.CreateWorkspace(ctx, "during")
	assertUnavailable(t, err, "write while stopped")
	_, err = s.ListWorkspaces(ctx)
	assertUnavailable(t, err, "read while stopped")
	_, err = s.ListTasks(ctx, shared.TaskListRequest{WorkspaceID: ws.ID})
	assertUnavailable(t, err, "task list while stopped")
	assertUnavailable(t, s.AppendText(ctx, "m", 0, "x"), "append while stopped")
	assertUnavailable(t, s.Ping(ctx), "ping while stopped")

	pg.Start()
	_, err = s.CreateWorkspace(ctx, "after")
	require.NoError(t, err)
	require.NoError(t, s.Ping(ctx))
	all, err := s.ListWorkspaces(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 2, "what was written before the outage and after it")
}

// PostgreSQL cannot store a NUL character in text; the store says so as a
// bad request the caller can act on, never as an internal error.
func TestPostgresRefusesNULAsBadRequest(t *testing.T) {
	s := MustOpen(t, dialectPostgres)
	_, err := s.CreateWorkspace(context.Background(), "a\x00b")
	require.Error(t, err)
	assert.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err), "%v", err)
	assert.False(t, Unavailable(err))
}
