package state

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// t0 is the base time of the fixtures.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// task returns a live task of workspace w1 created at t0+created minutes
// and updated at t0+updated minutes.
func task(id, title string, created, updated int) shared.Task {
	return shared.Task{
		ID:           id,
		WorkspaceID:  "w1",
		Title:        title,
		Repositories: []shared.TaskRepository{},
		CreatedAt:    t0.Add(time.Duration(created) * time.Minute),
		UpdatedAt:    t0.Add(time.Duration(updated) * time.Minute),
	}
}

// summary returns a summary at the given revision whose primary session is
// in state st.
func summary(rev int64, st shared.SessionState) *shared.TaskStatusSummary {
	return &shared.TaskStatusSummary{
		Revision:       rev,
		UpdatedAt:      t0,
		PrimarySession: &shared.PrimarySession{ID: "s1", State: st},
	}
}

// withSummary returns t carrying sum.
func withSummary(t shared.Task, sum *shared.TaskStatusSummary) shared.Task {
	t.StatusSummary = sum
	return t
}

// newStore returns a store showing workspace w1 after the given writes.
func newStore(t *testing.T, writes ...Write) *Store {
	t.Helper()
	s := New()
	s.SelectWorkspace("w1")
	for _, w := range writes {
		s.Apply(w)
	}
	return s
}

