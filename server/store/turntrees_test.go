package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// turnFixture is a task on two repositories with a session, whose prompts
// start the turns the tests record.
type turnFixture struct {
	s                *Store
	task             shared.Task
	session          string
	repoA, repoB     string
	recordedAt       time.Time
	prompts, clients int
}

func newTurnFixture(t *testing.T, dialect string) *turnFixture {
	t.Helper()
	s := MustOpen(t, dialect)
	ws := mustWorkspace(t, s, "W")
	task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "review", Repositories: []shared.RepositoryInput{
		{Path: "/src/a"}, {Path: "/src/b"},
	}})
	return &turnFixture{
		s: s, task: task, session: mustSession(t, s, task.ID),
		repoA: task.Repositories[0].ID, repoB: task.Repositories[1].ID,
		recordedAt: time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC),
	}
}

// prompt stores a prompt of the fixture's session and returns its id, the
// id of the turn it starts.
func (f *turnFixture) prompt(t *testing.T, content string) string {
	t.Helper()
	f.clients++
	m, _, err := f.s.AddUserMessage(context.Background(), f.session, fmt.Sprintf("c-%d", f.clients), content)
	require.NoError(t, err)
	return m.ID
}

// record records tree as repository's tree at the start of turn, one
// second after the fixture's previous record.
func (f *turnFixture) record(t *testing.T, repository, turn, tree string) {
	t.Helper()
	f.recordedAt = f.recordedAt.Add(time.Second)
	require.NoError(t, f.s.RecordTurnTree(context.Background(), TurnTree{
		RepositoryID: repository, TurnID: turn, TaskID: f.task.ID, SessionID: f.session, Tree: tree, RecordedAt: f.recordedAt,
	}))
}

// tree is a fake tree id: the store keeps trees opaque.
func tree(name string) string { return strings.Repeat(name, 40)[:40] }

// A task's turns are listed newest first with the start of their prompts,
// whichever repositories recorded them; a repeated record keeps the first
// tree; the limit keeps the newest; another task's turns are not listed.
func TestTurnTreesListATasksNewestTurnsWithTheirPrompts(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		f := newTurnFixture(t, dialect)
		first := f.prompt(t, "\n  /scenario   write a.txt one\nsecond line")
		f.record(t, f.repoA, first, tree("a"))
		f.record(t, f.repoB, first, tree("b"))
		long := strings.Repeat("é", shared.MaxPreviewBytes)
		second := f.prompt(t, long)
		f.record(t, f.repoB, second, tree("c"))
		f.record(t, f.repoA, second, tree("d"))
		f.record(t, f.repoA, second, tree("e")) // a repeat: kept out

		other := newTurnFixtureOn(t, f.s)
		f.recordedAt = f.recordedAt.Add(time.Hour)
		elsewhere := other.prompt(t, "other task")
		other.recordedAt = f.recordedAt
		other.record(t, other.repoA, elsewhere, tree("f"))

		turns, err := f.s.ReviewTurns(ctx, f.task.ID, shared.MaxReviewTurns)
		require.NoError(t, err)
		require.Len(t, turns, 2, "one entry per turn, not per repository; only this task's")
		assert.Equal(t, second, turns[0].TurnID, "newest first")
		assert.Equal(t, first, turns[1].TurnID)
		assert.Equal(t, f.session, turns[0].SessionID)
		assert.Equal(t, "/scenario write a.txt one", turns[1].Prompt, "the prompt's first line, its spaces collapsed")
		assert.LessOrEqual(t, len(turns[0].Prompt), shared.MaxPreviewBytes)
		assert.True(t, strings.HasSuffix(turns[0].Prompt, shared.Ellipsis), "a long prompt is cut and marked")
		start := time.Date(2026, 9, 1, 10, 0, 3, 0, time.UTC)
		assert.True(t, turns[0].StartedAt.Equal(start), "a turn starts at its first record: %v", turns[0].StartedAt)

		newest, err := f.s.ReviewTurns(ctx, f.task.ID, 1)
		require.NoError(t, err)
		require.Len(t, newest, 1)
		assert.Equal(t, second, newest[0].TurnID, "the limit keeps the newest")

		span, err := f.s.TurnSpan(ctx, f.task.ID, f.repoA, second)
		require.NoError(t, err)
		assert.Equal(t, tree("d"), span.From, "a repeated record keeps the first tree")
	})
}

