package github

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// testPullRequest is the pull request the tests open.
var testPullRequest = NewPullRequest{
	Repository: testRepo, Title: "Fix the login redirect", Body: "The redirect kept the old path.",
	Head: testBranch, Base: "main", Draft: true,
}

// fakePullsAPI serves POST /api/v3/repos/octo-org/herd-demo/pulls as
// GitHub Enterprise Server does, answering status with body, and returns
// a client of it and the requests it received.
func fakePullsAPI(t *testing.T, status int, body string) (*PullRequestClient, *[]*http.Request, *[]string) {
	t.Helper()
	var reqs []*http.Request
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		reqs, bodies = append(reqs, r), append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return &PullRequestClient{Token: "ghp_t0ken", BaseURL: srv.URL + "/api/v3/", Client: srv.Client()}, &reqs, &bodies
}

// createdAnswer is GitHub's 201 answer to opening testPullRequest.
func createdAnswer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "api_pull_created.json"))
	require.NoError(t, err)
	return string(b)
}

func TestCreateOpensAPullRequest(t *testing.T) {
	c, reqs, bodies := fakePullsAPI(t, http.StatusCreated, createdAnswer(t))
	pr, err := c.Create(t.Context(), testPullRequest)
	require.NoError(t, err)
	require.Equal(t, CreatedPullRequest{
		Repository: testRepo, Number: testNumber, URL: testURL, HeadBranch: testBranch, HeadSHA: testSHA,
		State: store.PullRequestOpen, Draft: true, UpdatedAt: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC),
	}, pr)

	require.Len(t, *reqs, 1)
	r := (*reqs)[0]
	require.Equal(t, http.MethodPost, r.Method)
	require.Equal(t, "/api/v3/repos/octo-org/herd-demo/pulls", r.URL.Path)
	require.Equal(t, "Bearer ghp_t0ken", r.Header.Get("Authorization"))
	require.Equal(t, "application/vnd.github+json", r.Header.Get("Accept"))
	require.Equal(t, "2022-11-28", r.Header.Get("X-GitHub-Api-Version"))
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.JSONEq(t, `{"title":"Fix the login redirect","body":"The redirect kept the old path.",
		"head":"herd/0190a1b2-fix-login","base":"main","draft":true}`, (*bodies)[0])
}

func TestCreateKeepsGitHubsSpellingOfTheRepository(t *testing.T) {
	c, reqs, _ := fakePullsAPI(t, http.StatusCreated, createdAnswer(t))
	in := testPullRequest
	in.Repository = "Octo-Org/Herd-Demo" // as a remote URL may spell it
	pr, err := c.Create(t.Context(), in)
	require.NoError(t, err)
	require.Equal(t, testRepo, pr.Repository, "the base repository's full name, as webhooks carry it")
	require.Equal(t, "/api/v3/repos/Octo-Org/Herd-Demo/pulls", (*reqs)[0].URL.Path)
}

