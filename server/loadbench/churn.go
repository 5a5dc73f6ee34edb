package loadbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/herd-dev/herd/shared"
)

// churnReport is scenario e: one client switches between tasks the way
// the web app does, in a small and a large workspace with the same number
// of sessions. The work of a switch should follow the sessions it opens
// and closes, not the number of tasks.
type churnReport struct {
	Runs []churnRun `json:"runs"`
	// BytesPerSubscribeRatio is the large run's bytes per opened session
	// over the small run's.
	BytesPerSubscribeRatio float64 `json:"bytes_per_subscribe_ratio_large_to_small"`
	// Proportional holds when, in every run, the client received exactly
	// one response per request and no session frames it did not ask for,
	// and an opened session cost the same bytes (within 20 %) whatever the
	// number of tasks.
	Proportional bool `json:"proportional"`
}

// churnRun is one workspace's switching.
type churnRun struct {
	Tasks          int `json:"tasks"`
	SessionTasks   int `json:"tasks_with_session"`
	Switches       int `json:"switches"`
	SessionsOpened int `json:"sessions_opened"`
	SessionsClosed int `json:"sessions_closed"`
	// Frames counts everything the client received while switching.
	Frames              frameCounts `json:"frames"`
	FramesPerSwitch     float64     `json:"frames_per_switch"`
	BytesPerSwitch      float64     `json:"bytes_per_switch"`
	FramesPerChange     float64     `json:"frames_per_session_opened_or_closed"`
	BytesPerSubscribe   float64     `json:"bytes_per_session_opened"`
	BytesPerUnsubscribe float64     `json:"bytes_per_session_closed"`
	Subscribe           latency     `json:"subscribe_with_snapshot"`
	Unsubscribe         latency     `json:"unsubscribe"`
	CPU                 cpuFigures  `json:"cpu"`
	ServerCPUMsPerOp    float64     `json:"server_cpu_ms_per_session_opened_or_closed"`
	RSSBeforeMiB        float64     `json:"server_rss_before_mib"`
	RSSAfterMiB         float64     `json:"server_rss_after_mib"`
	// StrayFrames counts session frames the client received after it had
	// closed every session, while each session ran one more turn: a
	// subscription left behind would show here.
	StrayFrames int64          `json:"session_frames_after_closing"`
	Server      serverShutdown `json:"server_shutdown"`
}

// churn runs scenario e: the small workspace, then the large one.
func (b *benchRun) churn(ctx context.Context) (*churnReport, error) {
	rep := &churnReport{}
	for _, tasks := range []int{b.cfg.ChurnTasksSmall, b.cfg.ChurnTasks} {
		run, err := b.churnRun(ctx, tasks)
		if run != nil {
			rep.Runs = append(rep.Runs, *run)
		}
		if err != nil {
			return rep, err
		}
	}
	small, large := rep.Runs[0], rep.Runs[len(rep.Runs)-1]
	rep.BytesPerSubscribeRatio = ratio(large.BytesPerSubscribe, small.BytesPerSubscribe)
	rep.Proportional = rep.BytesPerSubscribeRatio >= 0.8 && rep.BytesPerSubscribeRatio <= 1.25
	for _, r := range rep.Runs {
		requests := int64(r.SessionsOpened + r.SessionsClosed)
		if r.Frames.total().Frames != requests || r.StrayFrames != 0 {
			rep.Proportional = false
		}
	}
	return rep, nil
}

