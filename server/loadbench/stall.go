package loadbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herd-dev/herd/shared"
)

// stallReport is scenario c: an extra client with every streaming session
// open stops reading while the streams go on.
type stallReport struct {
	StreamPrompt       string  `json:"stream_prompt"`
	StallS             float64 `json:"stall_s"`
	StallRcvbuf        int     `json:"stalled_client_rcvbuf_bytes"`
	StalledConnections int     `json:"stalled_connections"`
	StalledSessions    int     `json:"stalled_sessions"`
	// RSS and Go heap in use of the server: before the stall, the peak
	// during it (sampled every 500 ms), and 3 s after it ended.
	RSSBeforeMiB  float64 `json:"server_rss_before_mib"`
	RSSPeakMiB    float64 `json:"server_rss_peak_mib"`
	RSSAfterMiB   float64 `json:"server_rss_after_mib"`
	HeapBeforeMiB float64 `json:"server_heap_before_mib"`
	HeapPeakMiB   float64 `json:"server_heap_peak_mib"`
	HeapAfterMiB  float64 `json:"server_heap_after_mib"`
	// RSSGrowthMiB is the peak during the stall minus the RSS before it,
	// under the same load. The baseline peaks are those of phase b's light
	// run, at the same load without a stalled client, when it had one.
	RSSGrowthMiB        float64 `json:"server_rss_growth_mib"`
	BaselineRSSPeakMiB  float64 `json:"baseline_rss_peak_mib,omitempty"`
	BaselineHeapPeakMiB float64 `json:"baseline_heap_peak_mib,omitempty"`
	// KernelTCP is the machine's TCP socket buffer memory: what a
	// client that does not read leaves queued in the kernel.
	KernelTCPBeforeMiB float64 `json:"kernel_tcp_buffers_before_mib"`
	KernelTCPPeakMiB   float64 `json:"kernel_tcp_buffers_peak_mib"`
	// ClosedByServer is true when the server ended every stalled
	// connection; ClosedAfterS is when its metrics first counted a close,
	// from the start of the stall (-1: not seen).
	ClosedByServer    bool             `json:"closed_by_server"`
	ClosedConnections int              `json:"connections_closed_by_server"`
	ClosedAfterS      float64          `json:"closed_after_s"`
	CloseReasons      map[string]int64 `json:"server_close_reasons"`
	ClientSaw         []string         `json:"client_saw"`
	// Other is the measuring client during the stall.
	Other       loadPhase `json:"other_client_during_stall"`
	ReplyBudget *budget   `json:"correlated_reply_p99_budget"`
}

