package push_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/push"
	"github.com/herd-dev/herd/server/push/pushtest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/dbtest"
	"github.com/herd-dev/herd/shared"
)

// accepting answers every push with 201 in memory, so that a benchmark
// counts herd's cost without a push service's.
type accepting struct{}

func (accepting) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody, Request: r}, nil
}

// BenchmarkSend measures a push from Send to its outcome: the payload
// encoded, encrypted for the device, signed, posted, and the device
// marked sent in SQLite. "loopback" posts to pushtest, which verifies
// and decrypts each push in the same process; "in-memory" answers
// without a network. At most outstanding pushes are unanswered at once.
// It reports the latency from Send's event to the request leaving herd.
func BenchmarkSend(b *testing.B) {
	const outstanding = 8
	for _, bc := range []struct {
		name     string
		devices  int
		loopback bool
	}{
		{"loopback/devices=1", 1, true},
		{"loopback/devices=32", 32, true},
		{"in-memory/devices=32", 32, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db := dbtest.Open(b, "sqlite")
			service := pushtest.New(b)
			public, private, err := db.VAPIDKeys(b.Context())
			require.NoError(b, err)
			service.ExpectApplicationKey(public)
			results := make(chan push.Result, outstanding)
			cfg := push.Config{
				Devices: db, VAPIDPublicKey: public, VAPIDPrivateKey: private,
				QueueLength: outstanding,
				OnResult:    func(r push.Result) { results <- r },
			}
			if !bc.loopback {
				cfg.Client = &http.Client{Transport: accepting{}}
			}
			sender, err := push.New(cfg)
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, sender.Close(context.Background())) })
			targets := make([]store.PushTarget, bc.devices)
			for i := range targets {
				sub := service.NewSubscription()
				targets[i], err = db.SavePushDevice(b.Context(), store.PushSubscription{
					WorkspaceID: db.Workspace.ID, Endpoint: sub.Endpoint, P256dh: sub.P256dh, Auth: sub.Auth,
					Preferences: shared.DefaultPushPreferences, CredentialDigest: "c", TokenDigest: "t",
				})
				require.NoError(b, err)
			}
			m := push.NewMessage(shared.PushMessage{
				Kind: shared.PushPermission, WorkspaceID: "W", TaskID: "T", SessionID: "S", PendingID: "P",
				Title: "Fix the login bug needs permission", Body: "Edit notes.txt", ToolKind: "edit",
				Actions: []shared.PushAction{{OptionID: "allow", Label: "Allow once", Kind: "allow_once"},
					{OptionID: "reject", Label: "Reject", Kind: "reject_once"}},
				URL: "/tasks/T/sessions/S", Pending: 3,
			})

			latencies := make([]time.Duration, 0, b.N)
			collect := func() {
				r := <-results
				if r.Outcome != push.OutcomeSent {
					b.Fatalf("push %s: %v", r.Outcome, r.Err)
				}
				latencies = append(latencies, r.Latency)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i >= outstanding {
					collect()
				}
				// Distinct tags: no push replaces another.
				m.Payload.Tag = fmt.Sprint("task:", i)
				if err := sender.Send(targets[i%bc.devices], m, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			for len(latencies) < b.N {
				collect()
			}
			b.StopTimer()
			slices.Sort(latencies)
			at := func(q float64) float64 { return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds()) }
			b.ReportMetric(at(0.5), "p50-µs")
			b.ReportMetric(at(0.99), "p99-µs")
		})
	}
}