// churnRun switches between tasks of a fresh workspace of n tasks.
func (b *benchRun) churnRun(ctx context.Context, n int) (rep *churnRun, err error) {
	cfg := b.cfg
	srv, err := b.startServer(ctx)
	if err != nil {
		return nil, err
	}
	rep = &churnRun{Tasks: n, SessionTasks: cfg.ChurnSessions, Switches: cfg.Switches}
	defer func() { rep.Server = b.stopServer(srv) }()
	setup, ws, err := openWorkspace(ctx, srv.addr, fmt.Sprintf("bench e %d", n))
	if err != nil {
		return rep, err
	}
	defer setup.close()
	tasks, err := createTasks(ctx, setup, ws, "Task", n)
	if err != nil {
		return rep, err
	}
	// Sessions on tasks spread evenly over the list.
	var withSession []string
	for i := range cfg.ChurnSessions {
		withSession = append(withSession, tasks[i*n/cfg.ChurnSessions])
	}
	b.logf("%d tasks, %d with a session", n, len(withSession))
	sessions, err := startSessions(ctx, setup, withSession)
	if err != nil {
		return rep, err
	}
	sessionOfTask := map[string]string{}
	for i, t := range withSession {
		sessionOfTask[t] = sessions[i]
	}
	// One exchange each, so a snapshot carries a transcript.
	err = parallel(ctx, len(sessions), 8, func(ctx context.Context, i int) error {
		return echoTurn(ctx, setup, withSession[i], sessions[i], "hello")
	})
	if err != nil {
		return rep, err
	}

	u, err := dialBench(ctx, srv.addr, nil)
	if err != nil {
		return rep, err
	}
	defer u.close()
	if err := u.call(ctx, shared.ActionBoot, map[string]any{"workspace_id": ws}, nil); err != nil {
		return rep, err
	}
	// Let the summaries of the setup turns settle before counting.
	if err := pause(ctx, cfg.Settle); err != nil {
		return rep, err
	}
	u.takeCounts()
	if rss, err := srv.rssKiB(); err == nil {
		rep.RSSBeforeMiB = mib(rss)
	}

	var sub, unsub []time.Duration
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	cur := -1
	closeCur := func() error {
		if cur < 0 {
			return nil
		}
		s := sessionOfTask[tasks[cur]]
		if s == "" {
			return nil
		}
		_, rtt, err := u.roundTrip(ctx, shared.ActionSessionUnsubscribe, shared.SessionRef{SessionID: s})
		if err != nil {
			return err
		}
		unsub = append(unsub, rtt)
		rep.SessionsClosed++
		return nil
	}
	cpu := startCPU(srv)
	for range cfg.Switches {
		next := rng.IntN(n)
		for next == cur {
			next = rng.IntN(n)
		}
		if err := closeCur(); err != nil {
			return rep, err
		}
		cur = next
		s := sessionOfTask[tasks[cur]]
		if s == "" {
			continue
		}
		raw, rtt, err := u.roundTrip(ctx, shared.ActionSessionSubscribe, shared.SessionRef{SessionID: s})
		if err != nil {
			return rep, err
		}
		var resp shared.SessionSubscribeResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			return rep, fmt.Errorf("decode session.subscribe: %w", err)
		}
		if !resp.Joined || resp.Snapshot == nil {
			return rep, errors.New("session.subscribe of a closed session answered without a snapshot")
		}
		sub = append(sub, rtt)
		rep.SessionsOpened++
	}
	if err := closeCur(); err != nil {
		return rep, err
	}
	rep.CPU = cpu.read()
	rep.Frames = u.takeCounts()
	if rss, err := srv.rssKiB(); err == nil {
		rep.RSSAfterMiB = mib(rss)
	}
	total := rep.Frames.total()
	changes := rep.SessionsOpened + rep.SessionsClosed
	rep.FramesPerSwitch = round3(float64(total.Frames) / float64(cfg.Switches))
	rep.BytesPerSwitch = round3(float64(total.Bytes) / float64(cfg.Switches))
	if changes > 0 {
		rep.FramesPerChange = round3(float64(total.Frames) / float64(changes))
		rep.ServerCPUMsPerOp = round3(rep.CPU.ServerS * 1000 / float64(changes))
	}
	if rep.SessionsOpened > 0 {
		rep.BytesPerSubscribe = round3(float64(rep.Frames.Responses[shared.ActionSessionSubscribe].Bytes) / float64(rep.SessionsOpened))
	}
	if rep.SessionsClosed > 0 {
		rep.BytesPerUnsubscribe = round3(float64(rep.Frames.Responses[shared.ActionSessionUnsubscribe].Bytes) / float64(rep.SessionsClosed))
	}
	rep.Subscribe, rep.Unsubscribe = summarize(sub), summarize(unsub)

	// Every session runs one more turn; the client, which closed them
	// all, must hear nothing of them.
	err = parallel(ctx, len(sessions), 8, func(ctx context.Context, i int) error {
		return echoTurn(ctx, setup, withSession[i], sessions[i], "after the churn")
	})
	if err != nil {
		return rep, err
	}
	if err := pause(ctx, 200*time.Millisecond); err != nil {
		return rep, err
	}
	for action, c := range u.takeCounts().Notifications {
		if isSessionAction(action) {
			rep.StrayFrames += c.Frames
		}
	}
	b.logf("%d switches: %d sessions opened, %d closed; %.2f frames per session change, %.0f bytes per open; subscribe p99 %.1f ms",
		cfg.Switches, rep.SessionsOpened, rep.SessionsClosed, rep.FramesPerChange, rep.BytesPerSubscribe, rep.Subscribe.P99)
	return rep, nil
}
