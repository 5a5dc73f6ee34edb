package server_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkTaskList10kOverWebSocket lists 10,000 tasks, each with its
// status summary, in one task.list request through the whole server: the
// SQLite queries, JSON encoding, the WebSocket and the client's decoding.
func BenchmarkTaskList10kOverWebSocket(b *testing.B) {
	srv := MustStart(b, nil)
	c := MustDial(b, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "big"})
	const tasks = 10000
	// Pipeline the creates, a window at a time, to seed quickly.
	for done := 0; done < tasks; {
		pending := map[any]bool{}
		for i := 0; i < 16 && done+i < tasks; i++ {
			pending[c.send("task.create", map[string]any{"workspace_id": ws["id"], "title": fmt.Sprintf("task %d", done+i)})] = true
		}
		done += len(pending)
		for len(pending) > 0 {
			f := c.next()
			require.Equal(b, "response", f["type"], "%v", f)
			delete(pending, f["id"])
		}
	}
	b.ResetTimer()
	for range b.N {
		page := c.call("task.list", map[string]any{"workspace_id": ws["id"], "limit": tasks})
		require.Len(b, page["tasks"], tasks)
	}
}
