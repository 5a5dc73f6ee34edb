package loadbench

import (
	"context"
	"errors"
	"time"

	"github.com/herd-dev/herd/shared"
)

// idleConnBudgetKiB is DESIGN.md's memory budget per idle connection.
const idleConnBudgetKiB = 64.0

// memoryReport is scenario f: what an idle connection costs the server.
// Each connection boots the workspace (so it follows its task feed, as a
// web app tab does) and then only keeps reading.
type memoryReport struct {
	Connections int `json:"connections"`
	Tasks       int `json:"tasks"`
	// RSS is read from /proc after the connections have been quiet for a
	// few seconds; the Go heap in use from the server's /metrics.
	RSSBeforeMiB      float64 `json:"server_rss_before_mib"`
	RSSAfterMiB       float64 `json:"server_rss_after_mib"`
	RSSAfterCloseMiB  float64 `json:"server_rss_after_close_mib"`
	HeapBeforeMiB     float64 `json:"server_heap_before_mib"`
	HeapAfterMiB      float64 `json:"server_heap_after_mib"`
	PerConnectionKiB  float64 `json:"rss_per_connection_kib"`
	HeapPerConnection float64 `json:"heap_per_connection_kib"`
	// ServerConnections is the server's own count (herd_ws_connections)
	// with the connections open.
	ServerConnections int64          `json:"server_connections"`
	BootBytes         int64          `json:"boot_response_bytes"`
	Budget            *budget        `json:"budget"`
	Server            serverShutdown `json:"server_shutdown"`
}

// idleMemory runs scenario f.
func (b *benchRun) idleMemory(ctx context.Context) (rep *memoryReport, err error) {
	cfg := b.cfg
	srv, err := b.startServer(ctx)
	if err != nil {
		return nil, err
	}
	rep = &memoryReport{Connections: cfg.IdleConns, Tasks: cfg.IdleTasks}
	defer func() { rep.Server = b.stopServer(srv) }()
	setup, ws, err := openWorkspace(ctx, srv.addr, "bench f")
	if err != nil {
		return rep, err
	}
	defer setup.close()
	if _, err := createTasks(ctx, setup, ws, "Task", cfg.IdleTasks); err != nil {
		return rep, err
	}
	boot := func(ctx context.Context, c *wsClient) error {
		return c.call(ctx, shared.ActionBoot, map[string]any{"workspace_id": ws}, nil)
	}
	// Warm up the paths a connection takes, so the first connections do
	// not pay for one-time growth alone.
	warm, err := dialMany(ctx, srv.addr, 20, nil, boot)
	if err != nil {
		return rep, err
	}
	closeAll(warm)
	before, err := settledMemory(ctx, srv, cfg.Settle)
	if err != nil {
		return rep, err
	}

	b.logf("opening %d idle connections", cfg.IdleConns)
	conns, err := dialMany(ctx, srv.addr, cfg.IdleConns, nil, boot)
	if err != nil {
		return rep, err
	}
	after, err := settledMemory(ctx, srv, cfg.Settle)
	if err != nil {
		closeAll(conns)
		return rep, err
	}
	rep.ServerConnections = after.conns
	rep.BootBytes = conns[0].takeCounts().Responses[shared.ActionBoot].Bytes
	closeAll(conns)
	if closed, err := settledMemory(ctx, srv, cfg.Settle); err == nil {
		rep.RSSAfterCloseMiB = mib(closed.rssKiB)
	}

	rep.RSSBeforeMiB, rep.RSSAfterMiB = mib(before.rssKiB), mib(after.rssKiB)
	rep.HeapBeforeMiB, rep.HeapAfterMiB = mib(before.heapKiB), mib(after.heapKiB)
	rep.PerConnectionKiB = round3(float64(after.rssKiB-before.rssKiB) / float64(cfg.IdleConns))
	rep.HeapPerConnection = round3(float64(after.heapKiB-before.heapKiB) / float64(cfg.IdleConns))
	rep.Budget = atMost(rep.PerConnectionKiB, idleConnBudgetKiB, "KiB", true)
	b.logf("RSS %.1f → %.1f MiB: %.1f KiB per connection (heap %.1f KiB)", rep.RSSBeforeMiB, rep.RSSAfterMiB, rep.PerConnectionKiB, rep.HeapPerConnection)
	return rep, nil
}

// settledMemory waits for the server to go quiet, then samples its memory
// every 250 ms for half as long again and returns the smallest RSS seen
// (the garbage of the last requests may not have been collected at every
// sample) with the heap and connection count of that sample.
func settledMemory(ctx context.Context, srv *benchServer, quiet time.Duration) (resourceSample, error) {
	if err := pause(ctx, quiet); err != nil {
		return resourceSample{}, err
	}
	sampler := startSampler(ctx, srv, 250*time.Millisecond, true)
	if err := pause(ctx, max(quiet/2, 500*time.Millisecond)); err != nil {
		sampler.stop()
		return resourceSample{}, err
	}
	sampler.stop()
	samples := sampler.between(time.Time{}, time.Now())
	var best resourceSample
	for _, s := range samples {
		if best.rssKiB == 0 || s.rssKiB < best.rssKiB {
			best = s
		}
	}
	if best.rssKiB == 0 {
		return best, errors.New("no memory sample of the server")
	}
	return best, nil
}
