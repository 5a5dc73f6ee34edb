package loadbench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/herd-dev/herd/shared"
)

// selectReport is scenario a: a workspace like the seed's, one session
// selected in a client while other sessions stream to another client.
type selectReport struct {
	Tasks             int     `json:"tasks"`
	StreamingSessions int     `json:"streaming_sessions"`
	StreamPrompt      string  `json:"stream_prompt"`
	DurationS         float64 `json:"duration_s"`
	// MessageAdd is the selected client's prompt round trip to its session.
	MessageAdd      latency `json:"message_add"`
	PromptToSettled latency `json:"prompt_to_turn_settled"`
	// SelectedClient counts what the selected client received while it
	// sampled, by action.
	SelectedClient frameCounts `json:"selected_client_frames"`
	// OtherSessionFrames counts session.* frames of any session but the
	// selected one that reached the selected client; Isolated is true when
	// there were none.
	OtherSessionFrames int64 `json:"other_session_frames"`
	Isolated           bool  `json:"isolated"`
	// SeqGaps counts session notifications whose seq showed a missed frame.
	SeqGaps int64 `json:"seq_gaps"`
	// DetailClient counts what the client watching the streaming sessions
	// received: the load the server really sent out.
	DetailClient        frameCount     `json:"detail_client_frames"`
	DetailConnections   int            `json:"detail_connections"`
	StreamTurns         int64          `json:"stream_turns_started"`
	Chunks              int64          `json:"stream_chunks_seen"`
	ChunksPerSession    float64        `json:"chunks_per_second_per_session"`
	CPU                 cpuFigures     `json:"cpu"`
	ServerRSSPeakMiB    float64        `json:"server_rss_peak_mib"`
	Server              serverShutdown `json:"server_shutdown"`
	PromptOutcomes      map[string]int `json:"prompt_outcomes"`
	UnsettledPrompts    int            `json:"turns_not_settled"`
	SessionLimitRefusal string         `json:"session_limit_refusal,omitempty"`
}

// selectedSession runs scenario a.
func (b *benchRun) selectedSession(ctx context.Context) (rep *selectReport, err error) {
	cfg := b.cfg
	srv, err := b.startServer(ctx)
	if err != nil {
		return nil, err
	}
	rep = &selectReport{Tasks: cfg.SelectTasks, StreamingSessions: cfg.SelectStreams}
	defer func() { rep.Server = b.stopServer(srv) }()

	setup, ws, err := openWorkspace(ctx, srv.addr, "bench a")
	if err != nil {
		return rep, err
	}
	defer setup.close()
	tasks, err := createTasks(ctx, setup, ws, "Task", cfg.SelectTasks)
	if err != nil {
		return rep, err
	}
	b.logf("%d tasks; starting %d sessions", len(tasks), cfg.SelectStreams+1)
	sessions, err := startSessions(ctx, setup, tasks[:cfg.SelectStreams+1])
	if err != nil {
		return rep, err
	}
	selected, streams := sessions[0], sessions[1:]
	if err := b.reniceAgents(srv, cfg.AgentsNice); err != nil {
		return rep, err
	}

	// The detail client watches the streaming sessions, so their frames
	// are really produced and sent; its first connection drives the
	// re-prompts.
	driver := newStreamDriver(setup, streams, streamPrompt(cfg.StreamChunks, cfg.StreamGapMS))
	rep.StreamPrompt = driver.prompt
	dialDetail := func(ctx context.Context) (*wsClient, error) { return dialBench(ctx, srv.addr, driver.observe) }
	detail0, err := dialDetail(ctx)
	if err != nil {
		return rep, err
	}
	detail, err := subscribeSpread(ctx, detail0, streams, 0, dialDetail)
	defer closeAll(detail.conns)
	if err != nil {
		return rep, err
	}
	rep.DetailConnections, rep.SessionLimitRefusal = len(detail.conns), detail.refusal

	// The selected client: follows the workspace (boot) and has one
	// session open, as the web app does with a task selected.
	var other atomic.Int64
	probe := newProber([]string{selected}, "", cfg.SampleGap)
	seq := newSeqCheck()
	sel, err := dialBench(ctx, srv.addr, func(n benchNote) {
		if isSessionAction(n.Action) && sessionOf(n.Payload) != selected {
			other.Add(1)
		}
		probe.observe(n)
		seq.observe(n)
	})
	if err != nil {
		return rep, err
	}
	defer sel.close()
	probe.c = sel
	if err := sel.call(ctx, shared.ActionBoot, map[string]any{"workspace_id": ws}, nil); err != nil {
		return rep, err
	}
	if err := sel.call(ctx, shared.ActionSessionSubscribe, shared.SessionRef{SessionID: selected}, nil); err != nil {
		return rep, err
	}
	if err := sel.call(ctx, shared.ActionSessionFocus, shared.SessionRef{SessionID: selected}, nil); err != nil {
		return rep, err
	}

	b.logf("%d sessions streaming (%s); sampling the selected session for %s", len(streams), driver.prompt, cfg.SelectDuration)
	driver.start(ctx)
	// Let every stream get going before counting.
	if err := pause(ctx, time.Second); err != nil {
		driver.stop()
		return rep, err
	}
	sel.takeCounts()
	detail.takeCounts()
	other.Store(0)
	chunks0 := driver.tally.total()
	sampler := startSampler(ctx, srv, 500*time.Millisecond, false)
	cpu := startCPU(srv)
	from := time.Now()
	runErr := probe.run(ctx, from.Add(cfg.SelectDuration))
	to := time.Now()
	rep.CPU = cpu.read()
	sampler.stop()
	rep.Chunks = driver.tally.total() - chunks0
	rep.SelectedClient = sel.takeCounts()
	rep.DetailClient = detail.takeCounts().total()
	stopErr := driver.stop()
	rep.StreamTurns = driver.turns.Load()

	rep.DurationS = round3(to.Sub(from).Seconds())
	f := probe.figures(from, to)
	rep.MessageAdd, rep.PromptToSettled, rep.PromptOutcomes, rep.UnsettledPrompts = f.MessageAdd, f.PromptToSettled, f.Outcomes, f.Unsettled
	rep.OtherSessionFrames = other.Load()
	rep.Isolated = rep.OtherSessionFrames == 0
	rep.SeqGaps = seq.count()
	rep.ChunksPerSession = round3(float64(rep.Chunks) / to.Sub(from).Seconds() / float64(len(streams)))
	rep.ServerRSSPeakMiB = peakRSS(sampler.between(from, to))
	b.logf("message.add p50 %.1f ms p99 %.1f ms (n=%d); other sessions' frames: %d; %.0f chunks/s per session",
		rep.MessageAdd.P50, rep.MessageAdd.P99, rep.MessageAdd.N, rep.OtherSessionFrames, rep.ChunksPerSession)
	if runErr != nil {
		return rep, fmt.Errorf("probe: %w", runErr)
	}
	if stopErr != nil {
		return rep, fmt.Errorf("stream prompts: %w", stopErr)
	}
	return rep, nil
}