func TestCreateRefusedByGitHubCarriesGitHubsMessage(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		code   shared.Code
		words  []string
	}{
		{
			name: "a pull request exists already", status: http.StatusUnprocessableEntity,
			body: `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom",
				"message":"A pull request already exists for octo-org:herd/0190a1b2-fix-login."}],
				"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`,
			code:  shared.CodeConflict,
			words: []string{"Validation Failed: A pull request already exists for octo-org:herd/0190a1b2-fix-login."},
		},
		{
			name: "no commits between the branches", status: http.StatusUnprocessableEntity,
			body: `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom",
				"message":"No commits between main and herd/0190a1b2-fix-login"}]}`,
			code:  shared.CodeConflict,
			words: []string{"No commits between main and herd/0190a1b2-fix-login"},
		},
		{
			name: "an unknown base branch", status: http.StatusUnprocessableEntity,
			body:  `{"message":"Validation Failed","errors":[{"resource":"PullRequest","field":"base","code":"invalid"}]}`,
			code:  shared.CodeConflict,
			words: []string{"Validation Failed: base invalid"},
		},
		{
			name: "a bad token", status: http.StatusUnauthorized,
			body:  `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`,
			code:  shared.CodeConflict,
			words: []string{"GitHub refused herd's token", "401 Unauthorized: Bad credentials"},
		},
		{
			name: "a token without write access", status: http.StatusForbidden,
			body:  `{"message":"Resource not accessible by personal access token"}`,
			code:  shared.CodeConflict,
			words: []string{"octo-org/herd-demo", "403 Forbidden: Resource not accessible by personal access token"},
		},
		{
			name: "a rate limit", status: http.StatusForbidden,
			body:  `{"message":"API rate limit exceeded for user ID 1."}`,
			code:  shared.CodeUnavailable,
			words: []string{"API rate limit exceeded", "try again later"},
		},
		{
			name: "a repository the token cannot see", status: http.StatusNotFound,
			body:  `{"message":"Not Found"}`,
			code:  shared.CodeNotFound,
			words: []string{"no repository octo-org/herd-demo that herd's token can see", "404 Not Found"},
		},
		{
			name: "GitHub failing", status: http.StatusBadGateway, body: `<html>bad gateway</html>`,
			code:  shared.CodeUnavailable,
			words: []string{"GitHub answered 502 Bad Gateway", "no message"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := fakePullsAPI(t, tc.status, tc.body)
			_, err := c.Create(t.Context(), testPullRequest)
			require.Error(t, err)
			require.Equal(t, tc.code, shared.ErrorCode(err), "error: %v", err)
			for _, w := range tc.words {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestCreateRefusesInputThatCannotBeAPullRequest(t *testing.T) {
	cases := map[string]func(in *NewPullRequest){
		"no repository":              func(in *NewPullRequest) { in.Repository = "" },
		"a repository without owner": func(in *NewPullRequest) { in.Repository = "/herd-demo" },
		"a repository path":          func(in *NewPullRequest) { in.Repository = "octo-org/herd-demo/pulls" },
		"a blank title":              func(in *NewPullRequest) { in.Title = " \n" },
		"a title over the limit": func(in *NewPullRequest) {
			in.Title = strings.Repeat("t", shared.MaxPullRequestTitleBytes+1)
		},
		"a body over the limit": func(in *NewPullRequest) {
			in.Body = strings.Repeat("b", shared.MaxPullRequestBodyBytes+1)
		},
		"no head": func(in *NewPullRequest) { in.Head = "" },
		"no base": func(in *NewPullRequest) { in.Base = "" },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			c, reqs, _ := fakePullsAPI(t, http.StatusCreated, createdAnswer(t))
			in := testPullRequest
			edit(&in)
			_, err := c.Create(t.Context(), in)
			require.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err), "error: %v", err)
			require.Empty(t, *reqs, "nothing was sent")
		})
	}
}

func TestCreateWithoutATokenIsAConflict(t *testing.T) {
	c, reqs, _ := fakePullsAPI(t, http.StatusCreated, createdAnswer(t))
	c.Token = ""
	_, err := c.Create(t.Context(), testPullRequest)
	require.Equal(t, shared.CodeConflict, shared.ErrorCode(err), "error: %v", err)
	require.Empty(t, *reqs)
}

