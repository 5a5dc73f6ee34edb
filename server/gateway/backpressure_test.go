package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// onlyConnection waits for the gateway's one connection and returns it.
func onlyConnection(t *testing.T, g *Gateway) *conn {
	t.Helper()
	require.Eventually(t, func() bool { return len(connections(g)) == 1 }, 10*time.Second, time.Millisecond)
	return connections(g)[0]
}

// closed returns how many connections the gateway closed for reason.
func closed(t *testing.T, g *Gateway, reason string) float64 {
	t.Helper()
	return counted(t, g.metrics.closes.WithLabelValues(reason))
}

// heldBack waits until the connection's reader has stopped reading because
// n answers are outstanding.
func heldBack(t *testing.T, c *conn, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		outstanding, _ := c.out.answers()
		return outstanding == n
	}, 10*time.Second, time.Millisecond, "the reader never filled its %d slots", n)
	// A write that passed the gate just before it closed may still free a
	// slot, which the reader then fills again: the count may dip, never
	// exceed n.
	outstanding, _ := c.out.answers()
	require.LessOrEqual(t, outstanding, n, "never more than %d", n)
}

// flood is the frames of TestAFloodingClientIsSlowedDownNotClosed: pings,
// ordered requests, and frames the reader answers itself. It returns them
// with the error code each must be answered with ("" for a response).
func flood(n int, workspaceID string) (frames [][]byte, binary []bool, want []shared.Code) {
	for i := range n {
		id := fmt.Sprint("r", i)
		var frame []byte
		code := shared.Code("")
		bin := false
		switch i % 6 {
		case 0:
			frame, bin, code = []byte("binary"), true, shared.CodeBadRequest
		case 1:
			frame, code = []byte(`{"id":"`+id+`", not json`), shared.CodeBadRequest
		case 2:
			frame, code = request(id, "no.such.action", nil), shared.CodeUnknownAction
		case 3:
			frame = request(id, shared.ActionWorkspaceSubscribe, map[string]any{"workspace_id": workspaceID})
		default:
			frame = request(id, shared.ActionPing, nil)
		}
		frames, binary, want = append(frames, frame), append(binary, bin), append(want, code)
	}
	return frames, binary, want
}

