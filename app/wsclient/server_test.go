package wsclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/shared"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait is how long a test waits for something that should happen promptly.
const wait = 5 * time.Second

// serveFunc handles one accepted server-side connection; the connection is
// closed when it returns.
type serveFunc func(ctx context.Context, c *websocket.Conn)

// startServer runs a real WebSocket server that hands every connection to
// serve, and returns its ws:// URL. The server stops at the end of the test,
// after the clients the test registered later.
func startServer(t *testing.T, serve serveFunc) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		serve(r.Context(), c)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// startClient connects a client with test-friendly defaults to url and
// closes it at the end of the test.
func startClient(t *testing.T, url string, opts Options) *Client {
	t.Helper()
	opts.URL = url
	if opts.MinBackoff == 0 {
		opts.MinBackoff = 5 * time.Millisecond
		opts.MaxBackoff = 20 * time.Millisecond
	}
	c := New(opts)
	t.Cleanup(c.Close)
	c.Start()
	return c
}

// readRequest reads one request from the server side of a connection.
func readRequest(ctx context.Context, c *websocket.Conn) (shared.Envelope, error) {
	_, data, err := c.Read(ctx)
	if err != nil {
		return shared.Envelope{}, err
	}
	return shared.DecodeRequest(data)
}

// send writes an envelope from the server side.
func send(ctx context.Context, c *websocket.Conn, env shared.Envelope) error {
	data, err := json.Marshal(env)
	if err != nil {
		return err
	}
	return c.Write(ctx, websocket.MessageText, data)
}

// respond answers req with payload.
func respond(ctx context.Context, c *websocket.Conn, req shared.Envelope, payload any) error {
	env, err := shared.NewResponse(req.ID, req.Action, payload, time.Now())
	if err != nil {
		return err
	}
	return send(ctx, c, env)
}

// echoServer answers every request with its own payload.
func echoServer(ctx context.Context, c *websocket.Conn) {
	for {
		req, err := readRequest(ctx, c)
		if err != nil {
			return
		}
		if respond(ctx, c, req, req.Payload) != nil {
			return
		}
	}
}

// connected waits until the client has an open connection.
func connected(t *testing.T, c *Client) {
	t.Helper()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.cur != nil
	}, wait, time.Millisecond, "client never connected")
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