func TestApplyRules(t *testing.T) {
	tests := []struct {
		name        string
		before      []Write
		write       Write
		wantChanged bool
		wantTitle   string // "" means the task must be absent
		wantRev     int64  // 0 means no summary
	}{
		{
			name:        "first write of a task stores it",
			write:       TaskWrite(task("a", "new", 0, 0)),
			wantChanged: true, wantTitle: "new",
		},
		{
			name:        "newer UpdatedAt replaces the task",
			before:      []Write{TaskWrite(task("a", "old", 0, 1))},
			write:       TaskWrite(task("a", "newer", 0, 2)),
			wantChanged: true, wantTitle: "newer",
		},
		{
			name:        "older UpdatedAt is ignored",
			before:      []Write{TaskWrite(task("a", "current", 0, 2))},
			write:       TaskWrite(task("a", "stale", 0, 1)),
			wantChanged: false, wantTitle: "current",
		},
		{
			name:        "equal UpdatedAt is accepted",
			before:      []Write{TaskWrite(task("a", "first", 0, 1))},
			write:       TaskWrite(task("a", "repeat", 0, 1)),
			wantChanged: true, wantTitle: "repeat",
		},
		{
			name:        "summary with greater revision replaces the stored one",
			before:      []Write{TaskWrite(withSummary(task("a", "t", 0, 0), summary(3, shared.SessionRunning)))},
			write:       SummaryWrite("a", *summary(4, shared.SessionIdle)),
			wantChanged: true, wantTitle: "t", wantRev: 4,
		},
		{
			name:        "summary with equal revision is ignored",
			before:      []Write{TaskWrite(withSummary(task("a", "t", 0, 0), summary(3, shared.SessionRunning)))},
			write:       SummaryWrite("a", *summary(3, shared.SessionIdle)),
			wantChanged: false, wantTitle: "t", wantRev: 3,
		},
		{
			name:        "summary with lower revision is ignored",
			before:      []Write{TaskWrite(withSummary(task("a", "t", 0, 0), summary(3, shared.SessionRunning)))},
			write:       SummaryWrite("a", *summary(2, shared.SessionIdle)),
			wantChanged: false, wantTitle: "t", wantRev: 3,
		},
		{
			name:        "summary for an unknown task is dropped",
			write:       SummaryWrite("a", *summary(1, shared.SessionIdle)),
			wantChanged: false,
		},
		{
			name:        "task write without a summary keeps the stored summary",
			before:      []Write{TaskWrite(withSummary(task("a", "t", 0, 0), summary(3, shared.SessionRunning)))},
			write:       TaskWrite(task("a", "renamed", 0, 1)),
			wantChanged: true, wantTitle: "renamed", wantRev: 3,
		},
		{
			name:        "task write carrying an older summary keeps the stored summary",
			before:      []Write{TaskWrite(withSummary(task("a", "t", 0, 0), summary(5, shared.SessionRunning)))},
			write:       TaskWrite(withSummary(task("a", "renamed", 0, 1), summary(4, shared.SessionIdle))),
			wantChanged: true, wantTitle: "renamed", wantRev: 5,
		},
		{
			name:        "task write carrying an equal summary revision keeps the stored summary",
			before:      []Write{TaskWrite(withSummary(task("a", "t", 0, 1), summary(5, shared.SessionRunning)))},
			write:       TaskWrite(withSummary(task("a", "t", 0, 1), summary(5, shared.SessionIdle))),
			wantChanged: true, wantTitle: "t", wantRev: 5,
		},
		{
			name:        "stale task write still passes a newer summary through the revision gate",
			before:      []Write{TaskWrite(withSummary(task("a", "current", 0, 2), summary(1, shared.SessionRunning)))},
			write:       TaskWrite(withSummary(task("a", "stale", 0, 1), summary(2, shared.SessionIdle))),
			wantChanged: true, wantTitle: "current", wantRev: 2,
		},
		{
			name:        "task.deleted removes the task",
			before:      []Write{TaskWrite(task("a", "t", 0, 1))},
			write:       DeleteWrite(task("a", "t", 0, 2)),
			wantChanged: true,
		},
		{
			name:        "write not newer than the deletion does not revive the task",
			before:      []Write{TaskWrite(task("a", "t", 0, 1)), DeleteWrite(task("a", "t", 0, 2))},
			write:       TaskWrite(task("a", "from a listing in flight", 0, 2)),
			wantChanged: false,
		},
		{
			name:        "deletion seen before its task blocks the older listing copy",
			before:      []Write{DeleteWrite(task("a", "t", 0, 2))},
			write:       TaskWrite(task("a", "from a listing in flight", 0, 1)),
			wantChanged: false,
		},
		{
			name:        "write newer than the deletion stores the task again",
			before:      []Write{TaskWrite(task("a", "t", 0, 1)), DeleteWrite(task("a", "t", 0, 2))},
			write:       TaskWrite(task("a", "restored", 0, 3)),
			wantChanged: true, wantTitle: "restored",
		},
		{
			name:        "deletion of an unknown task changes nothing visible",
			write:       DeleteWrite(task("a", "t", 0, 2)),
			wantChanged: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.before...)
			assert.Equal(t, tt.wantChanged, s.Apply(tt.write), "Apply's changed result")

			got, ok := s.Task("a")
			if tt.wantTitle == "" {
				assert.False(t, ok, "task must be absent")
				return
			}
			require.True(t, ok, "task must be stored")
			assert.Equal(t, tt.wantTitle, got.Title)
			if tt.wantRev == 0 {
				assert.Nil(t, got.StatusSummary)
				return
			}
			require.NotNil(t, got.StatusSummary)
			assert.Equal(t, tt.wantRev, got.StatusSummary.Revision)
		})
	}
}

func TestTaskReturnsACopy(t *testing.T) {
	s := newStore(t, TaskWrite(withSummary(task("a", "t", 0, 0), summary(1, shared.SessionRunning))))
	got, _ := s.Task("a")
	got.Title = "changed"
	got.StatusSummary.Revision = 99

	again, _ := s.Task("a")
	assert.Equal(t, "t", again.Title)
	assert.Equal(t, int64(1), again.StatusSummary.Revision)
}

func TestApplyKeepsTheCallersSummaryUnshared(t *testing.T) {
	sum := summary(1, shared.SessionRunning)
	s := newStore(t, TaskWrite(withSummary(task("a", "t", 0, 0), sum)))
	sum.Revision = 99

	got, _ := s.Task("a")
	assert.Equal(t, int64(1), got.StatusSummary.Revision)
}
