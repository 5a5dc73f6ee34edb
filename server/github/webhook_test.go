package github

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
)

func TestSignedPullRequestOpenedIsStoredAndItsTaskMarked(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, m := newTestWebhook(t, db.Store)
		task := db.task(t, testBranch)

		rec := deliver(w, "pull_request", "d-1", fixture(t, "pull_request_opened", nil))
		requireStatus(t, http.StatusOK, rec)
		require.Equal(t, "applied\n", rec.Body.String())

		require.Equal(t, store.PullRequest{
			TaskID: task.ID, Repository: testRepo, Number: testNumber, URL: testURL, HeadBranch: testBranch,
			HeadSHA: testSHA, State: store.PullRequestOpen, UpdatedAt: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC),
		}, db.mustPullRequest(t))
		require.Equal(t, []string{task.ID}, m.take())
		require.Equal(t, 1, db.deliveries(t))
	})
}

func TestRejectedDeliveriesStoreNothing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, m := newTestWebhook(t, db.Store)
		db.task(t, testBranch)
		body := fixture(t, "pull_request_opened", nil)
		signed := signature(testSecret, body)

		for _, tc := range []struct {
			name    string
			method  string
			headers map[string]string
			body    []byte
			want    int
		}{
			{"wrong signature", http.MethodPost, map[string]string{
				"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": signature("guess", body),
			}, body, http.StatusUnauthorized},
			{"missing signature", http.MethodPost, map[string]string{
				"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1",
			}, body, http.StatusUnauthorized},
			{"SHA-1 signature only", http.MethodPost, map[string]string{
				"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1", "X-Hub-Signature": "sha1=" + strings.Repeat("0", 40),
			}, body, http.StatusUnauthorized},
			{"signature of another body", http.MethodPost, map[string]string{
				"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": signed,
			}, append(body, ' '), http.StatusUnauthorized},
			{"missing delivery id", http.MethodPost, map[string]string{
				"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": signed,
			}, body, http.StatusBadRequest},
			{"missing event", http.MethodPost, map[string]string{
				"X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": signed,
			}, body, http.StatusBadRequest},
			{"malformed JSON", http.MethodPost, map[string]string{
				"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": signature(testSecret, []byte("{")),
			}, []byte("{"), http.StatusBadRequest},
			{"pull request without number", http.MethodPost, map[string]string{
				"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1",
				"X-Hub-Signature-256": signature(testSecret, []byte(`{"pull_request":{},"repository":{"full_name":"o/r"}}`)),
			}, []byte(`{"pull_request":{},"repository":{"full_name":"o/r"}}`), http.StatusBadRequest},
			{"GET", http.MethodGet, map[string]string{
				"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": signed,
			}, body, http.StatusMethodNotAllowed},
		} {
			r := httptest.NewRequest(tc.method, "/api/github/webhook", bytes.NewReader(tc.body))
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			w.ServeHTTP(rec, r)
			require.Equal(t, tc.want, rec.Code, "%s: %s", tc.name, rec.Body.String())
			_, stored := db.pullRequest(t)
			require.False(t, stored, tc.name)
			require.Zero(t, db.deliveries(t), tc.name)
			require.Empty(t, m.take(), tc.name)
		}
	})
}

func TestOversizeBodyIsRefusedUnread(t *testing.T) {
	w, m := newTestWebhook(t, failingStore{})
	for name, length := range map[string]int64{"declared length": MaxPayloadBytes + 1, "unknown length": -1} {
		body := make([]byte, MaxPayloadBytes+1)
		r := httptest.NewRequest(http.MethodPost, "/api/github/webhook", bytes.NewReader(body))
		r.ContentLength = length
		r.Header.Set("X-GitHub-Event", "pull_request")
		r.Header.Set("X-GitHub-Delivery", "d-1")
		r.Header.Set("X-Hub-Signature-256", signature(testSecret, body))
		rec := httptest.NewRecorder()
		w.ServeHTTP(rec, r)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, name)
		require.Empty(t, m.take(), name)
	}
}

func TestMalformedJSONIsAnsweredWithTheReason(t *testing.T) {
	w, _ := newTestWebhook(t, failingStore{})
	rec := deliver(w, "check_suite", "d-1", []byte(`{"check_suite": [`))
	requireStatus(t, http.StatusBadRequest, rec)
	require.Contains(t, rec.Body.String(), "check_suite payload is not valid JSON")
}

func TestGETIsRefusedWithAllow(t *testing.T) {
	w, _ := newTestWebhook(t, failingStore{})
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/github/webhook", nil))
	requireStatus(t, http.StatusMethodNotAllowed, rec)
	require.Equal(t, http.MethodPost, rec.Header().Get("Allow"))
}

func TestReplayedDeliveryIsAppliedOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, m := newTestWebhook(t, db.Store)
		task := db.task(t, testBranch)
		requireStatus(t, http.StatusOK, deliver(w, "pull_request", "d-1", fixture(t, "pull_request_opened", nil)))
		require.Equal(t, []string{task.ID}, m.take())

		// A replay of the same id is not applied, whatever it carries.
		rec := deliver(w, "pull_request", "d-1", fixture(t, "pull_request_closed_merged", nil))
		requireStatus(t, http.StatusOK, rec)
		require.Equal(t, "already delivered\n", rec.Body.String())
		require.Equal(t, store.PullRequestOpen, db.mustPullRequest(t).State)
		require.Empty(t, m.take())
		require.Equal(t, 1, db.deliveries(t))
	})
}

func TestUnknownEventIsAcceptedAndIgnored(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, m := newTestWebhook(t, db.Store)
		rec := deliver(w, "issues", "d-1", fixture(t, "issues_opened", nil))
		requireStatus(t, http.StatusAccepted, rec)
		require.Equal(t, "event issues ignored\n", rec.Body.String())
		require.Zero(t, db.deliveries(t), "an ignored event is not recorded")
		require.Empty(t, m.take())
	})
}

func TestPingIsAnswered(t *testing.T) {
	w, _ := newTestWebhook(t, failingStore{})
	rec := deliver(w, "ping", "d-1", fixture(t, "ping", nil))
	requireStatus(t, http.StatusOK, rec)
	require.Equal(t, "pong\n", rec.Body.String())
}

func TestAnActionHerdDoesNotTrackChangesNothing(t *testing.T) {
	w, m := newTestWebhook(t, failingStore{})
	rec := deliver(w, "check_suite", "d-1", fixture(t, "check_suite_completed", map[string]any{"check_suite.conclusion": nil}))
	requireStatus(t, http.StatusOK, rec)
	require.Equal(t, "nothing to change\n", rec.Body.String())
	require.Empty(t, m.take())
}

func TestFormEncodedDeliveryIsRead(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, _ := newTestWebhook(t, db.Store)
		task := db.task(t, testBranch)
		body := []byte(url.Values{"payload": {string(fixture(t, "pull_request_opened", nil))}}.Encode())
		rec := post(w, map[string]string{
			"Content-Type":   "application/x-www-form-urlencoded",
			"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": signature(testSecret, body),
		}, body)
		requireStatus(t, http.StatusOK, rec)
		require.Equal(t, task.ID, db.mustPullRequest(t).TaskID)
	})
}

func TestAStoreFailureAsksForRedelivery(t *testing.T) {
	w, m := newTestWebhook(t, failingStore{})
	rec := deliver(w, "pull_request", "d-1", fixture(t, "pull_request_opened", nil))
	requireStatus(t, http.StatusInternalServerError, rec)
	require.Contains(t, rec.Body.String(), "redeliver")
	require.Empty(t, m.take())
}

func TestNewWebhookRequiresASecret(t *testing.T) {
	_, err := NewWebhook(WebhookConfig{Store: failingStore{}, Marker: &marks{}})
	require.ErrorContains(t, err, "secret is required")
}

func TestDeliveriesArePrunedHourly(t *testing.T) {
	st := &pruneCounter{}
	w, _ := newTestWebhook(t, st)
	clock := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	w.now = func() time.Time { return clock }
	body := fixture(t, "status", nil)
	for i, step := range []time.Duration{0, 30 * time.Minute, 30 * time.Minute, 10 * time.Minute} {
		clock = clock.Add(step)
		requireStatus(t, http.StatusOK, deliver(w, "status", "d-"+string(rune('a'+i)), body))
	}
	require.Equal(t, []time.Time{
		time.Date(2026, 7, 25, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 7, 25, 13, 0, 0, 0, time.UTC),
	}, st.before, "pruned at the first delivery and an hour later, a week back")
}

// failingStore fails every delivery.
type failingStore struct{}

func (failingStore) ApplyDelivery(context.Context, string, string, func(*store.PullRequestTx) error) (bool, []string, error) {
	return false, nil, errors.New("database unavailable")
}

func (failingStore) PruneDeliveries(context.Context, time.Time) (int64, error) { return 0, nil }

// pruneCounter accepts every delivery without applying it and records
// each prune.
type pruneCounter struct {
	before []time.Time
}

func (*pruneCounter) ApplyDelivery(context.Context, string, string, func(*store.PullRequestTx) error) (bool, []string, error) {
	return true, nil, nil
}

func (p *pruneCounter) PruneDeliveries(_ context.Context, before time.Time) (int64, error) {
	p.before = append(p.before, before)
	return 0, nil
}
