package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/store/storetest"
)

// readyStatus returns /readyz's status code.
func readyStatus(t *testing.T, srv *server.Server) int {
	t.Helper()
	resp, err := http.Get("http://" + srv.Addr() + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// While PostgreSQL is down the server says so: /readyz answers 503 and a
// request answers unavailable, not internal; once it is back both recover
// without a restart of herd.
func TestDatabaseOutageIsReportedAndRecovered(t *testing.T) {
	pg := storetest.OwnPostgres(t)
	url := pg.CreateDatabase("herd")
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.DatabaseURL, c.DataDir = url, "" })
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "w"})
	require.Equal(t, http.StatusOK, readyStatus(t, srv))

	pg.Stop()
	require.Eventually(t, func() bool { return readyStatus(t, srv) == http.StatusServiceUnavailable },
		10*time.Second, 50*time.Millisecond, "/readyz reports the database")
	c.callErr("task.list", map[string]any{"workspace_id": ws["id"]}, "unavailable")
	c.callErr("task.create", map[string]any{"workspace_id": ws["id"], "title": "during"}, "unavailable")

	pg.Start()
	require.Eventually(t, func() bool { return readyStatus(t, srv) == http.StatusOK },
		10*time.Second, 50*time.Millisecond)
	c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "after"})
}
