package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// BenchmarkSummaryFanOut1000 measures how long a task's summary change
// takes to reach 1,000 connections following its workspace. Each
// iteration queues a prompt behind a running turn (or takes it out again),
// which changes queued_prompt_count; the clock runs from the message.add
// or message.queue.remove request until the last follower has the new
// summary, so it includes the projector's debounce window (25 ms). The
// followers are raw sockets that only spot the summary's frame.
func BenchmarkSummaryFanOut1000(b *testing.B) {
	const followers = 1000
	srv := MustStart(b, nil)
	c := MustDial(b, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "fan-out"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "busy"})
	session := c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "mock"})
	c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	for {
		if n := c.awaitNotification("session.state_changed"); n["state"] == "WAITING_FOR_INPUT" {
			break
		}
	}
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "hold", "content": "/scenario sleep 3600000"})

	type arrival struct {
		at     time.Time
		queued int
	}
	got := make(chan arrival, 4*followers)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	marker := []byte(`"task.status_summary.updated"`)
	for i := range followers {
		conn, _, err := websocket.Dial(ctx, "ws://"+srv.Addr()+"/ws", nil)
		require.NoError(b, err)
		sub, _ := json.Marshal(map[string]any{"id": "s", "type": "request", "action": "workspace.subscribe", "payload": map[string]any{"workspace_id": ws["id"]}})
		require.NoError(b, conn.Write(ctx, websocket.MessageText, sub))
		_, reply, err := conn.Read(ctx)
		require.NoError(b, err, "follower %d", i)
		require.Contains(b, string(reply), `"response"`)
		wg.Go(func() {
			defer conn.CloseNow()
			for {
				_, frame, err := conn.Read(ctx)
				if err != nil {
					return
				}
				if !bytes.Contains(frame, marker) {
					continue
				}
				var n struct {
					Payload struct {
						StatusSummary struct {
							Queued int `json:"queued_prompt_count"`
						} `json:"status_summary"`
					} `json:"payload"`
				}
				if json.Unmarshal(frame, &n) == nil {
					got <- arrival{at: time.Now(), queued: n.Payload.StatusSummary.Queued}
				}
			}
		})
	}

	var last, first []time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if i%2 == 0 {
			c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": fmt.Sprint("q-", i), "content": "later"})
		} else {
			queue := c.call("message.queue.get", map[string]any{"session_id": session["id"]})["queue"].([]any)
			require.Len(b, queue, 1)
			c.call("message.queue.remove", map[string]any{"session_id": session["id"], "queue_id": queue[0].(map[string]any)["id"]})
		}
		want := 1 - i%2
		var arrivals []time.Duration
		for len(arrivals) < followers {
			select {
			case a := <-got:
				if a.queued == want {
					arrivals = append(arrivals, a.at.Sub(start))
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("only %d of %d followers got the summary", len(arrivals), followers)
			}
		}
		slices.Sort(arrivals)
		first, last = append(first, arrivals[0]), append(last, arrivals[len(arrivals)-1])
	}
	b.StopTimer()
	slices.Sort(last)
	slices.Sort(first)
	pct := func(d []time.Duration, p float64) float64 {
		return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(first, 0.5), "first-p50-ms")
	b.ReportMetric(pct(last, 0.5), "all-p50-ms")
	b.ReportMetric(pct(last, 0.99), "all-p99-ms")
}
