package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// A repository keeps its newest observation and its newest successful one;
// the task's view shows the successful totals with the newest failure.
func TestGitObservationsKeepTheNewestAndTheNewestSuccess(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{
			WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t",
			Repositories: []shared.RepositoryInput{{Path: "/r/a", BaseBranch: "main"}, {Path: "/r/b"}},
		})
		a, b := task.Repositories[0].ID, task.Repositories[1].ID
		t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		one := 1
		for i, o := range []GitObservation{
			{Additions: 1},
			{Additions: 2, UpstreamAhead: &one, UpstreamBehind: &one},
			{Error: "fatal: index.lock exists"},
			{Error: "fatal: still locked"},
		} {
			o.ObservedAt = t0.Add(time.Duration(i) * time.Second)
			require.NoError(t, s.RecordGitObservation(ctx, a, o))
		}
		var rows int64
		require.NoError(t, s.read.Model(&gitObservationRow{}).Where("task_repository_id = ?", a).Count(&rows).Error)
		assert.Equal(t, int64(2), rows, "older observations are pruned")

		gits, err := s.RepositoryGits(ctx, task.ID)
		require.NoError(t, err)
		require.Len(t, gits, 2)
		got := gits[0]
		require.NotNil(t, got.ObservedAt)
		assert.Equal(t, t0.Add(time.Second), *got.ObservedAt, "the newest success gives the totals")
		assert.Equal(t, 2, got.Additions)
		assert.Equal(t, &one, got.UpstreamAhead)
		assert.Equal(t, "fatal: still locked", got.Error, "the newest outcome failed")
		assert.Equal(t, shared.RepositoryGit{RepositoryID: b, Path: "/r/b"}, gits[1], "never observed: no totals")

		require.NoError(t, s.RecordGitObservation(ctx, a, GitObservation{ObservedAt: t0.Add(5 * time.Second), Additions: 7}))
		gits, err = s.RepositoryGits(ctx, task.ID)
		require.NoError(t, err)
		assert.Equal(t, 7, gits[0].Additions)
		assert.Empty(t, gits[0].Error, "a success clears the failure")
		assert.Nil(t, gits[0].UpstreamAhead)

		err = s.RecordGitObservation(ctx, "missing", GitObservation{})
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))

		bare := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: task.WorkspaceID, Title: "no repositories"})
		gits, err = s.RepositoryGits(ctx, bare.ID)
		require.NoError(t, err)
		assert.Equal(t, []shared.RepositoryGit{}, gits, "a task without repositories has none, not null")
		_, err = s.RepositoryGits(ctx, "missing")
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
	})
}
