package server_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
)

// TestMain runs the tests with git isolated from the machine's
// configuration and checks that no goroutine outlives them. The built-in
// mock profile of the servers they start runs this test binary as the mock
// agent (mocktest).
func TestMain(m *testing.M) {
	mocktest.RunIfChild()
	cleanGit, err := gittest.Isolate()
	if err != nil {
		panic(err)
	}
	code := m.Run()
	if code == 0 {
		err := goleak.Find(
			// The SQLite driver and pgx keep package-level helpers alive.
			goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
			goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"),
		)
		if err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	cleanGit()
	os.Exit(code)
}

// MustStart starts a server on a loopback port with a fresh SQLite
// database and shuts it down when the test ends.
func MustStart(tb testing.TB, mutate func(*server.Config, *server.Options)) *server.Server {
	tb.Helper()
	cfg := server.Config{Addr: "127.0.0.1:0", DataDir: tb.TempDir(), Demo: false}
	opts := server.Options{Version: "test", MockAgent: mocktest.Profile(), PushLoopbackHTTP: true}
	if mutate != nil {
		mutate(&cfg, &opts)
	}
	srv, err := server.New(cfg, opts)
	require.NoError(tb, err)
	require.NoError(tb, srv.Start(context.Background()))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(tb, srv.Shutdown(ctx))
	})
	return srv
}

// wsClient is a protocol client built only from the protocol's text: JSON
// maps, no shared types.
type wsClient struct {
	tb     testing.TB
	conn   *websocket.Conn
	nextID atomic.Int64
	frames chan map[string]any
	closed chan error
	// backlog holds frames read while waiting for a reply, for the waits
	// that come after; one test goroutine uses a client at a time.
	backlog []map[string]any
	// wait bounds the wait for one frame; zero means 10 s.
	wait time.Duration
}

// patient makes c wait up to 90 s for a frame, for real agents, whose
// start and model round trips take seconds on a loaded machine.
func (c *wsClient) patient() *wsClient {
	c.wait = 90 * time.Second
	return c
}

// MustDial opens a WebSocket to the server and starts reading frames.
func MustDial(tb testing.TB, srv *server.Server, header http.Header) *wsClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://"+srv.Addr()+"/ws", &websocket.DialOptions{HTTPHeader: header})
	require.NoError(tb, err)
	conn.SetReadLimit(64 << 20)
	c := &wsClient{tb: tb, conn: conn, frames: make(chan map[string]any, 1024), closed: make(chan error, 1)}
	go c.readLoop()
	tb.Cleanup(func() { conn.CloseNow() })
	return c
}

// frameBytes is the key under which readLoop records a frame's size on the
// wire in its decoded map; no server frame has a field of that name.
const frameBytes = "\x00bytes"

func (c *wsClient) readLoop() {
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			c.closed <- err
			close(c.frames)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			c.closed <- fmt.Errorf("server sent invalid JSON %q: %w", data, err)
			close(c.frames)
			return
		}
		m[frameBytes] = len(data)
		c.frames <- m
	}
}

// sendRaw writes one text frame as is.
func (c *wsClient) sendRaw(frame string) {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(c.tb, c.conn.Write(ctx, websocket.MessageText, []byte(frame)))
}

// send writes a request and returns its id.
func (c *wsClient) send(action string, payload any) string {
	c.tb.Helper()
	id := fmt.Sprintf("r-%d", c.nextID.Add(1))
	b, err := json.Marshal(map[string]any{"id": id, "type": "request", "action": action, "payload": payload})
	require.NoError(c.tb, err)
	c.sendRaw(string(b))
	return id
}

// next returns the next frame (the backlog first), failing the test after
// a generous deadline.
func (c *wsClient) next() map[string]any {
	c.tb.Helper()
	if len(c.backlog) > 0 {
		f := c.backlog[0]
		c.backlog = c.backlog[1:]
		return f
	}
	return c.read()
}

// read returns the next frame from the socket.
func (c *wsClient) read() map[string]any {
	c.tb.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.tb.Fatalf("connection closed: %v", <-c.closed)
		}
		return f
	case <-time.After(cmp.Or(c.wait, 10*time.Second)):
		c.tb.Fatalf("no frame within %v", cmp.Or(c.wait, 10*time.Second))
		return nil
	}
}

// awaitReply returns the response or error answering id. Other frames
// read meanwhile are kept in the backlog; the notifications among them are
// also returned.
func (c *wsClient) awaitReply(id string) (reply map[string]any, notes []map[string]any) {
	c.tb.Helper()
	for i, f := range c.backlog {
		if f["id"] == id {
			c.backlog = append(c.backlog[:i:i], c.backlog[i+1:]...)
			return f, nil
		}
	}
	for {
		f := c.read()
		if f["id"] == id {
			return f, notes
		}
		c.backlog = append(c.backlog, f)
		if f["type"] == "notification" {
			notes = append(notes, f)
		}
	}
}

// call sends a request and requires a response payload.
func (c *wsClient) call(action string, payload any) map[string]any {
	c.tb.Helper()
	reply, _ := c.awaitReply(c.send(action, payload))
	require.Equal(c.tb, "response", reply["type"], "reply to %s: %v", action, reply)
	p, _ := reply["payload"].(map[string]any)
	return p
}

// callErr sends a request and requires an error with the given code.
func (c *wsClient) callErr(action string, payload any, code string) map[string]any {
	c.tb.Helper()
	reply, _ := c.awaitReply(c.send(action, payload))
	require.Equal(c.tb, "error", reply["type"], "reply to %s: %v", action, reply)
	p := reply["payload"].(map[string]any)
	require.Equal(c.tb, code, p["code"], "error: %v", p)
	require.NotEmpty(c.tb, p["message"])
	return p
}

// awaitNotification waits for a notification of the given action.
func (c *wsClient) awaitNotification(action string) map[string]any {
	c.tb.Helper()
	for {
		f := c.next()
		if f["type"] == "notification" && f["action"] == action {
			return f["payload"].(map[string]any)
		}
	}
}

// assertQuiet proves no notification is pending: a ping round trip
// completes with nothing queued before its response.
func (c *wsClient) assertQuiet() {
	c.tb.Helper()
	_, notes := c.awaitReply(c.send("ping", nil))
	require.Empty(c.tb, notes, "unexpected notifications")
}

func (c *wsClient) awaitClose() websocket.StatusCode {
	c.tb.Helper()
	for {
		select {
		case _, ok := <-c.frames:
			if !ok {
				return websocket.CloseStatus(<-c.closed)
			}
		case <-time.After(10 * time.Second):
			c.tb.Fatal("connection not closed within 10s")
		}
	}
}

func httpGet(tb testing.TB, url string, header http.Header) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(tb, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
