package push_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/clock/clocktest"
	"github.com/herd-dev/herd/server/push"
	"github.com/herd-dev/herd/server/push/pushtest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/dbtest"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// TestMain checks that no goroutine outlives the tests but the SQL
// drivers' own.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// waitTimeout bounds every wait of a test for something the sender does.
const waitTimeout = 10 * time.Second

// fakeClock is the sender's clock in tests: every retry it schedules is
// announced on scheduled.
type fakeClock struct {
	*clocktest.Fake
	scheduled chan time.Duration
}

func newFakeClock() *fakeClock {
	c := &fakeClock{Fake: clocktest.New(), scheduled: make(chan time.Duration, 100)}
	c.Announce(c.scheduled)
	return c
}

// nextTimer waits for the sender to schedule a retry and returns its
// delay.
func (c *fakeClock) nextTimer(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.scheduled:
		return d
	case <-time.After(waitTimeout):
		t.Fatal("no retry was scheduled")
		return 0
	}
}

// fixture is a Sender on a real store, pushing to a loopback push
// service that knows herd's VAPID key.
type fixture struct {
	t        *testing.T
	db       *dbtest.DB
	service  *pushtest.Service
	clock    *fakeClock
	registry *prometheus.Registry
	sender   *push.Sender
	results  chan push.Result
}

// newFixture starts a Sender with a fake clock; change adjusts its
// configuration first.
func newFixture(t *testing.T, change func(*push.Config)) *fixture {
	t.Helper()
	f := &fixture{
		t: t, db: dbtest.Open(t, "sqlite"), service: pushtest.New(t), clock: newFakeClock(),
		registry: prometheus.NewRegistry(), results: make(chan push.Result, 1000),
	}
	public, private, err := f.db.VAPIDKeys(t.Context())
	require.NoError(t, err)
	f.service.ExpectApplicationKey(public)
	metrics, err := push.NewMetrics(f.registry)
	require.NoError(t, err)
	cfg := push.Config{
		Devices: f.db, VAPIDPublicKey: public, VAPIDPrivateKey: private,
		Clock: f.clock, Metrics: metrics,
		OnResult: func(r push.Result) { f.results <- r },
	}
	if change != nil {
		change(&cfg)
	}
	f.sender, err = push.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.sender.Close(context.Background())) })
	return f
}

// device subscribes a new browser at the push service as a device of
// the fixture's workspace.
func (f *fixture) device() (store.PushTarget, *pushtest.Subscription) {
	f.t.Helper()
	sub := f.service.NewSubscription()
	target, err := f.db.SavePushDevice(f.t.Context(), store.PushSubscription{
		WorkspaceID: f.db.Workspace.ID, Name: "phone", Endpoint: sub.Endpoint, P256dh: sub.P256dh, Auth: sub.Auth,
		Preferences: shared.DefaultPushPreferences, CredentialDigest: "credential", TokenDigest: "token",
	})
	require.NoError(f.t, err)
	return target, sub
}

// send queues m for target, its event now.
func (f *fixture) send(target store.PushTarget, m push.Message) {
	f.t.Helper()
	require.NoError(f.t, f.sender.Send(target, m, f.clock.Now()))
}

// result waits for the next outcome the sender reports.
func (f *fixture) result() push.Result {
	f.t.Helper()
	select {
	case r := <-f.results:
		return r
	case <-time.After(waitTimeout):
		f.t.Fatal("no push outcome was reported")
		return push.Result{}
	}
}

// messages waits for n accepted messages of sub and decodes them.
func (f *fixture) messages(sub *pushtest.Subscription, n int) ([]shared.PushMessage, []pushtest.Message) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.t.Context(), waitTimeout)
	defer cancel()
	raw, err := sub.WaitMessages(ctx, n)
	require.NoError(f.t, err)
	out := make([]shared.PushMessage, len(raw))
	for i, m := range raw {
		require.NoError(f.t, json.Unmarshal(m.Plaintext, &out[i]))
	}
	return out, raw
}

// requests waits for n requests at sub's endpoint.
func (f *fixture) requests(sub *pushtest.Subscription, n int) []pushtest.Request {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.t.Context(), waitTimeout)
	defer cancel()
	got, err := sub.WaitRequests(ctx, n)
	require.NoError(f.t, err)
	return got
}

// counter reads a metric of the fixture's registry by name and label.
func (f *fixture) counter(name string, label ...string) float64 {
	f.t.Helper()
	families, err := f.registry.Gather()
	require.NoError(f.t, err)
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			if len(label) == 2 && !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == label[0] && l.GetValue() == label[1]
			}) {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
		}
	}
	return 0
}

// message returns a push of kind about task, tagged by the task.
func message(kind shared.PushKind, task, body string) push.Message {
	return push.NewMessage(shared.PushMessage{
		Kind: kind, Tag: "task:" + task, WorkspaceID: "w", TaskID: task, Body: body,
	})
}

// statuses lists the statuses of requests.
func statuses(requests []pushtest.Request) []int {
	out := make([]int, len(requests))
	for i, r := range requests {
		out[i] = r.Status
	}
	return out
}

// okStatus is what the loopback service answers a push it accepted.
const okStatus = http.StatusCreated
