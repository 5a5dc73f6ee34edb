package projector

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

func at(seconds int) *time.Time {
	t := t0.Add(time.Duration(seconds) * time.Second)
	return &t
}

func session(id string, state shared.SessionState, activity shared.ForegroundActivity, subagents, updated int) shared.Session {
	return shared.Session{ID: id, State: state, ForegroundActivity: activity, ActiveSubagentCount: subagents, UpdatedAt: *at(updated)}
}

func TestDeriveSessions(t *testing.T) {
	tests := []struct {
		name string
		src  store.SummarySource
		want shared.TaskStatusSummary
	}{
		{
			name: "no session: no primary session, activity or last activity",
			src:  store.SummarySource{},
			want: shared.TaskStatusSummary{},
		},
		{
			name: "the primary session's id and state",
			src: store.SummarySource{PrimarySessionID: "b", Sessions: []shared.Session{
				session("a", shared.SessionRunning, "", 0, 1), session("b", shared.SessionWaitingForInput, "", 0, 2),
			}},
			want: shared.TaskStatusSummary{PrimarySession: &shared.PrimarySession{ID: "b", State: shared.SessionWaitingForInput}, LastActivityAt: at(2)},
		},
		{
			name: "generating in any session wins over background",
			src: store.SummarySource{PrimarySessionID: "a", Sessions: []shared.Session{
				session("a", shared.SessionIdle, shared.ActivityBackground, 2, 5), session("b", shared.SessionRunning, shared.ActivityGenerating, 1, 3),
			}},
			want: shared.TaskStatusSummary{
				PrimarySession:     &shared.PrimarySession{ID: "a", State: shared.SessionIdle},
				ForegroundActivity: shared.ActivityGenerating, ActiveSubagentCount: 3, LastActivityAt: at(5),
			},
		},
		{
			name: "background when no session generates",
			src: store.SummarySource{Sessions: []shared.Session{
				session("a", shared.SessionIdle, "", 0, 9), session("b", shared.SessionIdle, shared.ActivityBackground, 4, 3),
			}},
			want: shared.TaskStatusSummary{ForegroundActivity: shared.ActivityBackground, ActiveSubagentCount: 4, LastActivityAt: at(9)},
		},
		{
			name: "settled sessions: no activity",
			src:  store.SummarySource{Sessions: []shared.Session{session("a", shared.SessionCompleted, "", 0, 1)}},
			want: shared.TaskStatusSummary{LastActivityAt: at(1)},
		},
		{
			name: "queued prompts are counted",
			src:  store.SummarySource{QueuedPrompts: 3},
			want: shared.TaskStatusSummary{QueuedPromptCount: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Derive(tt.src))
		})
	}
}

func TestDerivePendingAction(t *testing.T) {
	perm := store.PendingRequest{SessionID: "a", MessageID: "m1", PendingID: "p", Type: shared.MessagePermissionRequest, Seq: 4}
	clar := store.PendingRequest{SessionID: "b", MessageID: "m2", PendingID: "c", Type: shared.MessageClarificationRequest, Seq: 2}
	tests := []struct {
		name    string
		pending []store.PendingRequest
		want    shared.PendingAction
	}{
		{"nothing pending", nil, ""},
		{"a permission", []store.PendingRequest{perm}, shared.PendingPermission},
		{"a clarification", []store.PendingRequest{clar}, shared.PendingClarification},
		{"permission outranks clarification, whatever the order", []store.PendingRequest{clar, perm}, shared.PendingPermission},
		{"permission outranks clarification in the same session", []store.PendingRequest{perm, {SessionID: "a", Type: shared.MessageClarificationRequest, Seq: 9}}, shared.PendingPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Derive(store.SummarySource{Pending: tt.pending}).PendingAction)
		})
	}
}

func TestDeriveActiveError(t *testing.T) {
	e := &store.ErrorOccurrence{SessionID: "s", MessageID: "m", Seq: 7, OccurredAt: t0, Content: "rate limited"}
	tests := []struct {
		name string
		src  store.SummarySource
		want *shared.ActiveError
	}{
		{"no error", store.SummarySource{}, nil},
		{"the newest error", store.SummarySource{NewestError: e}, &shared.ActiveError{SessionID: "s", Stamp: "m", OccurredAt: t0, Preview: "rate limited"}},
		{"answered by a newer agent message", store.SummarySource{NewestError: e, AnsweredError: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Derive(tt.src).ActiveError)
		})
	}
}

