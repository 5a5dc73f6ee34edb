package state

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// ids returns the task ids of rows in order.
func ids(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.TaskID
	}
	return out
}

func TestRowsVisibility(t *testing.T) {
	archived := task("b", "archived", 2, 2)
	archived.Archived = true
	elsewhere := task("c", "other workspace", 3, 3)
	elsewhere.WorkspaceID = "w2"

	tests := []struct {
		name   string
		writes []Write
		want   []string
	}{
		{
			name:   "archived task disappears from the visible list",
			writes: []Write{TaskWrite(task("a", "live", 1, 1)), TaskWrite(task("b", "t", 2, 1)), TaskWrite(archived)},
			want:   []string{"a"},
		},
		{
			name:   "unarchived task comes back",
			writes: []Write{TaskWrite(archived), TaskWrite(task("b", "back", 2, 3))},
			want:   []string{"b"},
		},
		{
			name:   "task of another workspace is not shown",
			writes: []Write{TaskWrite(task("a", "live", 1, 1)), TaskWrite(elsewhere)},
			want:   []string{"a"},
		},
		{
			name:   "deleted task disappears",
			writes: []Write{TaskWrite(task("a", "live", 1, 1)), TaskWrite(task("b", "gone", 2, 2)), DeleteWrite(task("b", "gone", 2, 3))},
			want:   []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.writes...)
			assert.Equal(t, tt.want, ids(s.Rows()))
		})
	}
}

func TestRowsOrderNewestCreatedFirstWithIDTieBreak(t *testing.T) {
	s := newStore(t,
		TaskWrite(task("a", "oldest", 1, 1)),
		TaskWrite(task("c", "newest", 3, 3)),
		TaskWrite(task("b1", "tie", 2, 2)),
		TaskWrite(task("b2", "tie", 2, 2)),
	)
	assert.Equal(t, []string{"c", "b2", "b1", "a"}, ids(s.Rows()))
}

func TestRowsAreCachedWhileNothingChanges(t *testing.T) {
	s := newStore(t, TaskWrite(task("a", "t", 1, 1)), TaskWrite(task("b", "t", 2, 2)))
	first := s.Rows()
	second := s.Rows()
	require.Len(t, second, 2)
	assert.Same(t, &first[0], &second[0], "an unchanged store must return the cached slice")

	s.Apply(TaskWrite(task("a", "stale", 1, 0)))
	assert.Same(t, &first[0], &s.Rows()[0], "an ignored write must keep the cache")
}

func TestSummaryChangeRebuildsRowsWithoutTouchingEarlierSlices(t *testing.T) {
	s := newStore(t,
		TaskWrite(withSummary(task("a", "t", 1, 1), summary(1, shared.SessionRunning))),
		TaskWrite(task("b", "t", 2, 2)),
	)
	before := s.Rows()
	require.Equal(t, IndicatorRunning, before[1].Indicator)

	require.True(t, s.Apply(SummaryWrite("a", *summary(2, shared.SessionWaitingForInput))))
	after := s.Rows()
	assert.Equal(t, []string{"b", "a"}, ids(after), "a summary does not move a row")
	assert.Equal(t, IndicatorWaiting, after[1].Indicator)
	assert.Equal(t, IndicatorRunning, before[1].Indicator, "a slice handed out earlier is never mutated")
}

func TestSelectWorkspaceSwitchesTheView(t *testing.T) {
	other := task("b", "t", 2, 2)
	other.WorkspaceID = "w2"
	s := newStore(t, TaskWrite(task("a", "t", 1, 1)), TaskWrite(other))
	require.Equal(t, []string{"a"}, ids(s.Rows()))

	s.SelectWorkspace("w2")
	assert.Equal(t, []string{"b"}, ids(s.Rows()))
}

func TestRetainAfterAnAuthoritativeListing(t *testing.T) {
	tests := []struct {
		name        string
		before      []Write // applied before the Mark
		during      []Write // live events applied after the Mark
		listed      []string
		want        []string
		wantRemoved int
	}{
		{
			name:   "task missing from the listing is removed",
			before: []Write{TaskWrite(task("a", "t", 1, 1)), TaskWrite(task("b", "deleted while offline", 2, 2))},
			listed: []string{"a"},
			want:   []string{"a"}, wantRemoved: 1,
		},
		{
			name:   "task written by a live event during the listing stays",
			before: []Write{TaskWrite(task("a", "t", 1, 1))},
			during: []Write{TaskWrite(task("b", "created during the listing", 2, 2))},
			listed: []string{"a"},
			want:   []string{"b", "a"},
		},
		{
			name:   "task of a previously selected workspace is removed",
			before: []Write{TaskWrite(task("a", "t", 1, 1)), TaskWrite(shared.Task{ID: "x", WorkspaceID: "w0", CreatedAt: t0, UpdatedAt: t0})},
			listed: []string{"a"},
			want:   []string{"a"}, wantRemoved: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.before...)
			m := s.Mark()
			for _, w := range tt.during {
				s.Apply(w)
			}
			listed := make(map[string]struct{})
			for _, id := range tt.listed {
				listed[id] = struct{}{}
			}
			assert.Equal(t, tt.wantRemoved, s.Retain(m, listed))
			assert.Equal(t, tt.want, ids(s.Rows()))
		})
	}
}