func TestCreateRejectsAnAnswerThatIsNoPullRequest(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":     `<html></html>`,
		"no number":    `{"html_url":"` + testURL + `","state":"open","updated_at":"2026-08-01T12:00:00Z"}`,
		"no timestamp": `{"number":42,"html_url":"` + testURL + `","state":"open"}`,
		"no address":   `{"number":42,"state":"open","updated_at":"2026-08-01T12:00:00Z"}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, _, _ := fakePullsAPI(t, http.StatusCreated, body)
			_, err := c.Create(t.Context(), testPullRequest)
			require.ErrorContains(t, err, "open a pull request in octo-org/herd-demo")
		})
	}
}

func TestCreateThatCannotReachGitHubIsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	c := &PullRequestClient{Token: "t", BaseURL: srv.URL}
	_, err := c.Create(t.Context(), testPullRequest)
	require.Equal(t, shared.CodeUnavailable, shared.ErrorCode(err), "error: %v", err)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = c.Create(ctx, testPullRequest)
	require.ErrorIs(t, err, context.Canceled, "the caller gave up")
}

func TestRepositoryOfNamesRemotesOnTheGitHubOfTheAPI(t *testing.T) {
	for _, tc := range []struct{ remote, api, want string }{
		{"https://github.com/octo-org/herd-demo.git", "", testRepo},
		{"git@github.com:octo-org/herd-demo.git", "https://api.github.com", testRepo},
		{"ssh://git@github.com/octo-org/herd-demo", "https://api.github.com/", testRepo},
		{"https://ghe.example.com/octo-org/herd-demo.git", "https://ghe.example.com/api/v3", testRepo},
		{"https://github.com/octo-org/herd-demo.git", "https://ghe.example.com/api/v3", ""},
		{"https://gitlab.com/octo-org/herd-demo.git", "", ""},
		{"/srv/git/herd-demo.git", "", ""},
		{"https://github.com/octo-org/herd-demo.git", "::", ""},
	} {
		got, ok := RepositoryOf(tc.remote, tc.api)
		require.Equal(t, tc.want, got, "%s on %q", tc.remote, tc.api)
		require.Equal(t, tc.want != "", ok)
	}
}

func TestACreatedPullRequestIsStoredAsAPollStoresIt(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		task := db.task(t, testBranch)
		// A check reported on the head commit before the pull request
		// existed counts once it is stored.
		_, err := db.UpdatePullRequests(ctx, func(tx *store.PullRequestTx) error {
			_, err := tx.RecordCheck(store.CheckObservation{
				Repository: testRepo, HeadSHA: testSHA, Source: "status:ci", State: store.ChecksPending,
			})
			return err
		})
		require.NoError(t, err)
		c, _, _ := fakePullsAPI(t, http.StatusCreated, createdAnswer(t))
		created, err := c.Create(ctx, testPullRequest)
		require.NoError(t, err)

		changed, err := db.UpdatePullRequests(ctx, created.Apply)
		require.NoError(t, err)
		require.Equal(t, []string{task.ID}, changed)
		pr := db.mustPullRequest(t)
		require.Equal(t, task.ID, pr.TaskID)
		require.Equal(t, testURL, pr.URL)
		require.Equal(t, testBranch, pr.HeadBranch)
		require.Equal(t, testSHA, pr.HeadSHA)
		require.Equal(t, store.PullRequestOpen, pr.State)
		require.True(t, pr.Draft)
		require.Equal(t, store.ChecksPending, pr.ChecksState)
		require.True(t, created.UpdatedAt.Equal(pr.UpdatedAt))

		// A webhook that told of a newer state first keeps it.
		w, _ := newTestWebhook(t, db.Store)
		requireStatus(t, http.StatusOK, deliver(w, "pull_request", "d-1", fixture(t, "pull_request_closed_merged", nil)))
		changed, err = db.UpdatePullRequests(ctx, created.Apply)
		require.NoError(t, err)
		require.Empty(t, changed)
		pr = db.mustPullRequest(t)
		require.Equal(t, store.PullRequestClosed, pr.State)
		require.True(t, pr.Merged)
	})
}

func TestACreatedPullRequestNoTaskOwnsIsNotStored(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		db.task(t, "herd/another-branch")
		c, _, _ := fakePullsAPI(t, http.StatusCreated, createdAnswer(t))
		created, err := c.Create(t.Context(), testPullRequest)
		require.NoError(t, err)
		changed, err := db.UpdatePullRequests(context.Background(), created.Apply)
		require.NoError(t, err)
		require.Empty(t, changed)
		_, ok := db.pullRequest(t)
		require.False(t, ok)
	})
}
