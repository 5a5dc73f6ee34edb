package loadbench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herd-dev/herd/shared"
)

// Budgets from DESIGN.md checked by scenario b.
const (
	correlatedReplyP99Budget = 50.0  // ms, message.add round trip under load
	taskSwitchP99Budget      = 100.0 // ms, session.subscribe with snapshot under load
)

// loadReport is scenario b: one client has every streaming session open
// and measures prompt round trips to quiet sessions and a task switch
// (subscribe with snapshot) to another quiet session: idle, under a light
// load, then under the specified load.
type loadReport struct {
	StreamingSessions int    `json:"streaming_sessions"`
	StreamPrompt      string `json:"stream_prompt"`
	LightPrompt       string `json:"light_prompt,omitempty"`
	QuietSessions     int    `json:"quiet_prompt_sessions"`
	// SubscriberConnections is how many connections the one client needed
	// to open every session: the server caps sessions per connection
	// (SessionLimit, with its refusal) and the bench spreads the rest.
	SubscriberConnections int        `json:"subscriber_connections"`
	SessionLimit          int        `json:"session_limit_per_connection,omitempty"`
	SessionLimitRefusal   string     `json:"session_limit_refusal,omitempty"`
	SwitchTranscript      int        `json:"switch_session_messages"`
	Idle                  loadPhase  `json:"idle"`
	Light                 *loadPhase `json:"light,omitempty"`
	Loaded                loadPhase  `json:"loaded"`
	// Niced repeats the loaded run with the agents reniced to NicedTo, so
	// the server is scheduled ahead of the processes that load it.
	Niced   *loadPhase `json:"loaded_agents_niced,omitempty"`
	NicedTo int        `json:"agents_niced_to,omitempty"`
	// Ratios compare the loaded p99 with the idle p99.
	ReplyP99Ratio  float64        `json:"message_add_p99_ratio_loaded_to_idle"`
	SwitchP99Ratio float64        `json:"subscribe_p99_ratio_loaded_to_idle"`
	ReplyBudget    *budget        `json:"correlated_reply_p99_budget"`
	SwitchBudget   *budget        `json:"task_switch_p99_budget"`
	StreamTurns    int64          `json:"stream_turns_started"`
	LostSettles    int64          `json:"stream_settles_missed"`
	Server         serverShutdown `json:"server_shutdown"`
}

// loadPhase is one phase's measurements on the measuring client.
type loadPhase struct {
	DurationS float64 `json:"duration_s"`
	probeFigures
	// Client counts every frame the measuring client's connections
	// received in the phase.
	Client           frameCount `json:"client_frames"`
	ClientMiBPerS    float64    `json:"client_mib_per_s"`
	MessageUpdates   int64      `json:"session_message_updated_frames"`
	Chunks           int64      `json:"stream_chunks_seen"`
	ChunksPerSession float64    `json:"chunks_per_second_per_session"`
	CPU              cpuFigures `json:"cpu"`
	RSSPeakMiB       float64    `json:"server_rss_peak_mib"`
	HeapPeakMiB      float64    `json:"server_heap_peak_mib"`
	// SeqGaps counts session notifications to the measuring client whose
	// seq showed a missed frame.
	SeqGaps int64 `json:"seq_gaps"`
	// Server is what the server's own metrics say about the phase.
	Server       serverFigures `json:"server_metrics"`
	ReplyBudget  *budget       `json:"correlated_reply_p99_budget,omitempty"`
	SwitchBudget *budget       `json:"task_switch_p99_budget,omitempty"`
	// The phase's p99 over the idle run's.
	ReplyP99Ratio  float64 `json:"message_add_p99_ratio_to_idle,omitempty"`
	SwitchP99Ratio float64 `json:"subscribe_p99_ratio_to_idle,omitempty"`
}

// serverFigures are deltas of the server's /metrics over a phase: how long
// its handlers took on average (the rest of a round trip is queueing and
// delivery) and what its delivery lanes did.
type serverFigures struct {
	HandlerMeanMs map[string]float64 `json:"handler_mean_ms"`
	Replaced      int64              `json:"replaced_in_queue"`
	Evicted       int64              `json:"evicted_from_queue"`
	Closes        map[string]int64   `json:"closes,omitempty"`
}

