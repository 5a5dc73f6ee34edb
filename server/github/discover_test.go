package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/store"
)

// discoverURI is the request that looks for the pull requests of branch
// in testRepo.
func discoverURI(branch string) string {
	return "/repos/octo-org/herd-demo/pulls?head=" + url.QueryEscape("octo-org:"+branch) + "&state=all&per_page=10"
}

// gitRepo creates a repository whose origin remote is origin, or without
// one when origin is "".
func gitRepo(tb testing.TB, origin string) string {
	tb.Helper()
	dir := gittest.Init(tb)
	if origin != "" {
		gittest.Git(tb, dir, "remote", "add", "origin", origin)
	}
	return dir
}

// discoveringPoller returns a Poller over st with GitHub's own base URL
// whose requests gh answers in memory, the tasks it marks and the count
// of the git commands it ran.
func discoveringPoller(tb testing.TB, st PollStore, gh *fakeGitHub) (*Poller, *marks, func() int) {
	tb.Helper()
	m := &marks{}
	p, err := NewPoller(PollerConfig{Token: "t", Store: st, Marker: m, Client: &http.Client{Transport: handlerTransport{gh}}})
	require.NoError(tb, err)
	var calls atomic.Int32
	p.origins.git = func(ctx context.Context, dir string, args ...string) ([]byte, error) {
		calls.Add(1)
		return gitcli.Run(ctx, dir, args...)
	}
	return p, m, func() int { return int(calls.Load()) }
}

// uris are the requests' paths with their queries.
func uris(reqs []request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.uri
	}
	return out
}

// paths are the requests' paths.
func paths(reqs []request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.path
	}
	return out
}

func TestPollerFindsATasksPullRequestByItsBranch(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		gh := newFakeGitHub(t)
		repo := gitRepo(t, "https://github.com/octo-org/herd-demo.git")
		task := db.checkout(t, repo, testBranch)
		const waiting = "herd/0190a1b3-add-logout"
		db.checkout(t, repo, waiting)
		gh.set(discoverURI(waiting), []byte("[]"))
		p, m, gitCalls := discoveringPoller(t, db.Store, gh)

		p.round(ctx)
		reqs := gh.take()
		require.Len(t, reqs, 6, "both branches looked for, then the pull request found polled")
		require.ElementsMatch(t, []string{
			"/repos/octo-org/herd-demo/pulls?head=octo-org%3Aherd%2F0190a1b2-fix-login&state=all&per_page=10",
			"/repos/octo-org/herd-demo/pulls?head=octo-org%3Aherd%2F0190a1b3-add-logout&state=all&per_page=10",
		}, uris(reqs[:2]))
		require.Equal(t, []string{pullPath, runsPath, statusPath, reviewsPath}, paths(reqs[2:]),
			"found in the round, polled in the round")
		require.Equal(t, store.PullRequest{
			TaskID: task.ID, Repository: testRepo, Number: testNumber, URL: testURL, HeadBranch: testBranch, HeadSHA: testSHA,
			State: store.PullRequestOpen, ChecksState: store.ChecksPending, ReviewState: store.ReviewApproved,
			UpdatedAt: time.Date(2026, 8, 1, 12, 30, 0, 0, time.UTC),
		}, db.mustPullRequest(t), "linked to the task working on its head branch")
		require.Equal(t, []string{task.ID}, m.take())
		require.Equal(t, 1, gitCalls(), "one repository, one git call")

		p.round(ctx)
		reqs = gh.take()
		require.Equal(t, []string{discoverURI(waiting), pullPath}, uris(reqs[:2]),
			"the branch with a stored pull request is not looked for again; its pull request is polled")
		require.Equal(t, []string{runsPath, statusPath, reviewsPath}, paths(reqs[2:]))
		require.Equal(t, 1, gitCalls(), "the origin is read once per poller")
		require.Empty(t, m.take())
	})
}

func TestPollerRevalidatesTheSearchOfABranchWithoutAPullRequestYet(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		gh := newFakeGitHub(t)
		gh.set(discoverURI(testBranch), []byte("[]"))
		task := db.checkout(t, gitRepo(t, "git@github.com:octo-org/herd-demo.git"), testBranch)
		st := &countingStore{PollStore: db.Store}
		p, m, _ := discoveringPoller(t, st, gh)

		p.round(ctx)
		reqs := gh.take()
		require.Equal(t, []string{discoverURI(testBranch)}, uris(reqs))
		require.Empty(t, reqs[0].ifNoneMatch)
		require.Zero(t, st.count(), "nothing found, nothing written")

		p.round(ctx)
		reqs = gh.take()
		require.Equal(t, []string{discoverURI(testBranch)}, uris(reqs))
		require.Equal(t, etagOf([]byte("[]")), reqs[0].ifNoneMatch, "asked with the ETag of the empty list, answered 304")
		require.Zero(t, st.count())
		require.Empty(t, m.take())

		gh.set(discoverURI(testBranch), fixture(t, "api_pulls", nil))
		p.round(ctx)
		reqs = gh.take()
		require.Equal(t, []string{discoverURI(testBranch), pullPath}, uris(reqs[:2]), "a pull request opened since is found")
		require.Equal(t, task.ID, db.mustPullRequest(t).TaskID)
		require.Equal(t, []string{task.ID}, m.take())
	})
}