func TestPreview(t *testing.T) {
	const limit = shared.MaxErrorPreviewBytes
	tests := []struct {
		name, content, want string
	}{
		{"short", "boom", "boom"},
		{"empty", "", ""},
		{"exactly the limit", strings.Repeat("a", limit), strings.Repeat("a", limit)},
		{"cut at the limit", strings.Repeat("a", limit+10), strings.Repeat("a", limit)},
		// "é" is two bytes: 511 bytes of "a" and then "é" would need 513.
		{"cut before a rune that straddles the limit", strings.Repeat("a", limit-1) + "é", strings.Repeat("a", limit-1)},
		// "€" is three bytes; 170 of them are 510 bytes, the 171st would end at 513.
		{"cut inside a three-byte rune", strings.Repeat("€", 200), strings.Repeat("€", 170)},
		{"a four-byte rune at the end", strings.Repeat("a", limit-4) + "😀", strings.Repeat("a", limit-4) + "😀"},
		{"invalid bytes become U+FFFD", "a\xffb", "a\uFFFDb"},
		{"a run of invalid bytes becomes one U+FFFD", "a\xff\xfe\xfdb", "a\uFFFDb"},
		{"a truncated rune at the end", "ab\xe2\x82", "ab\uFFFD"},
		{"a replacement that would pass the limit is left out", strings.Repeat("a", limit-2) + "\xff", strings.Repeat("a", limit-2)},
		{"a valid U+FFFD stays", "\uFFFD", "\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Preview(tt.content)
			require.Equal(t, tt.want, got)
			require.LessOrEqual(t, len(got), limit)
			require.True(t, utf8.ValidString(got))
		})
	}
}

func FuzzPreview(f *testing.F) {
	f.Add("boom")
	f.Add(strings.Repeat("€", 200))
	f.Add("a\xff\xfe")
	f.Fuzz(func(t *testing.T, content string) {
		got := Preview(content)
		if len(got) > shared.MaxErrorPreviewBytes || !utf8.ValidString(got) {
			t.Fatalf("Preview(%q) = %q: %d bytes, valid %v", content, got, len(got), utf8.ValidString(got))
		}
		if valid := strings.ToValidUTF8(content, "\uFFFD"); !strings.HasPrefix(valid, got) {
			t.Fatalf("Preview(%q) = %q is not a prefix of the valid content", content, got)
		}
	})
}

func TestDeriveGit(t *testing.T) {
	obs := func(add, del, changed, ahead, behind int, unavailable bool) *store.GitObservation {
		return &store.GitObservation{Additions: add, Deletions: del, ChangedFiles: changed, Ahead: ahead, Behind: behind, ComparisonUnavailable: unavailable}
	}
	tests := []struct {
		name  string
		repos []store.RepositoryObservation
		want  *shared.GitSummary
	}{
		{"no repository", nil, nil},
		{"no repository observed yet: no clean tree claimed", []store.RepositoryObservation{{RepositoryID: "a"}, {RepositoryID: "b"}}, nil},
		{"one repository", []store.RepositoryObservation{{RepositoryID: "a", Observation: obs(1, 2, 3, 4, 5, false)}}, &shared.GitSummary{Additions: 1, Deletions: 2, ChangedFiles: 3, Ahead: 4, Behind: 5}},
		{"an observed clean tree", []store.RepositoryObservation{{RepositoryID: "a", Observation: obs(0, 0, 0, 0, 0, false)}}, &shared.GitSummary{}},
		{
			"every repository's latest observation is summed; unobserved ones add nothing",
			[]store.RepositoryObservation{
				{RepositoryID: "a", Observation: obs(1, 2, 3, 4, 5, false)},
				{RepositoryID: "b"},
				{RepositoryID: "c", Observation: obs(10, 20, 30, 40, 50, false)},
			},
			&shared.GitSummary{Additions: 11, Deletions: 22, ChangedFiles: 33, Ahead: 44, Behind: 55},
		},
		{
			"ahead and behind only where the comparison is available",
			[]store.RepositoryObservation{
				{RepositoryID: "a", Observation: obs(1, 1, 1, 4, 5, false)},
				{RepositoryID: "b", Observation: obs(1, 1, 1, 100, 100, true)},
			},
			&shared.GitSummary{Additions: 2, Deletions: 2, ChangedFiles: 2, Ahead: 4, Behind: 5, ComparisonUnavailable: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Derive(store.SummarySource{Repositories: tt.repos}).Git)
		})
	}
}