// serverDelta computes serverFigures between two scrapes; nil scrapes
// give zero figures.
func serverDelta(before, after map[string]float64) serverFigures {
	f := serverFigures{HandlerMeanMs: map[string]float64{}, Closes: map[string]int64{}}
	if before == nil || after == nil {
		return f
	}
	d := func(series string) float64 { return after[series] - before[series] }
	for _, action := range []string{shared.ActionMessageAdd, shared.ActionSessionSubscribe, shared.ActionSessionUnsubscribe} {
		label := `{action="` + action + `"}`
		if n := d("herd_ws_request_duration_seconds_count" + label); n > 0 {
			f.HandlerMeanMs[action] = round3(d("herd_ws_request_duration_seconds_sum"+label) / n * 1000)
		}
	}
	f.Replaced = int64(d("herd_ws_replaced_total"))
	f.Evicted = int64(d("herd_ws_evicted_total"))
	for k := range after {
		if strings.HasPrefix(k, "herd_ws_closes_total") {
			if n := int64(d(k)); n > 0 {
				f.Closes[closeReason(k)] = n
			}
		}
	}
	return f
}

// quietPromptSessions is how many quiet sessions take the probe's prompts
// in turn, so a slow turn does not stop the sampling.
const quietPromptSessions = 4

// underLoad runs scenario b and, when asked, c in the same server.
func (b *benchRun) underLoad(ctx context.Context) (rep *loadReport, stall *stallReport, err error) {
	cfg := b.cfg
	srv, err := b.startServer(ctx)
	if err != nil {
		return nil, nil, err
	}
	rep = &loadReport{StreamingSessions: cfg.LoadStreams, QuietSessions: quietPromptSessions}
	defer func() { rep.Server = b.stopServer(srv) }()

	setup, ws, err := openWorkspace(ctx, srv.addr, "bench b")
	if err != nil {
		return rep, nil, err
	}
	defer setup.close()
	tasks, err := createTasks(ctx, setup, ws, "Task", cfg.LoadStreams+quietPromptSessions+1)
	if err != nil {
		return rep, nil, err
	}
	b.logf("starting %d sessions", len(tasks))
	sessions, err := startSessions(ctx, setup, tasks)
	if err != nil {
		return rep, nil, err
	}
	quiet, switchTo, streams := sessions[:quietPromptSessions], sessions[quietPromptSessions], sessions[quietPromptSessions+1:]
	if err := b.reniceAgents(srv, cfg.AgentsNice); err != nil {
		return rep, nil, err
	}
	// The switch target gets a short transcript (a prompt and its answer
	// per turn), so its snapshot carries messages.
	const switchTurns = 5
	for i := range switchTurns {
		if err := echoTurn(ctx, setup, tasks[quietPromptSessions], switchTo, fmt.Sprintf("earlier prompt %d", i)); err != nil {
			return rep, nil, err
		}
	}
	rep.SwitchTranscript = 2 * switchTurns

	rep.StreamPrompt = streamPrompt(cfg.StreamChunks, cfg.StreamGapMS)
	if cfg.LightDuration > 0 {
		rep.LightPrompt = streamPrompt(cfg.StreamChunks, cfg.LightGapMS)
	}
	driver := newStreamDriver(setup, streams, rep.StreamPrompt)
	probe := newProber(quiet, switchTo, cfg.SampleGap)
	seq := newSeqCheck()
	probe.seq = seq
	observe := func(n benchNote) { probe.observe(n); driver.observe(n); seq.observe(n) }
	m0, err := dialBench(ctx, srv.addr, observe)
	if err != nil {
		return rep, nil, err
	}
	probe.c = m0
	if err := m0.call(ctx, shared.ActionBoot, map[string]any{"workspace_id": ws}, nil); err != nil {
		return rep, nil, err
	}
	// One slot stays free on the first connection for the task switches.
	group, err := subscribeSpread(ctx, m0, append(slices.Clone(quiet), streams...), 1,
		func(ctx context.Context) (*wsClient, error) { return dialBench(ctx, srv.addr, observe) })
	defer closeAll(group.conns)
	if err != nil {
		return rep, nil, err
	}
	rep.SubscriberConnections, rep.SessionLimit, rep.SessionLimitRefusal = len(group.conns), group.limit, group.refusal
	if len(group.conns) > 1 {
		b.logf("the server refused more than %d sessions per connection; the client uses %d connections", group.limit, len(group.conns))
	}

	phase := func(d time.Duration) (loadPhase, error) {
		sampler := startSampler(ctx, srv, 500*time.Millisecond, true)
		p, from, to, err := measurePhase(ctx, srv, probe, group, driver, len(streams), d)
		sampler.stop()
		during := sampler.between(from, to)
		p.RSSPeakMiB, p.HeapPeakMiB = peakRSS(during), peakHeap(during)
		return p, err
	}

	b.logf("idle: sampling for %s", cfg.IdleDuration)
	if rep.Idle, err = phase(cfg.IdleDuration); err != nil {
		return rep, nil, fmt.Errorf("idle probe: %w", err)
	}
	b.logf("idle: message.add p99 %.1f ms, subscribe p99 %.1f ms", rep.Idle.MessageAdd.P99, rep.Idle.Subscribe.P99)

	// The streams start with the first prompt they need and are switched
	// (running turns cancelled) when a phase needs another.
	started := false
	streamWith := func(prompt string) error {
		if !started {
			driver.setPrompt(prompt)
			driver.start(ctx)
			started = true
			return pause(ctx, time.Second)
		}
		if driver.currentPrompt() == prompt {
			return nil
		}
		if err := driver.retarget(ctx, prompt); err != nil {
			return fmt.Errorf("switch the streams to %q: %w", prompt, err)
		}
		return pause(ctx, cfg.Settle)
	}
	defer func() {
		if !started {
			return
		}
		if serr := driver.stop(); serr != nil && err == nil {
			err = fmt.Errorf("stream prompts: %w", serr)
		}
		rep.StreamTurns, rep.LostSettles = driver.turns.Load(), driver.lost.Load()
	}()

	if cfg.LightDuration > 0 {
		b.logf("light: %d sessions streaming (%s), sampling for %s", len(streams), rep.LightPrompt, cfg.LightDuration)
		if err := streamWith(rep.LightPrompt); err != nil {
			return rep, nil, err
		}
		light, err := phase(cfg.LightDuration)
		if err != nil {
			return rep, nil, fmt.Errorf("light probe: %w", err)
		}
		light.judge(rep.Idle)
		rep.Light = &light
		b.logPhase("light", light)
	}

	// c runs before the heavy phase, so its memory readings start from a
	// server that has run at the stall's load for a while.
	if cfg.has('c') && cfg.Stall > 0 {
		stallPrompt := streamPrompt(cfg.StreamChunks, cfg.StallGapMS)
		if err := streamWith(stallPrompt); err != nil {
			return rep, nil, err
		}
		var baseline *loadPhase
		if rep.Light != nil && rep.LightPrompt == stallPrompt {
			baseline = rep.Light
		}
		stall, err = b.stalledReader(ctx, srv, ws, streams, probe, group, driver, baseline, rep.Idle)
		if stall != nil {
			stall.StreamPrompt = stallPrompt
		}
		if err != nil {
			return rep, stall, err
		}
	}

	b.logf("loaded: %d sessions streaming (%s), sampling for %s", len(streams), rep.StreamPrompt, cfg.LoadDuration)
	if err := streamWith(rep.StreamPrompt); err != nil {
		return rep, stall, err
	}
	if rep.Loaded, err = phase(cfg.LoadDuration); err != nil {
		return rep, stall, fmt.Errorf("loaded probe: %w", err)
	}
	rep.finish()
	b.logPhase("loaded", rep.Loaded)

	if cfg.NicedDuration > 0 && cfg.AgentsNice == 0 {
		const nice = 19
		b.logf("loaded, agents niced to %d: sampling for %s", nice, cfg.NicedDuration)
		if err := b.reniceAgents(srv, nice); err != nil {
			return rep, stall, err
		}
		if err := pause(ctx, cfg.Settle); err != nil {
			return rep, stall, err
		}
		niced, err := phase(cfg.NicedDuration)
		if err != nil {
			return rep, stall, fmt.Errorf("niced probe: %w", err)
		}
		niced.judge(rep.Idle)
		rep.Niced, rep.NicedTo = &niced, nice
		b.logPhase("loaded, agents niced", niced)
	}
	return rep, stall, nil
}

