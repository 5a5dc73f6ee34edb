package gateway

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// pings returns how many keepalive pings had outcome.
func pings(t *testing.T, g *Gateway, outcome string) float64 {
	t.Helper()
	return counted(t, g.metrics.pings.WithLabelValues(outcome))
}

// readAll reads the client's frames until its connection ends, as a live
// client does (coder/websocket answers pings only while reading), and
// closes the returned channel then.
func readAll(c *websocket.Conn, frames chan<- []byte) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if frames != nil {
				frames <- data
			}
		}
	}()
	return done
}

func TestEveryConnectionIsPingedAndKeptWhileItAnswers(t *testing.T) {
	g, _, url := lanesGateway(t, func(c *Config) { c.PingInterval = 5 * time.Millisecond })
	pinged := make(chan struct{}, 1)
	client := dial(t, url, &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool {
		select {
		case pinged <- struct{}{}:
		default:
		}
		return true
	}})
	readAll(client, nil)
	for range 3 {
		receive(t, pinged, "a ping")
	}
	require.Eventually(t, func() bool { return pings(t, g, "pong") >= 2 }, 10*time.Second, time.Millisecond)
	assert.Len(t, connections(g), 1)
	assert.Zero(t, closed(t, g, "ping_timeout"))
}

// A peer that no longer answers, such as a phone that lost its network, is
// closed once a ping goes unanswered, though nothing needed writing to it.
func TestAnUnansweredPingClosesTheConnection(t *testing.T) {
	g, _, url := lanesGateway(t, func(c *Config) {
		c.PingInterval = 5 * time.Millisecond
		c.PingTimeout = 50 * time.Millisecond
	})
	client := dial(t, url, &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool { return false }})
	receive(t, readAll(client, nil), "the server closing the connection")
	require.Eventually(t, func() bool { return len(connections(g)) == 0 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, 1.0, closed(t, g, "ping_timeout"))
	assert.Equal(t, 1.0, pings(t, g, "timeout"))
}

// blockingSummaries serves error.dismiss only when the test lets it.
type blockingSummaries struct {
	release chan struct{}
	once    sync.Once
}

func (*blockingSummaries) Mark(string) {}

func (b *blockingSummaries) Dismiss(ctx context.Context, _, _ string) error {
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blockingSummaries) let() { b.once.Do(func() { close(b.release) }) }

// A client whose pong waits unread because the server's reader is held
// back (here by a slow request filling its one slot) is alive: the
// server tries again later instead of closing it.
func TestAReaderHeldBackIsNotTakenForADeadPeer(t *testing.T) {
	summaries := &blockingSummaries{release: make(chan struct{})}
	g, _, url := lanesGateway(t, func(c *Config) {
		c.Summaries = summaries
		c.MaxInFlight = 1
		// The first ping (80 ms at the soonest) comes after the two
		// requests below hold the reader back; until then the client's
		// pongs are read at once, well within the timeout.
		c.PingInterval = 100 * time.Millisecond
		c.PingTimeout = 40 * time.Millisecond
	})
	t.Cleanup(summaries.let)
	client := dial(t, url, nil)
	frames := make(chan []byte, 2)
	readAll(client, frames)
	ctx := t.Context()
	require.NoError(t, client.Write(ctx, websocket.MessageText,
		request("slow", shared.ActionErrorDismiss, map[string]any{"task_id": "t1", "stamp": "x"})))
	require.NoError(t, client.Write(ctx, websocket.MessageText, request("p", shared.ActionPing, nil)))

	require.Eventually(t, func() bool { return pings(t, g, "held") >= 3 }, 10*time.Second, time.Millisecond,
		"pings went unanswered while the reader waited")
	summaries.let()
	assert.Contains(t, string(receive(t, frames, "the slow answer")), `"id":"slow"`)
	assert.Contains(t, string(receive(t, frames, "the ping's answer")), `"id":"p"`)
	assert.Zero(t, closed(t, g, "ping_timeout"))
	assert.Len(t, connections(g), 1)
}

func TestSilenceNeedsAWaitingReaderAndNoStuckWrite(t *testing.T) {
	tests := []struct {
		name              string
		reads, writes     uint64 // when the ping was sent
		readsAt, writesAt uint64 // when it timed out
		silent            bool
	}{
		{"reader waiting in one read, writer idle", 3, 2, 3, 2, true},
		{"reader waiting in one read, writer wrote meanwhile", 3, 2, 3, 6, true},
		{"reader read a frame", 3, 2, 5, 2, false},
		{"reader held back outside a read", 4, 2, 4, 2, false},
		{"writer stuck in one write", 3, 1, 3, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c conn
			c.reads.Store(tt.readsAt)
			c.writes.Store(tt.writesAt)
			assert.Equal(t, tt.silent, c.silentSince(tt.reads, tt.writes))
		})
	}
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
