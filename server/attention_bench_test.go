package server_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/push"
	"github.com/herd-dev/herd/server/push/pushtest"
	"github.com/herd-dev/herd/shared"
)

// BenchmarkPushLatencyUnderLoad measures how long after an agent's
// permission request is stored its push leaves herd (the request to the
// push service is written), while 50 other sessions stream text
// (/scenario stream, one chunk every 10 ms each). Each iteration is one
// request, answered so that the next can come; streams=0 is the same
// without the load; two devices are
// subscribed, so each request makes two pushes. It reports the p50 and
// p99 of those latencies and, separately, from the request's storing to
// the push service's receipt of the encrypted push.
func BenchmarkPushLatencyUnderLoad(b *testing.B) {
	for _, streams := range []int{0, 50} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) { benchmarkPushLatency(b, streams) })
	}
}

func benchmarkPushLatency(b *testing.B, streams int) {
	ps := pushtest.New(b)
	var mu sync.Mutex
	var latencies []time.Duration
	srv := MustStart(b, func(_ *server.Config, o *server.Options) {
		o.PushResult = func(r push.Result) {
			if r.Kind == shared.PushPermission && r.Outcome == push.OutcomeSent {
				mu.Lock()
				latencies = append(latencies, r.Latency)
				mu.Unlock()
			}
		}
	})
	c := MustDial(b, srv, nil).patient()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	var streaming []any
	for i := range streams {
		task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": fmt.Sprintf("stream %d", i)})
		c.call("session.create", map[string]any{"task_id": task["id"], "prompt": "/scenario stream 1000000 10"})
		streaming = append(streaming, task["id"])
	}
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "asks"})
	session := c.call("session.create", map[string]any{"task_id": task["id"]})
	c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	awaitState(b, c, session["id"], "WAITING_FOR_INPUT")
	devices := []device{subscribe(b, c, ps, ws["id"], "Phone", nil), subscribe(b, c, ps, ws["id"], "Laptop", nil)}
	var arrivals []time.Duration

	b.ResetTimer()
	for i := range b.N {
		c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": fmt.Sprintf("ask-%d", i), "content": "/scenario permission"})
		request := awaitRequest(b, c, "permission_request")
		created, err := time.Parse(time.RFC3339Nano, request["created_at"].(string))
		require.NoError(b, err)
		for _, d := range devices {
			// Each request makes a permission push and then, once
			// answered, a close.
			msgs := d.pushes(b, 2*i+1)
			require.Equal(b, "permission", msgs[2*i]["kind"])
			arrivals = append(arrivals, msgs[2*i]["\x00at"].(time.Time).Sub(created))
		}
		c.call("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": "allow"})
		require.Equal(b, "end_turn", awaitSettled(b, c))
		for _, d := range devices {
			require.Equal(b, "close", d.pushes(b, 2*i+2)[2*i+1]["kind"])
		}
	}
	b.StopTimer()
	for _, id := range streaming {
		sessions := c.call("session.list", map[string]any{"task_id": id})["sessions"].([]any)
		require.Equal(b, "RUNNING", sessions[0].(map[string]any)["state"], "the load ran throughout")
	}
	// A push's outcome is reported once the push service has answered,
	// which can be after the service recorded the push.
	require.Eventually(b, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(latencies) >= 2*b.N
	}, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Len(b, latencies, 2*b.N, "every request pushed to both devices")
	b.ReportMetric(quantile(latencies, 0.50), "leave-p50-ms")
	b.ReportMetric(quantile(latencies, 0.99), "leave-p99-ms")
	b.ReportMetric(quantile(arrivals, 0.50), "arrive-p50-ms")
	b.ReportMetric(quantile(arrivals, 0.99), "arrive-p99-ms")
}

// quantile is the q-quantile of ds in milliseconds (nearest rank).
func quantile(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return float64(s[max(0, min(i, len(s)-1))]) / float64(time.Millisecond)
}
