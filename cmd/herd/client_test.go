package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
)

// testClient speaks the protocol over a real WebSocket.
type testClient struct {
	tb   testing.TB
	conn *websocket.Conn
	n    int
}

// MustDialTest connects to the server's /ws.
func MustDialTest(tb testing.TB, srv *server.Server) *testClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://"+srv.Addr()+"/ws", nil)
	require.NoError(tb, err)
	conn.SetReadLimit(64 << 20)
	tb.Cleanup(func() { conn.CloseNow() })
	return &testClient{tb: tb, conn: conn}
}

// call sends a request and returns its response payload, skipping
// notifications.
func (c *testClient) call(action string, payload any) map[string]any {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.n++
	id := fmt.Sprintf("t-%d", c.n)
	b, err := json.Marshal(map[string]any{"id": id, "type": "request", "action": action, "payload": payload})
	require.NoError(c.tb, err)
	require.NoError(c.tb, c.conn.Write(ctx, websocket.MessageText, b))
	for {
		_, data, err := c.conn.Read(ctx)
		require.NoError(c.tb, err)
		var f map[string]any
		require.NoError(c.tb, json.Unmarshal(data, &f))
		if f["id"] == id {
			require.Equal(c.tb, "response", f["type"], "%v", f)
			return f["payload"].(map[string]any)
		}
	}
}

// create creates a task in a workspace.
func (c *testClient) create(workspaceID, title string) {
	c.tb.Helper()
	c.call("task.create", map[string]any{"workspace_id": workspaceID, "title": title})
}