func TestPullRequestState(t *testing.T) {
	open := store.PullRequest{State: store.PullRequestOpen}
	with := func(f func(*store.PullRequest)) store.PullRequest {
		pr := open
		f(&pr)
		return pr
	}
	tests := []struct {
		name string
		pr   store.PullRequest
		want shared.PullRequestState
	}{
		{"merged", with(func(p *store.PullRequest) {
			p.State, p.Merged, p.ChecksState = store.PullRequestClosed, true, store.ChecksFailure
		}), shared.PRMerged},
		{"closed", with(func(p *store.PullRequest) { p.State, p.ChecksState = store.PullRequestClosed, store.ChecksFailure }), shared.PRClosed},
		{"draft before failing checks", with(func(p *store.PullRequest) { p.Draft, p.ChecksState = true, store.ChecksFailure }), shared.PRDraft},
		{"failing checks before changes requested", with(func(p *store.PullRequest) {
			p.ChecksState, p.ReviewState = store.ChecksFailure, store.ReviewChangesRequested
		}), shared.PRFailure},
		{"changes requested before pending checks", with(func(p *store.PullRequest) {
			p.ChecksState, p.ReviewState = store.ChecksPending, store.ReviewChangesRequested
		}), shared.PRBlocked},
		{"pending checks before review required", with(func(p *store.PullRequest) {
			p.ChecksState, p.ReviewState = store.ChecksPending, store.ReviewRequired
		}), shared.PRPending},
		{"review required", with(func(p *store.PullRequest) { p.ChecksState, p.ReviewState = store.ChecksSuccess, store.ReviewRequired }), shared.PRAwaitingReview},
		{"approved with passing checks", with(func(p *store.PullRequest) { p.ChecksState, p.ReviewState = store.ChecksSuccess, store.ReviewApproved }), shared.PRReady},
		{"approved without checks", with(func(p *store.PullRequest) { p.ReviewState = store.ReviewApproved }), shared.PRReady},
		{"passing checks, no review asked", with(func(p *store.PullRequest) { p.ChecksState = store.ChecksSuccess }), shared.PRPassing},
		{"nothing known", open, shared.PRNeutral},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, pullRequestState(tt.pr))
		})
	}
}

func TestDerivePullRequest(t *testing.T) {
	pr := func(number int, state string, merged bool, checks, review string) store.PullRequest {
		return store.PullRequest{Number: number, URL: "u" + string(rune('0'+number)), State: state, Merged: merged, ChecksState: checks, ReviewState: review}
	}
	open, closed := store.PullRequestOpen, store.PullRequestClosed
	tests := []struct {
		name string
		prs  []store.PullRequest
		want *shared.PullRequestSummary
	}{
		{"no pull request", nil, nil},
		{
			"one open pull request",
			[]store.PullRequest{pr(1, open, false, store.ChecksPending, "")},
			&shared.PullRequestSummary{Count: 1, OpenCount: 1, AggregateState: shared.PRPending, Number: 1, URL: "u1"},
		},
		{
			"the most attention-worthy open pull request",
			[]store.PullRequest{pr(1, open, false, store.ChecksSuccess, ""), pr(2, open, false, store.ChecksFailure, ""), pr(3, open, false, "", store.ReviewRequired)},
			&shared.PullRequestSummary{Count: 3, OpenCount: 3, AggregateState: shared.PRFailure, Number: 2, URL: "u2"},
		},
		{
			"open pull requests outrank terminal ones",
			[]store.PullRequest{pr(1, closed, true, "", ""), pr(2, open, false, "", ""), pr(3, closed, false, store.ChecksFailure, "")},
			&shared.PullRequestSummary{Count: 3, OpenCount: 1, AggregateState: shared.PRNeutral, Number: 2, URL: "u2"},
		},
		{
			"terminal ones when none is open: merged before closed",
			[]store.PullRequest{pr(4, closed, false, "", ""), pr(2, closed, true, "", "")},
			&shared.PullRequestSummary{Count: 2, OpenCount: 0, AggregateState: shared.PRMerged, Number: 2, URL: "u2"},
		},
		{
			"ties go to the highest number",
			[]store.PullRequest{pr(5, open, false, store.ChecksPending, ""), pr(7, open, false, store.ChecksPending, ""), pr(6, open, false, store.ChecksPending, "")},
			&shared.PullRequestSummary{Count: 3, OpenCount: 3, AggregateState: shared.PRPending, Number: 7, URL: "u7"},
		},
		{
			"a merged pull request still marked open counts as terminal",
			[]store.PullRequest{pr(1, open, true, "", ""), pr(2, closed, false, "", "")},
			&shared.PullRequestSummary{Count: 2, OpenCount: 0, AggregateState: shared.PRMerged, Number: 1, URL: "u1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Derive(store.SummarySource{PullRequests: tt.prs}).PullRequest)
		})
	}
}

