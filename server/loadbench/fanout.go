package loadbench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/herd-dev/herd/shared"
)

// fanoutReport is scenario d: many workspace followers receive a task's
// summary change. Each iteration queues a prompt behind a running turn, or
// removes it again, which changes the summary's queued_prompt_count; the
// clock runs from the message.add or message.queue.remove request (the
// message.queue.get before a removal is not timed) to the moment a
// follower has read the summary with the new count.
type fanoutReport struct {
	Followers  int `json:"followers"`
	Iterations int `json:"iterations"`
	// Latencies over iterations of the first, the median and the last
	// follower to receive the change.
	FirstFollower  latency `json:"first_follower"`
	MedianFollower latency `json:"median_follower"`
	LastFollower   latency `json:"last_follower"`
	// Incomplete counts iterations in which some follower had not received
	// the change within 30 s.
	Incomplete      int            `json:"incomplete_iterations"`
	ServerRSSMiB    float64        `json:"server_rss_with_followers_mib"`
	CPU             cpuFigures     `json:"cpu"`
	FollowerFrames  frameCount     `json:"follower_frames"`
	FramesPerFollow float64        `json:"frames_per_follower_per_iteration"`
	Server          serverShutdown `json:"server_shutdown"`
	FollowersClosed []string       `json:"followers_closed,omitempty"`
}

// fanoutRound is one iteration's arrivals. Followers report through
// arrive on their reader goroutines.
type fanoutRound struct {
	mu       sync.Mutex // guards the fields below
	want     int        // the queued_prompt_count of this round
	start    time.Time
	seen     []bool
	arrivals []time.Duration
	done     chan struct{} // closed when every follower has arrived
}

func (r *fanoutRound) arrive(follower, queued int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil || queued != r.want || r.seen[follower] || at.Before(r.start) {
		return
	}
	r.seen[follower] = true
	r.arrivals = append(r.arrivals, at.Sub(r.start))
	if len(r.arrivals) == len(r.seen) {
		close(r.done)
	}
}

// begin starts a round expecting want.
func (r *fanoutRound) begin(followers, want int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.want, r.start = want, time.Now()
	r.seen = make([]bool, followers)
	r.arrivals = r.arrivals[:0]
	r.done = make(chan struct{})
	return r.done
}

// end returns the round's arrivals in order and stops accepting more.
func (r *fanoutRound) end() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = nil
	out := slices.Clone(r.arrivals)
	slices.Sort(out)
	return out
}

// fanout runs scenario d.
func (b *benchRun) fanout(ctx context.Context) (rep *fanoutReport, err error) {
	cfg := b.cfg
	srv, err := b.startServer(ctx)
	if err != nil {
		return nil, err
	}
	rep = &fanoutReport{Followers: cfg.Followers, Iterations: cfg.FanoutRuns}
	defer func() { rep.Server = b.stopServer(srv) }()

	c, ws, err := openWorkspace(ctx, srv.addr, "bench d")
	if err != nil {
		return rep, err
	}
	defer c.close()
	tasks, err := createTasks(ctx, c, ws, "Busy", 1)
	if err != nil {
		return rep, err
	}
	sessions, err := startSessions(ctx, c, tasks)
	if err != nil {
		return rep, err
	}
	session := sessions[0]
	if _, _, err := addMessage(ctx, c, session, "/scenario sleep 3600000"); err != nil {
		return rep, err
	}
	if err := awaitSessionState(ctx, c, tasks[0], session, 30*time.Second, shared.SessionRunning); err != nil {
		return rep, err
	}

	round := &fanoutRound{}
	b.logf("opening %d followers", cfg.Followers)
	followers, err := dialMany(ctx, srv.addr, cfg.Followers, func(i int) func(benchNote) {
		return func(n benchNote) {
			if n.Action != "task.status_summary.updated" {
				return
			}
			var ev shared.StatusSummaryEvent
			if json.Unmarshal(n.Payload, &ev) == nil && ev.TaskID == tasks[0] {
				round.arrive(i, ev.StatusSummary.QueuedPromptCount, n.At)
			}
		}
	}, func(ctx context.Context, f *wsClient) error {
		return f.call(ctx, shared.ActionWorkspaceSubscribe, map[string]any{"workspace_id": ws}, nil)
	})
	if err != nil {
		return rep, err
	}
	defer closeAll(followers)
	for _, f := range followers {
		f.takeCounts()
	}
	if rss, err := srv.rssKiB(); err == nil {
		rep.ServerRSSMiB = mib(rss)
	}

	b.logf("%d summary changes", cfg.FanoutRuns)
	var first, median, last []time.Duration
	cpu := startCPU(srv)
	for i := range cfg.FanoutRuns {
		want := 1 - i%2
		var queueID string
		if want == 0 {
			var q shared.QueueResponse
			if err := c.call(ctx, shared.ActionMessageQueueGet, shared.SessionRef{SessionID: session}, &q); err != nil {
				return rep, err
			}
			if len(q.Queue) != 1 {
				return rep, fmt.Errorf("iteration %d: queue holds %d prompts, want 1", i, len(q.Queue))
			}
			queueID = q.Queue[0].ID
		}
		done := round.begin(len(followers), want)
		if want == 1 {
			resp, _, err := addMessage(ctx, c, session, fmt.Sprintf("later %d", i))
			if err != nil {
				return rep, err
			}
			if resp.Outcome != shared.OutcomeQueued {
				return rep, fmt.Errorf("iteration %d: message.add outcome %q, want queued behind the running turn", i, resp.Outcome)
			}
		} else if err := c.call(ctx, shared.ActionMessageQueueRemove, shared.QueueRemoveRequest{SessionID: session, QueueID: queueID}, nil); err != nil {
			return rep, err
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			rep.Incomplete++
		case <-ctx.Done():
			return rep, ctx.Err()
		}
		arrivals := round.end()
		if len(arrivals) > 0 {
			first = append(first, arrivals[0])
			median = append(median, arrivals[len(arrivals)/2])
			last = append(last, arrivals[len(arrivals)-1])
		}
	}
	rep.CPU = cpu.read()
	rep.FirstFollower, rep.MedianFollower, rep.LastFollower = summarize(first), summarize(median), summarize(last)
	counts := newFrameCounts()
	for _, f := range followers {
		counts.merge(f.takeCounts())
		if ended, rerr := f.ended(); ended {
			rep.FollowersClosed = append(rep.FollowersClosed, closeDescription(rerr))
		}
	}
	rep.FollowerFrames = counts.total()
	rep.FramesPerFollow = round3(float64(rep.FollowerFrames.Frames) / float64(len(followers)) / float64(cfg.FanoutRuns))
	b.logf("last follower p50 %.1f ms p99 %.1f ms; first follower p50 %.1f ms", rep.LastFollower.P50, rep.LastFollower.P99, rep.FirstFollower.P50)
	if rep.Incomplete > 0 {
		return rep, fmt.Errorf("%d of %d iterations did not reach every follower within 30 s", rep.Incomplete, cfg.FanoutRuns)
	}
	return rep, nil
}