// A client that pipelines more than a thousand frames (pings, ordered
// requests, and frames the reader answers itself: binary, undecodable,
// unknown actions) faster than its answers can be written is slowed down,
// never closed: the reader stops reading while MaxInFlight frames are
// unanswered on the socket, and every frame gets its answer. The writes
// stall several times over, as for a client that reads slowly.
func TestAFloodingClientIsSlowedDownNotClosed(t *testing.T) {
	const inFlight, n = 8, 1200
	g, workspace, url, gate := gatedGateway(t, func(c *Config) { c.MaxInFlight = inFlight })
	client := dial(t, url, nil)
	c := onlyConnection(t, g)
	frames, binary, want := flood(n, workspace)

	gate.hold()
	ctx := t.Context()
	sent := make(chan error, 1)
	go func() {
		for i, f := range frames {
			typ := websocket.MessageText
			if binary[i] {
				typ = websocket.MessageBinary
			}
			if err := client.Write(ctx, typ, f); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()

	answered := make(map[string]shared.Code)
	unnamed := 0
	for read := 0; read < n; read++ {
		if read%300 == 0 {
			// Stall the writes until the reader has stopped reading.
			gate.hold()
			heldBack(t, c, inFlight)
			gate.release()
		}
		_, data, err := client.Read(ctx)
		require.NoError(t, err, "answer %d", read)
		var env shared.Envelope
		require.NoError(t, json.Unmarshal(data, &env))
		code := shared.Code("")
		if env.Type == shared.TypeError {
			var e shared.Error
			require.NoError(t, json.Unmarshal(env.Payload, &e))
			code = e.Code
		}
		if env.ID == "" {
			unnamed++
			assert.Equal(t, shared.CodeBadRequest, code)
			continue
		}
		_, twice := answered[env.ID]
		require.False(t, twice, "%s answered twice", env.ID)
		answered[env.ID] = code
	}
	require.NoError(t, <-sent)

	for i, code := range want {
		id := fmt.Sprint("r", i)
		if got, ok := answered[id]; ok {
			assert.Equal(t, code, got, id)
		}
	}
	assert.Equal(t, n, len(answered)+unnamed, "every frame was answered once")
	assert.Equal(t, n/6*2, unnamed, "the binary and undecodable frames")
	for _, reason := range []string{"control_overflow", "semantic_overflow", "write_failed"} {
		assert.Zero(t, closed(t, g, reason), reason)
	}
	require.NoError(t, client.Write(ctx, websocket.MessageText, request("last", shared.ActionPing, nil)))
	_, data, err := client.Read(ctx)
	require.NoError(t, err, "the connection is still open")
	assert.Contains(t, string(data), `"id":"last"`)
}

// A client that sends requests with large answers and stops reading holds
// at most MaxInFlight answers, about MaxAnswerBytes of them, however many
// requests it sends; the write deadline then closes it and frees them.
func TestAStalledReaderOfLargeAnswersHoldsBoundedMemory(t *testing.T) {
	const inFlight, answerBytes = 4, 256 << 10
	g, workspace, url, gate := gatedGateway(t, func(c *Config) {
		c.MaxInFlight = inFlight
		c.MaxAnswerBytes = answerBytes
		c.WriteTimeout = 500 * time.Millisecond
	})
	ctx := t.Context()
	for i := range 20 {
		_, err := g.cfg.Store.CreateTask(ctx, shared.TaskCreateRequest{
			WorkspaceID: workspace, Title: fmt.Sprint("task ", i), Description: strings.Repeat("d", 8<<10),
		})
		require.NoError(t, err)
	}
	client := dial(t, url, nil)
	c := onlyConnection(t, g)

	gate.hold() // the client reads nothing from here on
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := range 200 {
			list := request(fmt.Sprint("l", i), shared.ActionTaskList, map[string]any{"workspace_id": workspace})
			if client.Write(ctx, websocket.MessageText, list) != nil {
				return // closed by the write deadline
			}
		}
	}()
	peak := 0
	for len(connections(g)) > 0 {
		outstanding, bytes := c.out.answers()
		require.LessOrEqual(t, outstanding, inFlight)
		peak = max(peak, bytes)
		time.Sleep(time.Millisecond) // sampling, not synchronisation
	}
	<-sent
	// One task.list answer is about 160 KiB: the reader stops once 256 KiB
	// wait, so at most the answers of the requests already running pile
	// on, never the 200 asked for.
	assert.Greater(t, peak, 0)
	assert.LessOrEqual(t, peak, answerBytes+inFlight*200<<10, "peak answer bytes")
	assert.Equal(t, 1.0, closed(t, g, "write_failed"), "the write deadline closed it")
	assert.Zero(t, closed(t, g, "control_overflow"))
	outstanding, bytes := c.out.answers()
	assert.Zero(t, outstanding)
	assert.Zero(t, bytes)
}

// Streaming states queued for a connection whose writes are stalled make
// way for an ordered notification that would not otherwise fit the
// connection's byte bound, oldest first and from any session: the client
// gets the ordered frame and the connection stays open.
func TestQueuedStreamingStatesMakeWayForAnOrderedFrame(t *testing.T) {
	const bound = 64 << 10
	g, workspace, url, gate := gatedGateway(t, func(c *Config) { c.MaxQueuedBytes = bound })
	client := dialFollower(t, url, workspace)
	c := onlyConnection(t, g)
	sessions := []string{"s1", "s2"}
	for _, s := range sessions {
		_, err := c.joinSession(s)
		require.NoError(t, err)
	}

	gate.hold()
	g.PublishWorkspace(workspace, shared.NotifyTaskUpdated, bigEvent(1<<10))
	require.Eventually(t, func() bool { frames, _ := c.out.queued(); return frames == 0 },
		10*time.Second, time.Millisecond, "the writer took the frame and stalled on it")
	// Six states of about 9.5 KiB fit the 64 KiB; a 20 KiB ordered frame
	// then needs the room of two.
	for i := range 3 {
		for _, s := range sessions {
			msg := shared.Message{ID: fmt.Sprint("m", i), SessionID: s, Content: strings.Repeat("x", 9<<10), Status: shared.MessageStreaming}
			g.PublishSession(s, shared.NotifySessionMessageUpdated, msg, true)
		}
	}
	g.PublishSession("s2", shared.NotifySessionStateChanged, bigEvent(20<<10), false)
	assert.Equal(t, 2.0, counted(t, g.metrics.yielded), "s1's and s2's oldest states made room")
	assert.Equal(t, 2.0, counted(t, g.metrics.evicted))
	gate.release()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	updates := 0
	for {
		_, data, err := client.Read(ctx)
		require.NoError(t, err, "the connection stays open")
		var env shared.Envelope
		require.NoError(t, json.Unmarshal(data, &env))
		if env.Action == shared.NotifySessionMessageUpdated {
			updates++
		}
		if env.Action == shared.NotifySessionStateChanged {
			break
		}
	}
	assert.LessOrEqual(t, updates, 4, "the evicted states never went out")
	assert.Zero(t, closed(t, g, "semantic_overflow"))
}
