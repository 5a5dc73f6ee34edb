package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
)

// The REST API paths of testRepo#testNumber and its head.
const (
	pullPath    = "/repos/octo-org/herd-demo/pulls/42"
	runsPath    = "/repos/octo-org/herd-demo/commits/" + testSHA + "/check-runs"
	statusPath  = "/repos/octo-org/herd-demo/commits/" + testSHA + "/status"
	reviewsPath = "/repos/octo-org/herd-demo/pulls/42/reviews"
)

// request is a request the fake GitHub received.
type request struct {
	// uri is the path with the query.
	path, uri, ifNoneMatch, auth string
	at                           time.Time
}

// fakeGitHub serves testdata/api_*.json as GitHub's REST API does, with
// ETags, and records every request. An answer set for a path with its
// query answers that query only; one set for a path answers any query.
// intercept, when set, may answer a request instead.
type fakeGitHub struct {
	mu sync.Mutex
	// bodies maps a path to its answer. Guarded by mu.
	bodies map[string][]byte
	// requests are the requests received since the last take, in order.
	// Guarded by mu.
	requests []request
	// received counts every request. Guarded by mu.
	received int
	// intercept answers the nth request (from 1) itself when it returns
	// true. Guarded by mu.
	intercept func(w http.ResponseWriter, r *http.Request, n int) bool
}

func newFakeGitHub(tb testing.TB) *fakeGitHub {
	tb.Helper()
	f := &fakeGitHub{bodies: map[string][]byte{}}
	for path, name := range map[string]string{
		pullPath: "api_pull", runsPath: "api_check_runs", statusPath: "api_status", reviewsPath: "api_reviews",
		discoverURI(testBranch): "api_pulls",
	} {
		body, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		require.NoError(tb, err)
		f.bodies[path] = body
	}
	return f
}

// ServeHTTP implements http.Handler.
func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, request{
		path: r.URL.Path, uri: r.URL.RequestURI(), ifNoneMatch: r.Header.Get("If-None-Match"),
		auth: r.Header.Get("Authorization"), at: time.Now(),
	})
	f.received++
	n := f.received
	body, ok := f.bodies[r.URL.RequestURI()]
	if !ok {
		body, ok = f.bodies[r.URL.Path]
	}
	intercept := f.intercept
	f.mu.Unlock()
	if intercept != nil && intercept(w, r, n) {
		return
	}
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	etag := etagOf(body)
	w.Header().Set("ETag", etag)
	w.Header().Set("X-RateLimit-Remaining", "4999")
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// etagOf is the ETag the fake GitHub sends with body.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

// set replaces the answer to path, which may carry a query.
func (f *fakeGitHub) set(path string, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies[path] = body
}

// take returns the requests received since the last call.
func (f *fakeGitHub) take() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = nil
	return out
}

// countingStore counts the writes of a PollStore.
type countingStore struct {
	PollStore
	mu      sync.Mutex
	updates int
}

func (c *countingStore) UpdatePullRequests(ctx context.Context, apply func(*store.PullRequestTx) error) ([]string, error) {
	c.mu.Lock()
	c.updates++
	c.mu.Unlock()
	return c.PollStore.UpdatePullRequests(ctx, apply)
}

func (c *countingStore) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updates
}

func TestPollerStoresALinkedPullRequestAndRevalidatesWithETags(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		gh := newFakeGitHub(t)
		srv := httptest.NewServer(gh)
		t.Cleanup(srv.Close)
		task := db.task(t, "")
		db.link(t, task.ID, testURL)
		st := &countingStore{PollStore: db.Store}
		m := &marks{}
		p, err := NewPoller(PollerConfig{Token: "ghp_t0ken", BaseURL: srv.URL, Store: st, Marker: m, Client: srv.Client()})
		require.NoError(t, err)

		p.round(ctx)
		first := gh.take()
		require.Len(t, first, 4, "the pull request, its head's check runs and status, its reviews")
		for _, r := range first {
			require.Equal(t, "Bearer ghp_t0ken", r.auth, r.path)
			require.Empty(t, r.ifNoneMatch, r.path)
		}
		require.Equal(t, store.PullRequest{
			TaskID: task.ID, Repository: testRepo, Number: testNumber, URL: testURL, HeadBranch: testBranch, HeadSHA: testSHA,
			State: store.PullRequestOpen, ChecksState: store.ChecksPending, ReviewState: store.ReviewApproved,
			UpdatedAt: time.Date(2026, 8, 1, 12, 30, 0, 0, time.UTC),
		}, db.mustPullRequest(t), "lint still runs; hubot approved after asking for changes")
		require.Equal(t, []string{task.ID}, m.take())
		require.Equal(t, 1, st.count())

		p.round(ctx)
		for _, r := range gh.take() {
			require.NotEmpty(t, r.ifNoneMatch, "%s revalidated", r.path)
		}
		require.Equal(t, 1, st.count(), "nothing rewritten when GitHub answers 304")
		require.Empty(t, m.take())

		gh.set(runsPath, []byte(`{"total_count":1,"check_runs":[{"name":"lint","head_sha":"`+testSHA+`",
			"status":"completed","conclusion":"success","started_at":"2026-08-01T12:00:08Z",
			"completed_at":"2026-08-01T12:06:00Z","check_suite":{"id":18563402461}}]}`))
		p.round(ctx)
		require.Equal(t, store.ChecksSuccess, db.mustPullRequest(t).ChecksState)
		require.Equal(t, []string{task.ID}, m.take())
	})
}