// measurePhase probes for d while the streams go on and returns the
// phase's figures but its memory peaks, which the caller's sampler takes
// over [from, to). The prober's seqCheck must be set.
func measurePhase(ctx context.Context, srv *benchServer, probe *prober, group *sessionGroup, driver *streamDriver, streams int, d time.Duration) (p loadPhase, from, to time.Time, err error) {
	group.takeCounts()
	chunks0, gaps0 := driver.tally.total(), probe.seq.count()
	metricsBefore, _ := srv.metrics(ctx)
	cpu := startCPU(srv)
	from = time.Now()
	err = probe.run(ctx, from.Add(d))
	to = time.Now()
	p.CPU = cpu.read()
	metricsAfter, _ := srv.metrics(ctx)
	p.Server = serverDelta(metricsBefore, metricsAfter)
	p.fill(probe, group.takeCounts(), driver.tally.total()-chunks0, streams, from, to)
	p.SeqGaps = probe.seq.count() - gaps0
	return p, from, to, err
}

func (b *benchRun) logPhase(name string, p loadPhase) {
	sub := latency{}
	if p.Subscribe != nil {
		sub = *p.Subscribe
	}
	b.logf("%s: message.add p99 %.1f ms (n=%d), subscribe p99 %.1f ms (n=%d), %.0f chunks/s per session, %.2f MiB/s to the client; CPU s: server %.1f, agents %.1f, bench %.1f over %.0f s",
		name, p.MessageAdd.P99, p.MessageAdd.N, sub.P99, sub.N, p.ChunksPerSession, p.ClientMiBPerS,
		p.CPU.ServerS, p.CPU.AgentsS, p.CPU.BenchS, p.DurationS)
}