func TestDeriveIsPureAndLeavesRevisionToTheCaller(t *testing.T) {
	src := store.SummarySource{
		TaskID: "t", PrimarySessionID: "a", Revision: 9,
		Current:  &shared.TaskStatusSummary{Revision: 9, UpdatedAt: t0, QueuedPromptCount: 5},
		Sessions: []shared.Session{session("a", shared.SessionRunning, shared.ActivityGenerating, 1, 1)},
	}
	first := Derive(src)
	require.Equal(t, first, Derive(src))
	require.Zero(t, first.Revision)
	require.Zero(t, first.UpdatedAt)
	require.Zero(t, first.QueuedPromptCount, "the stored summary is not a source")
}

// TestSameSummaryComparesEveryField changes each field of a summary, down
// to nested ones, and expects sameSummary to notice, except for Revision
// and UpdatedAt: a field added later cannot be forgotten by the no-op
// check.
func TestSameSummaryComparesEveryField(t *testing.T) {
	var paths [][]int
	var walk func(typ reflect.Type, path []int)
	walk = func(typ reflect.Type, path []int) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			p := append(append([]int(nil), path...), i)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]() {
				paths = append(paths, p) // the pointer itself: nil against set
				walk(ft, p)
				continue
			}
			paths = append(paths, p)
		}
	}
	walk(reflect.TypeFor[shared.TaskStatusSummary](), nil)

	for _, path := range paths {
		a, b := filled(), filled()
		name := setLeaf(reflect.ValueOf(&b).Elem(), path)
		ignored := name == "Revision" || name == "UpdatedAt"
		require.Equal(t, ignored, sameSummary(a, b), "changing %s", name)
	}
	a, b := filled(), filled()
	b.LastActivityAt = ptr(b.LastActivityAt.In(time.FixedZone("x", 3600)))
	require.True(t, sameSummary(a, b), "the same instant in another zone")
}

func ptr[T any](v T) *T { return &v }

// filled returns a summary with every field set.
func filled() shared.TaskStatusSummary {
	return shared.TaskStatusSummary{
		Revision: 3, UpdatedAt: t0, LastActivityAt: at(1),
		PrimarySession:     &shared.PrimarySession{ID: "s", State: shared.SessionRunning},
		ForegroundActivity: shared.ActivityGenerating, ActiveSubagentCount: 2, PendingAction: shared.PendingPermission,
		ActiveError:       &shared.ActiveError{SessionID: "s", Stamp: "m", OccurredAt: t0, Preview: "p"},
		Git:               &shared.GitSummary{Additions: 1, Deletions: 2, ChangedFiles: 3, Ahead: 4, Behind: 5},
		PullRequest:       &shared.PullRequestSummary{Count: 1, OpenCount: 1, AggregateState: shared.PRReady, Number: 1, URL: "u"},
		QueuedPromptCount: 1, Preview: "Looking into it",
		Cost: []shared.Cost{{Amount: 0.5, Currency: "USD"}},
	}
}

// setLeaf changes the field at path in v (a filled summary) and returns
// its name. A path ending at a pointer to a struct sets the pointer nil.
func setLeaf(v reflect.Value, path []int) string {
	for i, idx := range path {
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		name := v.Type().Field(idx).Name
		f := v.Field(idx)
		if i < len(path)-1 {
			v = f
			continue
		}
		switch {
		case f.Kind() == reflect.Pointer && f.Type().Elem() != reflect.TypeFor[time.Time]():
			f.SetZero()
		case f.Kind() == reflect.Pointer:
			f.Set(reflect.ValueOf(at(99)))
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(t0.Add(time.Hour)))
		case f.Kind() == reflect.String:
			f.SetString(f.String() + "-changed")
		case f.CanInt():
			f.SetInt(f.Int() + 100)
		case f.Kind() == reflect.Bool:
			f.SetBool(!f.Bool())
		case f.Kind() == reflect.Slice:
			f.Set(reflect.Append(f, f.Index(0))) // one entry more
		default:
			panic("setLeaf: unhandled kind " + f.Kind().String())
		}
		return name
	}
	panic("setLeaf: empty path")
}
