package gateway

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The SQLite driver keeps a package-level helper alive.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
	)
}

// noProfiles lists no agent profiles.
type noProfiles struct{}

func (noProfiles) ListProfiles(context.Context) ([]shared.AgentProfile, error) { return nil, nil }

// lanesGateway serves a gateway over a real SQLite store with a workspace,
// and returns it with the workspace id and the socket URL.
func lanesGateway(t *testing.T, mutate func(*Config)) (*Gateway, string, string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ws, err := st.CreateWorkspace(ctx, "lanes")
	require.NoError(t, err)
	cfg := Config{Store: st, Profiles: noProfiles{}}
	if mutate != nil {
		mutate(&cfg)
	}
	g, err := New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		srv.Close()
	})
	return g, ws.ID, "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}

// dialFollower opens a connection following the workspace and returns it
// once the subscription is answered; the test then decides when it reads.
func dialFollower(t *testing.T, url, workspaceID string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	require.NoError(t, err)
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	req, _ := json.Marshal(map[string]any{"id": "1", "type": "request", "action": "workspace.subscribe", "payload": map[string]any{"workspace_id": workspaceID}})
	require.NoError(t, c.Write(ctx, websocket.MessageText, req))
	_, reply, err := c.Read(ctx)
	require.NoError(t, err)
	require.Contains(t, string(reply), `"response"`)
	return c
}

// readUntilClosed reads what the server sent and returns its close status.
func readUntilClosed(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// connections returns the gateway's open connections.
func connections(g *Gateway) []*conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*conn, 0, len(g.conns))
	for c := range g.conns {
		out = append(out, c)
	}
	return out
}

// counted returns a counter's value.
func counted(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}

// bigEvent is a workspace notification payload of about n bytes.
func bigEvent(n int) map[string]any { return map[string]any{"filler": strings.Repeat("x", n)} }

// A follower that stops reading fills its socket, then its queue: the
// semantic bound closes it with 1013 (it reconnects and reconciles), and
// what it had queued is freed.
func TestSemanticOverflowClosesTheConnectionAndFreesItsQueue(t *testing.T) {
	g, workspace, url := lanesGateway(t, func(c *Config) { c.SemanticCap = 8 })
	stalled := dialFollower(t, url, workspace)
	require.Len(t, connections(g), 1)
	c := connections(g)[0]

	for i := 0; counted(t, g.metrics.closes.WithLabelValues("semantic_overflow")) == 0; i++ {
		require.Less(t, i, 10000, "the stalled follower was never closed")
		g.PublishWorkspace(workspace, shared.NotifyTaskUpdated, bigEvent(64<<10))
	}
	require.Equal(t, websocket.StatusTryAgainLater, readUntilClosed(t, stalled))
	require.Eventually(t, func() bool { return len(connections(g)) == 0 }, 10*time.Second, 10*time.Millisecond)
	frames, bytes := c.out.queued()
	require.Zero(t, frames)
	require.Zero(t, bytes)
}

// Responses never wait behind notifications, but a client that reads
// nothing cannot hold them forever: when the control lane is full the
// connection closes with 1013.
func TestControlOverflowClosesTheConnection(t *testing.T) {
	g, workspace, url := lanesGateway(t, func(c *Config) { c.ControlCap = 2; c.MaxInFlight = 64 })
	client := dialFollower(t, url, workspace)
	c := connections(g)[0]
	// One frame larger than the socket's buffers blocks the writer.
	g.PublishWorkspace(workspace, shared.NotifyTaskUpdated, bigEvent(8<<20))
	ctx := context.Background()
	for i := 0; counted(t, g.metrics.closes.WithLabelValues("control_overflow")) == 0; i++ {
		require.Less(t, i, 10000, "the control lane never overflowed")
		ping, _ := json.Marshal(map[string]any{"id": "p", "type": "request", "action": "ping"})
		if client.Write(ctx, websocket.MessageText, ping) != nil {
			break
		}
		if frames, _ := c.out.queued(); frames >= 2 {
			// Both slots are taken; the next answer overflows.
			continue
		}
	}
	require.Equal(t, websocket.StatusTryAgainLater, readUntilClosed(t, client))
}

// A client that stops reading while a write is in progress is closed once
// the write deadline passes, and its queues are freed.
func TestSlowReaderIsClosedAtTheWriteDeadline(t *testing.T) {
	g, workspace, url := lanesGateway(t, func(c *Config) { c.WriteTimeout = 200 * time.Millisecond })
	dialFollower(t, url, workspace)
	c := connections(g)[0]
	g.PublishWorkspace(workspace, shared.NotifyTaskUpdated, bigEvent(8<<20))
	g.PublishWorkspace(workspace, shared.NotifyTaskUpdated, bigEvent(1<<20))
	require.Eventually(t, func() bool { return len(connections(g)) == 0 }, 10*time.Second, 10*time.Millisecond)
	frames, bytes := c.out.queued()
	require.Zero(t, frames)
	require.Zero(t, bytes)
}