// fill sets a phase's figures from the prober and the client's counts.
func (p *loadPhase) fill(probe *prober, counts frameCounts, chunks int64, streams int, from, to time.Time) {
	secs := to.Sub(from).Seconds()
	p.DurationS = round3(secs)
	p.probeFigures = probe.figures(from, to)
	p.Client = counts.total()
	p.ClientMiBPerS = round3(float64(p.Client.Bytes) / secs / (1 << 20))
	p.MessageUpdates = counts.Notifications["session.message.updated"].Frames
	p.Chunks = chunks
	if streams > 0 {
		p.ChunksPerSession = round3(float64(chunks) / secs / float64(streams))
	}
}

// judge sets the phase's budget verdicts and its p99 ratios to the idle
// run.
func (p *loadPhase) judge(idle loadPhase) {
	p.ReplyBudget = atMost(p.MessageAdd.P99, correlatedReplyP99Budget, "ms", p.MessageAdd.N > 0)
	p.ReplyP99Ratio = ratio(p.MessageAdd.P99, idle.MessageAdd.P99)
	if p.Subscribe != nil {
		p.SwitchBudget = atMost(p.Subscribe.P99, taskSwitchP99Budget, "ms", p.Subscribe.N > 0)
		if idle.Subscribe != nil {
			p.SwitchP99Ratio = ratio(p.Subscribe.P99, idle.Subscribe.P99)
		}
	}
}

// finish sets the loaded run's ratios and budget verdicts as the report's.
func (r *loadReport) finish() {
	r.Loaded.judge(r.Idle)
	r.ReplyBudget, r.SwitchBudget = r.Loaded.ReplyBudget, r.Loaded.SwitchBudget
	r.ReplyP99Ratio, r.SwitchP99Ratio = r.Loaded.ReplyP99Ratio, r.Loaded.SwitchP99Ratio
}