func TestRetainedRemovalYieldsToANewerWrite(t *testing.T) {
	s := newStore(t, TaskWrite(task("a", "t", 1, 1)))
	s.Retain(s.Mark(), nil)
	require.False(t, s.Apply(TaskWrite(task("a", "same copy", 1, 1))), "the removed copy must not come back")
	assert.True(t, s.Apply(TaskWrite(task("a", "unarchived later", 1, 2))))
}

func TestConnectionString(t *testing.T) {
	for c, want := range map[Connection]string{Connecting: "connecting", Online: "online", Offline: "offline"} {
		assert.Equal(t, want, c.String())
	}
}

func BenchmarkRowsUnchanged1000(b *testing.B) {
	s := New()
	s.SelectWorkspace("w1")
	for i := range 1000 {
		s.Apply(TaskWrite(task(fmt.Sprintf("t%04d", i), "t", i, i)))
	}
	s.Rows()
	b.ReportAllocs()
	for b.Loop() {
		s.Rows()
	}
}

func BenchmarkSummaryDeltaInto1000Rows(b *testing.B) {
	s := New()
	s.SelectWorkspace("w1")
	for i := range 1000 {
		s.Apply(TaskWrite(withSummary(task(fmt.Sprintf("t%04d", i), "t", i, i), summary(1, shared.SessionRunning))))
	}
	s.Rows()
	rev := int64(1)
	b.ReportAllocs()
	for b.Loop() {
		rev++
		s.Apply(SummaryWrite("t0500", *summary(rev, shared.SessionWaitingForInput)))
		s.Rows()
	}
}

func TestResponseYieldsToALiveEventAppliedAfterItsRequestWasSent(t *testing.T) {
	running := task("a", "t", 1, 1)
	running.PrimarySessionID, running.ForegroundActivity = "s1", shared.ActivityGenerating
	settled := running
	settled.ForegroundActivity = ""
	// The server read the listing while the task was still running; the
	// event that settled it kept its updated_at.
	listedRunning := running

	tests := []struct {
		name string
		// liveBeforeSend says the live event was applied before the request
		// was sent (its Mark), rather than while it was in flight.
		liveBeforeSend bool
		listed         shared.Task
		want           shared.ForegroundActivity
		wantChanged    bool
	}{
		{
			name:   "a response sent before a live event does not overwrite it",
			listed: listedRunning, want: "",
		},
		{
			name:           "a response sent after a live event overwrites it",
			liveBeforeSend: true,
			listed:         listedRunning, want: shared.ActivityGenerating, wantChanged: true,
		},
		{
			name:   "a response strictly newer than the live event still wins",
			listed: func() shared.Task { t := task("a", "renamed", 1, 2); t.PrimarySessionID = "s1"; return t }(),
			want:   "", wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, ResponseWrite(running, 0))
			var sent Mark
			if tt.liveBeforeSend {
				s.Apply(TaskWrite(settled))
				sent = s.Mark()
			} else {
				sent = s.Mark()
				s.Apply(TaskWrite(settled))
			}
			assert.Equal(t, tt.wantChanged, s.Apply(ResponseWrite(tt.listed, sent)))
			got, _ := s.Task("a")
			assert.Equal(t, tt.want, got.ForegroundActivity)
			assert.Equal(t, tt.want == shared.ActivityGenerating, s.Rows()[0].Indicator == IndicatorGenerating)
		})
	}
}

func TestResponseYieldingToALiveEventStillCarriesANewerSummary(t *testing.T) {
	s := newStore(t, TaskWrite(withSummary(task("a", "t", 1, 1), summary(1, shared.SessionRunning))))
	sent := s.Mark()
	s.Apply(TaskWrite(task("a", "renamed live", 1, 1)))

	require.True(t, s.Apply(ResponseWrite(withSummary(task("a", "listed", 1, 1), summary(2, shared.SessionWaitingForInput)), sent)))
	got, _ := s.Task("a")
	assert.Equal(t, "renamed live", got.Title, "task fields yield to the live event")
	assert.Equal(t, int64(2), got.StatusSummary.Revision, "the summary passes its own revision gate")

	assert.False(t, s.Apply(ResponseWrite(withSummary(task("a", "listed", 1, 1), summary(2, shared.SessionIdle)), sent)),
		"a summary that is not newer is ignored")
}

func TestResponseIsNotALiveEvent(t *testing.T) {
	s := newStore(t, TaskWrite(task("a", "t", 1, 1)))
	first := s.Mark()
	s.Apply(ResponseWrite(task("a", "first listing", 1, 1), first))
	// A second listing sent before the first was applied is held back only
	// by live events, never by another response.
	assert.True(t, s.Apply(ResponseWrite(task("a", "second listing", 1, 1), first)))
	got, _ := s.Task("a")
	assert.Equal(t, "second listing", got.Title)
}

func TestResponseSentBeforeALiveDeletionDoesNotReviveTheTask(t *testing.T) {
	s := newStore(t, TaskWrite(task("a", "t", 1, 1)))
	sent := s.Mark()
	s.Apply(DeleteWrite(task("a", "t", 1, 2)))
	assert.False(t, s.Apply(ResponseWrite(task("a", "listed before the deletion", 1, 1), sent)))
	assert.Empty(t, s.Rows())
}
