package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkReasoningBurstEndToEnd sends the 30,000-chunk reasoning burst
// through the whole pipeline (mock agent → ACP → coalescer → database →
// WebSocket), checks the stored text byte for byte, and checks that the
// frames the client received add up to the same text. It reports chunks/s,
// how many updates of the reasoning message reached the client against the
// number of 100 ms windows the burst spanned (at most one per window, plus
// the opening frame and the final state), and the bytes on the wire of the
// frames about the message per byte of reasoning.
func BenchmarkReasoningBurstEndToEnd(b *testing.B) {
	const chunks = 30000
	var want strings.Builder
	for i := range chunks {
		fmt.Fprintf(&want, "%d ", i)
	}
	srv := MustStart(b, nil)
	c := MustDial(b, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "burst"})
	var totalUpdates, totalWindows, totalWire float64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		session := c.call("session.create", map[string]any{"task_id": task["id"]})
		c.call("session.subscribe", map[string]any{"session_id": session["id"]})
		for {
			n := c.awaitNotification("session.state_changed")
			if n["state"] == "WAITING_FOR_INPUT" {
				break
			}
		}
		b.StartTimer()
		start := time.Now()
		c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": fmt.Sprintf("burst-%d", i), "content": fmt.Sprintf("/scenario reasoning-burst %d", chunks)})
		thinking, updates, wire, have := "", 0, 0, ""
		// held applies a frame's state of the message to what the client
		// holds, as app/state does.
		held := func(p map[string]any) {
			content, _ := p["content"].(string)
			from, ok := p["append_from"].(float64)
			if !ok {
				have = content
				return
			}
			require.LessOrEqual(b, int(from), len(have), "a delta starts within what the client holds")
			have = have[:int(from)] + content
		}
		for {
			f := c.next()
			if f["type"] != "notification" {
				continue
			}
			p, _ := f["payload"].(map[string]any)
			switch f["action"] {
			case "session.message.added":
				if p["type"] == "thinking" {
					thinking = p["id"].(string)
					wire += f[frameBytes].(int)
					held(p)
				}
			case "session.message.updated":
				if p["id"] == thinking {
					updates++
					wire += f[frameBytes].(int)
					held(p)
				}
			}
			if f["action"] == "session.turn.settled" {
				break
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		msg := c.call("message.get", map[string]any{"session_id": session["id"], "message_id": thinking})
		require.Equal(b, want.String(), msg["content"], "the reasoning is stored byte-exact")
		require.Equal(b, want.String(), have, "the frames the client received add up to the reasoning")
		windows := float64(elapsed/(100*time.Millisecond)) + 1
		require.LessOrEqual(b, float64(updates), windows+1, "at most one update per window plus the final state")
		totalUpdates += float64(updates)
		totalWindows += windows
		totalWire += float64(wire) / float64(want.Len())
		b.ReportMetric(chunks/elapsed.Seconds(), "chunks/s")
		c.call("session.unsubscribe", map[string]any{"session_id": session["id"]})
		b.StartTimer()
	}
	b.ReportMetric(totalUpdates/float64(b.N), "updates/op")
	b.ReportMetric(totalWindows/float64(b.N), "windows/op")
	b.ReportMetric(totalWire/float64(b.N), "wire-bytes/byte")
}

// BenchmarkMessageAddRoundTrip measures message.add from request to
// response on an idle server (each prompt is an echo; the next one is sent
// after its turn settles) and reports p50 and p99.
func BenchmarkMessageAddRoundTrip(b *testing.B) {
	srv := MustStart(b, nil)
	c := MustDial(b, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "rtt"})
	session := c.call("session.create", map[string]any{"task_id": task["id"]})
	c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	for {
		if c.awaitNotification("session.state_changed")["state"] == "WAITING_FOR_INPUT" {
			break
		}
	}
	var rtts []time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		reply, _ := c.awaitReply(c.send("message.add", map[string]any{"session_id": session["id"], "client_message_id": fmt.Sprintf("rtt-%d", i), "content": "ping"}))
		rtts = append(rtts, time.Since(start))
		require.Equal(b, "response", reply["type"])
		b.StopTimer()
		c.awaitNotification("session.turn.settled")
		b.StartTimer()
	}
	slices.Sort(rtts)
	b.ReportMetric(float64(rtts[len(rtts)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(rtts[len(rtts)*99/100].Microseconds())/1000, "p99-ms")
}