// stalledReader runs scenario c while b's streams go on: an extra client
// opens every streaming session, then stops reading.
// baseline, when not nil, is a phase at the same load without the
// stalled client.
func (b *benchRun) stalledReader(ctx context.Context, srv *benchServer, ws string, streams []string, probe *prober, group *sessionGroup, driver *streamDriver, baseline *loadPhase, idle loadPhase) (*stallReport, error) {
	cfg := b.cfg
	rep := &stallReport{StallS: cfg.Stall.Seconds(), StallRcvbuf: cfg.StallRcvbuf, StalledSessions: len(streams), ClosedAfterS: -1}
	dial := func(ctx context.Context) (*wsClient, error) {
		return dialBenchBuffer(ctx, srv.addr, nil, cfg.StallRcvbuf)
	}
	s0, err := dial(ctx)
	if err != nil {
		return rep, err
	}
	if err := s0.call(ctx, shared.ActionBoot, map[string]any{"workspace_id": ws}, nil); err != nil {
		return rep, err
	}
	stalled, err := subscribeSpread(ctx, s0, streams, 0, dial)
	defer closeAll(stalled.conns)
	if err != nil {
		return rep, err
	}
	rep.StalledConnections = len(stalled.conns)

	sampler := startSampler(ctx, srv, 500*time.Millisecond, true)
	defer sampler.stop()
	if err := pause(ctx, cfg.Settle); err != nil {
		return rep, err
	}
	before := sampler.between(time.Time{}, time.Now())

	b.logf("c: %d connections with %d sessions open stop reading for %s", len(stalled.conns), len(streams), cfg.Stall)
	for _, c := range stalled.conns {
		c.stall()
	}
	var from, to time.Time
	var runErr error
	rep.Other, from, to, runErr = measurePhase(ctx, srv, probe, group, driver, len(streams), cfg.Stall)

	// Read again: a connection the server closed ends once the client has
	// read what was buffered for it.
	for _, c := range stalled.conns {
		c.unstall()
	}
	rep.ClosedByServer = true
	waitUntil := time.Now().Add(max(cfg.Settle, time.Second))
	for _, c := range stalled.conns {
		for {
			ended, _ := c.ended()
			if ended || time.Now().After(waitUntil) {
				break
			}
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return rep, err
			}
		}
		ended, readErr := c.ended()
		if !ended {
			rep.ClosedByServer = false
			rep.ClientSaw = append(rep.ClientSaw, "still open")
			continue
		}
		rep.ClientSaw = append(rep.ClientSaw, closeDescription(readErr))
		rep.ClosedConnections++
	}
	// Our own closes below are not the server's doing.
	resumed := time.Now()
	closeAll(stalled.conns)
	if err := pause(ctx, cfg.Settle); err != nil {
		return rep, err
	}
	sampler.stop()

	during := sampler.between(from, to)
	after := sampler.between(resumed, time.Now())
	rep.RSSBeforeMiB, rep.HeapBeforeMiB = lastRSS(before)
	rep.RSSPeakMiB, rep.HeapPeakMiB = peakRSS(during), peakHeap(during)
	rep.RSSAfterMiB, rep.HeapAfterMiB = lastRSS(after)
	rep.Other.RSSPeakMiB = rep.RSSPeakMiB
	rep.RSSGrowthMiB = round3(rep.RSSPeakMiB - rep.RSSBeforeMiB)
	if baseline != nil {
		rep.BaselineRSSPeakMiB, rep.BaselineHeapPeakMiB = baseline.RSSPeakMiB, baseline.HeapPeakMiB
	}
	if len(before) > 0 {
		rep.KernelTCPBeforeMiB = mib(before[len(before)-1].tcpKiB)
	}
	rep.KernelTCPPeakMiB = peakTCP(during)
	rep.CloseReasons, rep.ClosedAfterS = closeFigures(sampler.between(time.Time{}, resumed), from)
	rep.Other.judge(idle)
	rep.ReplyBudget = rep.Other.ReplyBudget
	closed := "none closed by the server"
	if rep.ClosedConnections > 0 {
		closed = fmt.Sprintf("%d of %d closed by the server, first after %.1f s (%v)", rep.ClosedConnections, rep.StalledConnections, rep.ClosedAfterS, rep.CloseReasons)
	}
	b.logf("c: RSS %.0f → peak %.0f → %.0f MiB, kernel TCP buffers %.1f → peak %.1f MiB; %s; other client's message.add p99 %.1f ms",
		rep.RSSBeforeMiB, rep.RSSPeakMiB, rep.RSSAfterMiB, rep.KernelTCPBeforeMiB, rep.KernelTCPPeakMiB, closed, rep.Other.MessageAdd.P99)
	if runErr != nil {
		return rep, fmt.Errorf("probe during the stall: %w", runErr)
	}
	return rep, nil
}

// lastRSS returns the last sample's RSS and heap in use, in MiB.
func lastRSS(samples []resourceSample) (rss, heap float64) {
	if len(samples) == 0 {
		return 0, 0
	}
	s := samples[len(samples)-1]
	return mib(s.rssKiB), mib(s.heapKiB)
}

// closeFigures returns how many connections the server closed for each
// reason over the samples, and when (seconds after from) it first counted
// one, or -1.
func closeFigures(samples []resourceSample, from time.Time) (map[string]int64, float64) {
	var first, last *resourceSample
	for i := range samples {
		if samples[i].scrapeOK {
			if first == nil {
				first = &samples[i]
			}
			last = &samples[i]
		}
	}
	reasons := map[string]int64{}
	if first == nil {
		return reasons, -1
	}
	for k, v := range last.closes {
		if d := v - first.closes[k]; d > 0 {
			reasons[closeReason(k)] = d
		}
	}
	total := func(s resourceSample) (n int64) {
		for _, v := range s.closes {
			n += v
		}
		return n
	}
	base := total(*first)
	for _, s := range samples {
		if s.scrapeOK && s.at.After(from) && total(s) > base {
			return reasons, round3(s.at.Sub(from).Seconds())
		}
	}
	return reasons, -1
}

// closeReason turns `herd_ws_closes_total{reason="x"}` into "x".
func closeReason(series string) string {
	_, rest, ok := strings.Cut(series, `reason="`)
	if !ok {
		return series
	}
	reason, _, _ := strings.Cut(rest, `"`)
	return reason
}