func TestPollerFindsAMergedPullRequestAndDoesNotPollIt(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		gh := newFakeGitHub(t)
		// The remote spells the owner as no API answer does.
		const uri = "/repos/Octo-Org/herd-demo/pulls?head=Octo-Org%3Aherd%2F0190a1b2-fix-login&state=all&per_page=10"
		merged := fixture(t, "api_pull", map[string]any{
			"state": "closed", "merged_at": "2026-08-01T13:00:00Z", "updated_at": "2026-08-01T13:00:00Z",
			"base.repo": map[string]any{"full_name": testRepo},
		})
		gh.set(uri, []byte("["+string(merged)+"]"))
		task := db.checkout(t, gitRepo(t, "ssh://git@github.com/Octo-Org/herd-demo"), testBranch)
		p, m, _ := discoveringPoller(t, db.Store, gh)

		p.round(ctx)
		require.Equal(t, []string{uri}, uris(gh.take()), "closed pull requests are not polled")
		pr := db.mustPullRequest(t) // stored as GitHub spells the repository
		require.Equal(t, task.ID, pr.TaskID)
		require.True(t, pr.Merged)
		require.Equal(t, store.PullRequestClosed, pr.State)
		require.Equal(t, []string{task.ID}, m.take())

		p.round(ctx)
		require.Empty(t, gh.take())
	})
}

func TestPollerNeverAsksGitHubAboutARepositoryNotOnGitHub(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		gh := newFakeGitHub(t)
		gitlab := gitRepo(t, "https://gitlab.com/octo-org/herd-demo.git")
		local := gitRepo(t, "")
		db.checkout(t, gitlab, testBranch)
		db.checkout(t, gitlab, "herd/0190a1b3-add-logout")
		db.checkout(t, local, "herd/0190a1b4-docs")
		db.checkout(t, t.TempDir(), "herd/0190a1b5-gone")
		p, m, gitCalls := discoveringPoller(t, db.Store, gh)

		for range 3 {
			p.round(ctx)
		}
		require.Empty(t, gh.take())
		require.Empty(t, m.take())
		require.Equal(t, 3, gitCalls(), "each repository asked once, whatever the rounds and branches")
	})
}

func TestPollerLooksForABranchEveryRoundWithItsETag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gh := newFakeGitHub(t)
		gh.set(discoverURI(testBranch), []byte("[]"))
		st := &fakePollStore{branches: []store.BranchToDiscover{
			{TaskID: "a", Path: "/src/herd-demo", Branch: testBranch},
			{TaskID: "b", Path: "/src/herd-demo", Branch: testBranch},
		}}
		p, err := NewPoller(PollerConfig{
			Token: "t", Store: st, Marker: &marks{}, Interval: time.Minute,
			Client: &http.Client{Transport: handlerTransport{gh}},
		})
		require.NoError(t, err)
		var gitCalls atomic.Int32
		p.origins.git = func(context.Context, string, ...string) ([]byte, error) {
			gitCalls.Add(1)
			return []byte("git@github.com:octo-org/herd-demo.git\n"), nil
		}
		searches := func() []request {
			var out []request
			for _, r := range gh.take() {
				if r.uri == discoverURI(testBranch) {
					out = append(out, r)
				}
			}
			return out
		}
		stop := run(t, p)

		synctest.Wait()
		first := searches()
		require.Len(t, first, 1, "two tasks on one branch of one repository share a search")
		require.Empty(t, first[0].ifNoneMatch)

		time.Sleep(time.Minute)
		synctest.Wait()
		second := searches()
		require.Len(t, second, 1, "the next round searches again")
		require.Equal(t, etagOf([]byte("[]")), second[0].ifNoneMatch)
		require.Equal(t, int32(1), gitCalls.Load())
		stop()
	})
}