func TestPollerPollsTheStoredOpenPullRequests(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		gh := newFakeGitHub(t)
		srv := httptest.NewServer(gh)
		t.Cleanup(srv.Close)
		task := db.task(t, testBranch)
		_, err := db.UpsertPullRequest(ctx, store.PullRequest{
			TaskID: task.ID, Repository: testRepo, Number: testNumber, URL: testURL, HeadBranch: testBranch,
			State: store.PullRequestOpen, UpdatedAt: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC),
		})
		require.NoError(t, err)
		gh.set(pullPath, fixture(t, "api_pull", map[string]any{"state": "closed", "merged": true, "merged_at": "2026-08-01T12:30:00Z"}))
		m := &marks{}
		p, err := NewPoller(PollerConfig{Token: "t", BaseURL: srv.URL, Store: db.Store, Marker: m})
		require.NoError(t, err)

		p.round(ctx)
		require.Len(t, gh.take(), 1, "a closed pull request's checks and reviews are not fetched")
		pr := db.mustPullRequest(t)
		require.True(t, pr.Merged)
		require.Equal(t, []string{task.ID}, m.take())

		p.round(ctx)
		require.Empty(t, gh.take(), "a merged pull request is no longer polled")
	})
}

// fakePollStore names testRepo#testNumber (by its URL and as an open
// pull request), the open pull requests in open to poll and the branches
// to discover, and applies no writes.
type fakePollStore struct {
	open     []store.PullRequest
	branches []store.BranchToDiscover
}

func (*fakePollStore) LinkedPullRequestURLs(context.Context) ([]string, error) {
	return []string{testURL, "https://github.com/octo-org/herd-demo/issues/1"}, nil
}

func (f *fakePollStore) OpenPullRequests(context.Context) ([]store.PullRequest, error) {
	return append([]store.PullRequest{{Repository: testRepo, Number: testNumber, State: store.PullRequestOpen}}, f.open...), nil
}

func (f *fakePollStore) BranchesToDiscover(context.Context) ([]store.BranchToDiscover, error) {
	return f.branches, nil
}

func (*fakePollStore) UpdatePullRequests(context.Context, func(*store.PullRequestTx) error) ([]string, error) {
	return nil, nil
}

// handlerTransport answers requests with a handler in memory, so that a
// synctest bubble's clock is not held up by sockets.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// runPoller runs a poller against gh every interval inside the current
// synctest bubble and returns the function that stops it.
func runPoller(t *testing.T, gh *fakeGitHub, interval time.Duration) (stop func()) {
	t.Helper()
	p, err := NewPoller(PollerConfig{
		Token: "t", Store: &fakePollStore{}, Marker: &marks{}, Interval: interval,
		Client: &http.Client{Transport: handlerTransport{gh}},
	})
	require.NoError(t, err)
	return run(t, p)
}

// run runs p inside the current synctest bubble and returns the function
// that stops it and waits for Run to return.
func run(t *testing.T, p *Poller) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

func TestPollerWaitsForTheRateLimitReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gh := newFakeGitHub(t)
		start := time.Now()
		reset := start.Add(30 * time.Second)
		gh.intercept = func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n == 1 {
				// The last request of the window still succeeds.
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(gh.bodies[pullPath])
				return true
			}
			return false
		}
		stop := runPoller(t, gh, time.Hour)
		synctest.Wait()
		reqs := gh.take()
		require.Len(t, reqs, 1, "nothing more is sent before the reset")

		time.Sleep(30 * time.Second)
		synctest.Wait()
		reqs = gh.take()
		require.Len(t, reqs, 3, "the poll goes on at the reset")
		require.False(t, reqs[0].at.Before(reset))
		stop()
	})
}

func TestPollerBacksOffAfterRateLimitAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		// answer writes the first answer, received at now.
		answer func(w http.ResponseWriter, now time.Time)
		// wait is when the next request may be sent.
		wait time.Duration
	}{
		{"403 with an exhausted limit waits for its reset", func(w http.ResponseWriter, now time.Time) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(45*time.Second).Unix(), 10))
			http.Error(w, `{"message":"API rate limit exceeded for user ID 1."}`, http.StatusForbidden)
		}, 45 * time.Second},
		{"429 with Retry-After waits that long", func(w http.ResponseWriter, _ time.Time) {
			w.Header().Set("Retry-After", "10")
			http.Error(w, `{"message":"Too many requests"}`, http.StatusTooManyRequests)
		}, 10 * time.Second},
		{"403 for a secondary rate limit waits a minute", func(w http.ResponseWriter, _ time.Time) {
			http.Error(w, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`,
				http.StatusForbidden)
		}, time.Minute},
		{"403 for missing access does not wait", func(w http.ResponseWriter, _ time.Time) {
			http.Error(w, `{"message":"Resource not accessible by personal access token"}`, http.StatusForbidden)
		}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gh := newFakeGitHub(t)
				gh.intercept = func(w http.ResponseWriter, r *http.Request, n int) bool {
					if n == 1 {
						tc.answer(w, time.Now())
						return true
					}
					return false
				}
				start := time.Now()
				stop := runPoller(t, gh, time.Second)
				synctest.Wait()
				require.Len(t, gh.take(), 1)

				time.Sleep(tc.wait - time.Millisecond)
				synctest.Wait()
				require.Empty(t, gh.take(), "no request before the wait is over")

				time.Sleep(time.Millisecond)
				synctest.Wait()
				reqs := gh.take()
				require.NotEmpty(t, reqs, "polling resumes")
				require.WithinDuration(t, start.Add(tc.wait), reqs[0].at, 0)
				stop()
			})
		})
	}
}

func TestPollerRunEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gh := newFakeGitHub(t)
		stop := runPoller(t, gh, time.Minute)
		synctest.Wait()
		require.Len(t, gh.take(), 4, "a round at once")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Len(t, gh.take(), 4, "and one per interval")
		stop()
	})
}

func TestPollerPollsAtMostConcurrencyPullRequestsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gh := newFakeGitHub(t)
		var mu sync.Mutex
		inFlight, most := 0, 0
		gh.intercept = func(w http.ResponseWriter, r *http.Request, _ int) bool {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			time.Sleep(time.Second)
			mu.Lock()
			inFlight--
			mu.Unlock()
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return true
		}
		st := &fakePollStore{}
		for n := range 9 {
			st.open = append(st.open, store.PullRequest{Repository: testRepo, Number: 100 + n, State: store.PullRequestOpen})
		}
		p, err := NewPoller(PollerConfig{
			Token: "t", Store: st, Marker: &marks{}, Concurrency: 3, Client: &http.Client{Transport: handlerTransport{gh}},
		})
		require.NoError(t, err)
		start := time.Now()
		p.round(t.Context())
		require.Len(t, gh.take(), 10)
		require.Equal(t, 3, most)
		require.Equal(t, 4*time.Second, time.Since(start), "ten polls of a second, three at a time")
	})
}

func TestNewPollerValidatesItsConfig(t *testing.T) {
	ok := PollerConfig{Token: "t", Store: &fakePollStore{}, Marker: &marks{}}
	for name, edit := range map[string]func(*PollerConfig){
		"no token":          func(c *PollerConfig) { c.Token = "" },
		"no store":          func(c *PollerConfig) { c.Store = nil },
		"no marker":         func(c *PollerConfig) { c.Marker = nil },
		"negative interval": func(c *PollerConfig) { c.Interval = -time.Second },
		"base URL not http": func(c *PollerConfig) { c.BaseURL = "ftp://example.com" },
	} {
		cfg := ok
		edit(&cfg)
		_, err := NewPoller(cfg)
		require.Error(t, err, name)
	}
	_, err := NewPoller(ok)
	require.NoError(t, err)
}
