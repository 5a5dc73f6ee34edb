package github

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/dbtest"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// The pull request of the payloads in testdata/.
const (
	testSecret = "It's a Secret to Everybody"
	testRepo   = "octo-org/herd-demo"
	testNumber = 42
	testURL    = "https://github.com/octo-org/herd-demo/pull/42"
	testBranch = "herd/0190a1b2-fix-login"
	testSHA    = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
)

// TestMain runs the tests with git isolated from the machine's
// configuration: the Poller's tests run git in real repositories.
func TestMain(m *testing.M) {
	cleanup, err := gittest.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "isolate git:", err)
		os.Exit(1)
	}
	code := storetest.Main(m)
	cleanup()
	os.Exit(code)
}

// forEachDialect runs fn as one subtest per database.
func forEachDialect(t *testing.T, fn func(t *testing.T, db *testDB)) {
	t.Helper()
	for _, d := range dbtest.Dialects {
		t.Run(d, func(t *testing.T) { fn(t, openDB(t, d)) })
	}
}

// testDB is a fresh database with a Store on it and a raw connection to
// it.
type testDB struct{ *dbtest.DB }

// openDB opens a testDB on a fresh database of dialect (see dbtest.Open).
func openDB(tb testing.TB, dialect string) *testDB { return &testDB{dbtest.Open(tb, dialect)} }

// task creates a task with one repository working on branch ("" for
// none yet).
func (db *testDB) task(tb testing.TB, branch string) shared.Task {
	tb.Helper()
	return db.checkout(tb, "/src/herd-demo", branch)
}

// checkout creates a task with one repository at path working on branch,
// as creating its worktree does.
func (db *testDB) checkout(tb testing.TB, path, branch string) shared.Task {
	tb.Helper()
	task, err := db.CreateTaskAs(context.Background(), store.NewTaskID(), shared.TaskCreateRequest{
		WorkspaceID: db.Workspace.ID, Title: "t", Repositories: []shared.RepositoryInput{{Path: path, BaseBranch: "main"}},
	}, []store.RepositoryCheckout{{Branch: branch}})
	require.NoError(tb, err)
	return task
}

// link links a task to a pull request explicitly.
func (db *testDB) link(tb testing.TB, taskID, url string) {
	tb.Helper()
	_, err := db.Raw.Exec("UPDATE tasks SET pull_request_url = $1 WHERE id = $2", url, taskID)
	require.NoError(tb, err)
}

// pullRequest returns the stored pull request testRepo#testNumber.
func (db *testDB) pullRequest(tb testing.TB) (pr store.PullRequest, ok bool) {
	tb.Helper()
	_, err := db.UpdatePullRequests(context.Background(), func(tx *store.PullRequestTx) error {
		var err error
		pr, ok, err = tx.PullRequest(testRepo, testNumber)
		return err
	})
	require.NoError(tb, err)
	return pr, ok
}

// mustPullRequest returns the stored pull request testRepo#testNumber or
// fails tb.
func (db *testDB) mustPullRequest(tb testing.TB) store.PullRequest {
	tb.Helper()
	pr, ok := db.pullRequest(tb)
	require.True(tb, ok, "pull request stored")
	return pr
}

// deliveries counts the recorded deliveries.
func (db *testDB) deliveries(tb testing.TB) int {
	tb.Helper()
	var n int
	require.NoError(tb, db.Raw.QueryRow("SELECT COUNT(*) FROM github_deliveries").Scan(&n))
	return n
}

// marks records the tasks marked.
type marks struct {
	mu  sync.Mutex
	ids []string
}

// Mark implements Marker.
func (m *marks) Mark(taskID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids = append(m.ids, taskID)
}

// take returns the tasks marked since the last call, sorted, each once.
func (m *marks) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.ids
	m.ids = nil
	slices.Sort(ids)
	return slices.Compact(ids)
}

// newTestWebhook returns a Webhook over db with testSecret and its marks.
func newTestWebhook(tb testing.TB, st DeliveryStore) (*Webhook, *marks) {
	tb.Helper()
	m := &marks{}
	w, err := NewWebhook(WebhookConfig{Secret: testSecret, Store: st, Marker: m})
	require.NoError(tb, err)
	return w, m
}

// fixture reads testdata/name.json and sets the fields edits names by
// dotted path ("pull_request.updated_at") to their values.
func fixture(tb testing.TB, name string, edits map[string]any) []byte {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	require.NoError(tb, err)
	if len(edits) == 0 {
		return raw
	}
	var doc map[string]any
	require.NoError(tb, json.Unmarshal(raw, &doc))
	for path, v := range edits {
		keys := strings.Split(path, ".")
		obj := doc
		for _, k := range keys[:len(keys)-1] {
			next, ok := obj[k].(map[string]any)
			require.True(tb, ok, "fixture %s has no object %s", name, k)
			obj = next
		}
		obj[keys[len(keys)-1]] = v
	}
	out, err := json.Marshal(doc)
	require.NoError(tb, err)
	return out
}

// signature is GitHub's X-Hub-Signature-256 of body under secret.
func signature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// deliver posts a delivery signed with testSecret.
func deliver(h http.Handler, event, id string, body []byte) *httptest.ResponseRecorder {
	return post(h, map[string]string{
		"X-GitHub-Event": event, "X-GitHub-Delivery": id, "X-Hub-Signature-256": signature(testSecret, body),
	}, body)
}

// post posts body with the given headers (and a JSON content type).
func post(h http.Handler, headers map[string]string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/api/github/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// requireStatus fails tb unless rec has the status code.
func requireStatus(tb testing.TB, want int, rec *httptest.ResponseRecorder) {
	tb.Helper()
	require.Equal(tb, want, rec.Code, "answer: %s", rec.Body.String())
}