// newTurnFixtureOn is newTurnFixture for another task in s.
func newTurnFixtureOn(t *testing.T, s *Store) *turnFixture {
	t.Helper()
	ws := mustWorkspace(t, s, "W2")
	task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "other", Repositories: []shared.RepositoryInput{{Path: "/src/a"}}})
	return &turnFixture{s: s, task: task, session: mustSession(t, s, task.ID), repoA: task.Repositories[0].ID, clients: 100}
}

// A turn's span runs from its tree to the tree of the repository's next
// recorded turn, or to nothing for the newest; the newest turn is the
// task's; a turn a repository did not record is not found there.
func TestTurnSpanRunsToTheRepositorysNextTurn(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		f := newTurnFixture(t, dialect)
		_, err := f.s.TurnSpan(ctx, f.task.ID, f.repoA, "")
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "no turn recorded yet: %v", err)

		t1, t2, t3 := f.prompt(t, "one"), f.prompt(t, "two"), f.prompt(t, "three")
		f.record(t, f.repoA, t1, tree("1"))
		f.record(t, f.repoB, t1, tree("b"))
		f.record(t, f.repoA, t2, tree("2")) // repository B failed to record turn 2
		f.record(t, f.repoA, t3, tree("3"))
		f.record(t, f.repoB, t3, tree("c"))

		tests := []struct {
			name             string
			repository, turn string
			want             TurnSpan
		}{
			{"first turn", f.repoA, t1, TurnSpan{TurnID: t1, From: tree("1"), To: tree("2")}},
			{"middle turn", f.repoA, t2, TurnSpan{TurnID: t2, From: tree("2"), To: tree("3")}},
			{"newest turn", f.repoA, t3, TurnSpan{TurnID: t3, From: tree("3")}},
			{"newest by default", f.repoA, "", TurnSpan{TurnID: t3, From: tree("3")}},
			{"next recorded turn of the repository", f.repoB, t1, TurnSpan{TurnID: t1, From: tree("b"), To: tree("c")}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				span, err := f.s.TurnSpan(ctx, f.task.ID, tt.repository, tt.turn)
				require.NoError(t, err)
				assert.Equal(t, tt.want, span)
			})
		}

		_, err = f.s.TurnSpan(ctx, f.task.ID, f.repoB, t2)
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
		assert.ErrorContains(t, err, "herd has no record of the start of that turn")
		_, err = f.s.TurnSpan(ctx, f.task.ID, f.repoA, "no-such-turn")
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
		other := newTurnFixtureOn(t, f.s)
		_, err = f.s.TurnSpan(ctx, other.task.ID, f.repoA, t1)
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "a turn is read through its own task only")
	})
}

func TestRecordTurnTreeRefusesIncompleteRecords(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		f := newTurnFixture(t, dialect)
		turn := f.prompt(t, "go")
		good := TurnTree{RepositoryID: f.repoA, TurnID: turn, TaskID: f.task.ID, SessionID: f.session, Tree: tree("a")}
		tests := []struct {
			name   string
			change func(*TurnTree)
			code   shared.Code
		}{
			{"no tree", func(tt *TurnTree) { tt.Tree = "" }, shared.CodeBadRequest},
			{"no turn", func(tt *TurnTree) { tt.TurnID = "" }, shared.CodeBadRequest},
			{"no repository", func(tt *TurnTree) { tt.RepositoryID = "" }, shared.CodeBadRequest},
			{"unknown repository", func(tt *TurnTree) { tt.RepositoryID = NewID() }, shared.CodeNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				in := good
				tt.change(&in)
				assert.Equal(t, tt.code, shared.ErrorCode(f.s.RecordTurnTree(ctx, in)))
			})
		}
		turns, err := f.s.ReviewTurns(ctx, f.task.ID, shared.MaxReviewTurns)
		require.NoError(t, err)
		assert.Empty(t, turns, "nothing was recorded")
	})
}
