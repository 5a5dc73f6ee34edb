package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
)

func TestConclusionsMapToChecksStates(t *testing.T) {
	for conclusion, want := range map[string]string{
		"success": store.ChecksSuccess, "neutral": store.ChecksSuccess, "skipped": store.ChecksSuccess,
		"failure": store.ChecksFailure, "timed_out": store.ChecksFailure, "cancelled": store.ChecksFailure,
		"action_required": store.ChecksFailure, "startup_failure": store.ChecksFailure, "stale": store.ChecksFailure,
		"": "", "something_new": "",
	} {
		require.Equal(t, want, conclusionState(conclusion), conclusion)
	}
}

func TestAggregateRanksFailureThenPendingThenSuccess(t *testing.T) {
	for name, tc := range map[string]struct {
		states []string
		want   string
	}{
		"no checks":             {nil, ""},
		"all passed":            {[]string{store.ChecksSuccess}, store.ChecksSuccess},
		"one still runs":        {[]string{store.ChecksPending, store.ChecksSuccess}, store.ChecksPending},
		"one failed, one runs":  {[]string{store.ChecksFailure, store.ChecksPending}, store.ChecksFailure},
		"one failed, one green": {[]string{store.ChecksFailure, store.ChecksSuccess}, store.ChecksFailure},
	} {
		require.Equal(t, tc.want, aggregate(tc.states), name)
	}
}

func TestReviewDecisionCountsEachReviewersLatestVerdict(t *testing.T) {
	review := func(login, state string) reviewJSON {
		r := reviewJSON{State: state}
		r.User = &struct {
			Login string `json:"login"`
		}{login}
		return r
	}
	for name, tc := range map[string]struct {
		reviews   []reviewJSON
		requested bool
		want      string
	}{
		"no reviews, none requested": {nil, false, ""},
		"no reviews, one requested":  {nil, true, store.ReviewRequired},
		"approved after changes":     {[]reviewJSON{review("a", "CHANGES_REQUESTED"), review("a", "APPROVED")}, false, store.ReviewApproved},
		"a comment changes nothing":  {[]reviewJSON{review("a", "APPROVED"), review("a", "COMMENTED")}, false, store.ReviewApproved},
		"changes outrank approvals":  {[]reviewJSON{review("a", "APPROVED"), review("b", "CHANGES_REQUESTED")}, false, store.ReviewChangesRequested},
		"a dismissed review":         {[]reviewJSON{review("a", "CHANGES_REQUESTED"), review("a", "DISMISSED")}, true, store.ReviewRequired},
		"a deleted reviewer counts":  {[]reviewJSON{{State: "APPROVED"}}, false, store.ReviewApproved},
	} {
		require.Equal(t, tc.want, reviewDecision(tc.reviews, tc.requested), name)
	}
}

func TestParsePullRequestURL(t *testing.T) {
	for raw, want := range map[string]target{
		"https://github.com/octo-org/herd-demo/pull/42":  {testRepo, 42},
		"https://github.com/octo-org/herd-demo/pull/42/": {testRepo, 42},
		"https://ghe.example.com/team/app/pull/7":        {"team/app", 7},
		"https://github.com/octo-org/herd-demo/issues/1": {},
		"https://github.com/octo-org/herd-demo/pull/x":   {},
		"https://github.com/octo-org/herd-demo/pull/0":   {},
		"https://github.com/octo-org/pull/42":            {},
		"octo-org/herd-demo/pull/42":                     {},
		"":                                               {},
	} {
		got, ok := parsePullRequestURL(raw)
		require.Equal(t, want != target{}, ok, raw)
		require.Equal(t, want, got, raw)
	}
}

func TestDecodedPayloadsCarryWhatHerdStores(t *testing.T) {
	at := func(hhmmss string) time.Time {
		v, err := time.Parse(time.RFC3339, "2026-08-01T"+hhmmss+"Z")
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		event, fixture string
		want           change
	}{
		{"check_suite", "check_suite_completed", checkChange{store.CheckObservation{
			Repository: testRepo, HeadSHA: testSHA, Source: "suite:18563402461", State: store.ChecksFailure, ObservedAt: at("12:04:10"),
		}}},
		{"check_run", "check_run_created", checkChange{store.CheckObservation{
			Repository: testRepo, HeadSHA: testSHA, Source: "run:18563402461:test", State: store.ChecksPending, ObservedAt: at("12:00:07"),
		}}},
		{"status", "status", checkChange{store.CheckObservation{
			Repository: testRepo, HeadSHA: testSHA, Source: "status:ci/build", State: store.ChecksPending, ObservedAt: at("12:01:00"),
		}}},
	} {
		got, err := decoders[tc.event](fixture(t, tc.fixture, nil))
		require.NoError(t, err, tc.fixture)
		require.Equal(t, tc.want, got, tc.fixture)
	}

	got, err := decodeReview(fixture(t, "pull_request_review_submitted", nil))
	require.NoError(t, err)
	c := got.(pullRequestChange)
	require.Equal(t, store.ReviewApproved, *c.review)
	require.Equal(t, testRepo, c.repository)
	require.Equal(t, testBranch, c.pr.Head.Ref)
	require.Equal(t, testSHA, c.pr.Head.SHA)

	got, err = decodePullRequest(fixture(t, "pull_request_closed_merged", nil))
	require.NoError(t, err)
	c = got.(pullRequestChange)
	require.True(t, c.pr.Merged)
	require.Equal(t, store.PullRequestClosed, c.pr.State)
	require.Nil(t, c.review)
}

// FuzzDecode feeds outside input to every payload decoder: none may
// panic, and a payload it accepts names its repository and commit or pull
// request.
func FuzzDecode(f *testing.F) {
	events := []string{eventPullRequest, eventReview, eventCheckSuite, eventCheckRun, eventStatus}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for i, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), body)
	}
	f.Add(uint8(0), []byte(`{"pull_request":{"number":1,"state":"open","updated_at":"2026-08-01T12:00:00Z"},"repository":{"full_name":"o/r"}}`))
	f.Add(uint8(2), []byte(`{"action":"completed","check_suite":{"id":1,"head_sha":"a","conclusion":"success"},"repository":{"full_name":"o/r"}}`))
	f.Add(uint8(3), []byte(`{"check_run":{"name":"n","head_sha":"a","status":"completed","conclusion":null},"repository":{"full_name":"o/r"}}`))
	f.Add(uint8(4), []byte(`null`))
	f.Fuzz(func(t *testing.T, which uint8, payload []byte) {
		event := events[int(which)%len(events)]
		c, err := decoders[event](payload)
		if err != nil {
			require.Nil(t, c)
			return
		}
		switch c := c.(type) {
		case nil:
		case pullRequestChange:
			require.NotEmpty(t, c.repository)
			require.Positive(t, c.pr.Number)
			require.Contains(t, []string{store.PullRequestOpen, store.PullRequestClosed}, c.pr.State)
		case checkChange:
			require.NotEmpty(t, c.obs.Repository)
			require.NotEmpty(t, c.obs.HeadSHA)
			require.True(t, strings.HasPrefix(c.obs.Source, "suite:") || strings.HasPrefix(c.obs.Source, "run:") ||
				strings.HasPrefix(c.obs.Source, "status:"), c.obs.Source)
			require.Contains(t, []string{store.ChecksPending, store.ChecksSuccess, store.ChecksFailure}, c.obs.State)
		default:
			t.Fatalf("decoder of %s returned a %T", event, c)
		}
	})
}