func TestOriginsAskGitAgainOnlyWhenItDidNotAnswer(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	o := &origins{host: "github.com", byPath: map[string]*origin{}, git: func(_ context.Context, dir string, _ ...string) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		asked[dir]++
		switch {
		case dir == "/slow" && asked[dir] == 1:
			return nil, &gitcli.Error{Args: []string{"remote"}, ExitCode: -1, Err: context.DeadlineExceeded}
		case dir == "/none":
			return nil, &gitcli.Error{Args: []string{"remote"}, ExitCode: 2, Err: errors.New("exit status 2"),
				Stderr: "error: No such remote 'origin'"}
		}
		return []byte("https://github.com/octo-org/herd-demo.git\n"), nil
	}}
	ctx := context.Background()

	_, err := o.repository(ctx, "/slow")
	require.ErrorIs(t, err, context.DeadlineExceeded, "a git that timed out")
	repo, err := o.repository(ctx, "/slow")
	require.NoError(t, err)
	require.Equal(t, testRepo, repo, "is asked again")

	repo, err = o.repository(ctx, "/none")
	require.NoError(t, err)
	require.Empty(t, repo, "no origin")

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, dir := range []string{"/slow", "/none", "/shared"} {
				if _, err := o.repository(ctx, dir); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, map[string]int{"/slow": 2, "/none": 1, "/shared": 1}, asked,
		"an answer, even no origin, is kept; concurrent askers share one git call")
}

func TestRemoteRepositoryReadsGitHubsRemoteURLs(t *testing.T) {
	for _, tc := range []struct {
		remote, host, want string
	}{
		{"https://github.com/octo-org/herd-demo.git", "github.com", testRepo},
		{"https://github.com/octo-org/herd-demo", "github.com", testRepo},
		{"https://github.com/octo-org/herd-demo/\n", "github.com", testRepo},
		{"https://x-access-token:ghp_t0ken@github.com/octo-org/herd-demo.git", "github.com", testRepo},
		{"https://GitHub.com/octo-org/herd-demo.git", "github.com", testRepo},
		{"git@github.com:octo-org/herd-demo.git", "github.com", testRepo},
		{"git@github.com:octo-org/herd-demo", "github.com", testRepo},
		{"ssh://git@github.com/octo-org/herd-demo.git", "github.com", testRepo},
		{"ssh://git@github.com:22/octo-org/herd-demo", "github.com", testRepo},
		{"https://ghe.example.com/octo-org/herd-demo.git", "ghe.example.com", testRepo},
		{"git@ghe.example.com:octo-org/herd-demo.git", "ghe.example.com", testRepo},
		{"ssh://git@ghe.example.com/octo-org/herd-demo.git", "ghe.example.com", testRepo},
		{"https://github.com/octo-org/herd-demo.git", "ghe.example.com", ""},
		{"https://gitlab.com/octo-org/herd-demo.git", "github.com", ""},
		{"git@gitlab.com:octo-org/herd-demo.git", "github.com", ""},
		{"https://github.com.evil.example/octo-org/herd-demo.git", "github.com", ""},
		{"git://github.com/octo-org/herd-demo.git", "github.com", ""},
		{"file:///srv/git/herd-demo.git", "github.com", ""},
		{"/srv/git/herd-demo.git", "github.com", ""},
		{"../herd-demo", "github.com", ""},
		{"./github.com:octo-org/herd-demo", "github.com", ""},
		{"https://github.com/octo-org", "github.com", ""},
		{"https://github.com/octo-org/herd-demo/pull/42", "github.com", ""},
		{"", "github.com", ""},
	} {
		t.Run(fmt.Sprintf("%s on %s", tc.remote, tc.host), func(t *testing.T) {
			got, ok := remoteRepository(tc.remote, tc.host)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.want != "", ok)
		})
	}
}

func TestWebHostIsTheHostOfTheGitHubAnAPIServes(t *testing.T) {
	for base, want := range map[string]string{
		"https://api.github.com":              "github.com",
		"https://ghe.example.com/api/v3":      "ghe.example.com",
		"https://ghe.example.com/api/v3/":     "ghe.example.com",
		"https://api.ghe.example.com/api/v3":  "api.ghe.example.com",
		"https://api.octo-corp.ghe.com":       "octo-corp.ghe.com",
		"https://GHE.example.com:8443/api/v3": "ghe.example.com",
		"http://127.0.0.1:8080":               "127.0.0.1",
	} {
		u, err := url.Parse(base)
		require.NoError(t, err)
		require.Equal(t, want, webHost(u), base)
	}
}

func FuzzRemoteRepository(f *testing.F) {
	for _, remote := range []string{
		"https://github.com/octo-org/herd-demo.git", "git@github.com:octo-org/herd-demo", "ssh://git@github.com:22/o/r",
		"https://user:pass@github.com/o/r/", "github.com:o/r", "/srv/git/r.git", "",
	} {
		f.Add(remote)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		name, ok := remoteRepository(remote, "github.com")
		if !ok {
			require.Empty(t, name)
			return
		}
		owner, repo, found := strings.Cut(name, "/")
		require.True(t, found, name)
		require.NotEmpty(t, owner, name)
		require.NotEmpty(t, repo, name)
		require.NotContains(t, repo, "/", name)
	})
}
