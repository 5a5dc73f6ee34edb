package gateway

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
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
	return serveGateway(t, mutate, nil)
}

// gatedGateway is lanesGateway whose server-side sockets write through a
// gate the test holds and releases.
func gatedGateway(t *testing.T, mutate func(*Config)) (*Gateway, string, string, *writeGate) {
	t.Helper()
	gate := newWriteGate()
	g, workspace, url := serveGateway(t, mutate, gate)
	return g, workspace, url, gate
}

func serveGateway(t *testing.T, mutate func(*Config), gate *writeGate) (*Gateway, string, string) {
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
	srv := httptest.NewUnstartedServer(g)
	if gate != nil {
		srv.Listener = gatedListener{Listener: srv.Listener, gate: gate}
	}
	srv.Start()
	t.Cleanup(func() {
		if gate != nil {
			gate.release()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		srv.Close()
	})
	return g, ws.ID, "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}

// writeGate stalls the server's socket writes while it is held, the way a
// client that stops reading stalls them once the kernel's buffers are
// full, but exactly when the test says.
type writeGate struct {
	mu   sync.Mutex
	open chan struct{} // guarded by mu; closed while writes may pass
}

func newWriteGate() *writeGate {
	g := &writeGate{open: make(chan struct{})}
	close(g.open)
	return g
}

// hold stalls writes from now on.
func (g *writeGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

// release lets writes pass again.
func (g *writeGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// passage returns the channel that is closed while writes may pass.
func (g *writeGate) passage() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// gatedListener accepts connections whose writes pass through gate.
type gatedListener struct {
	net.Listener
	gate *writeGate
}

func (l gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, gate: l.gate, closed: make(chan struct{})}, nil
}

// gatedConn is a server-side socket whose writes wait for its gate; closing
// it (as a write deadline does) ends a waiting write.
type gatedConn struct {
	net.Conn
	gate      *writeGate
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *gatedConn) Write(p []byte) (int, error) {
	select {
	case <-c.gate.passage():
	case <-c.closed:
		return 0, net.ErrClosed
	}
	return c.Conn.Write(p)
}

func (c *gatedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// dial opens a connection to the gateway.
func dial(t *testing.T, url string, opts *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, opts)
	require.NoError(t, err)
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// request encodes a request envelope.
func request(id, action string, payload any) []byte {
	env := map[string]any{"id": id, "type": "request", "action": action}
	if payload != nil {
		env["payload"] = payload
	}
	frame, _ := json.Marshal(env)
	return frame
}

// dialFollower opens a connection following the workspace and returns it
// once the subscription is answered; the test then decides when it reads.
func dialFollower(t *testing.T, url, workspaceID string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, url, nil)
	require.NoError(t, c.Write(ctx, websocket.MessageText, request("1", "workspace.subscribe", map[string]any{"workspace_id": workspaceID})))
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
