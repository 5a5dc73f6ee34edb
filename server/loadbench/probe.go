package loadbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/herd-dev/herd/shared"
)

// prober measures, on one connection, what a person notices: the round
// trip of a prompt to a quiet session and, when switchSession is set, a
// task switch (session.subscribe with its snapshot, then unsubscribe) to
// another quiet session. Prompts rotate over the quiet sessions and go
// only to one whose previous turn has settled, so every prompt is
// dispatched, never queued; when all are busy, the probe only switches.
// Its connection c is set once dialled, since observe must be that
// connection's notification handler from the start.
type prober struct {
	c             *wsClient
	switchSession string
	gap           time.Duration
	seq           *seqCheck // told when the switch session is closed; may be nil

	reply, toSettled, subscribe, unsubscribe timedSamples

	freed chan struct{} // a prompt session settled; capacity 1

	mu       sync.Mutex           // guards the fields below
	sent     map[string]time.Time // prompt session → when its running prompt was sent (zero: idle)
	order    []string             // prompt sessions in rotation order
	next     int                  // index in order of the next to try
	outcomes map[string]int       // message.add outcomes this phase
}

func newProber(promptSessions []string, switchSession string, gap time.Duration) *prober {
	p := &prober{
		switchSession: switchSession, gap: gap,
		freed:    make(chan struct{}, 1),
		sent:     map[string]time.Time{},
		order:    promptSessions,
		outcomes: map[string]int{},
	}
	for _, s := range promptSessions {
		p.sent[s] = time.Time{}
	}
	return p
}

// observe watches the prober's connections for its sessions' settled
// turns. It runs on a reader goroutine and never blocks.
func (p *prober) observe(n benchNote) {
	if n.Action != "session.turn.settled" {
		return
	}
	sid := sessionOf(n.Payload)
	p.mu.Lock()
	sent, ok := p.sent[sid]
	if ok && !sent.IsZero() {
		p.sent[sid] = time.Time{}
	}
	p.mu.Unlock()
	if !ok || sent.IsZero() {
		return
	}
	p.toSettled.add(sent, n.At.Sub(sent))
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

// idleSession returns the next prompt session with no turn running, or "".
func (p *prober) idleSession() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.order {
		s := p.order[p.next]
		p.next = (p.next + 1) % len(p.order)
		if p.sent[s].IsZero() {
			return s
		}
	}
	return ""
}

func (p *prober) markSent(session string, at time.Time) {
	p.mu.Lock()
	p.sent[session] = at
	p.mu.Unlock()
}

// run probes until the deadline; the probe under way then finishes.
func (p *prober) run(ctx context.Context, until time.Time) error {
	for i := 0; time.Now().Before(until); i++ {
		s := p.idleSession()
		if s != "" {
			start := time.Now()
			p.markSent(s, start)
			resp, rtt, err := addMessage(ctx, p.c, s, fmt.Sprintf("ping %d", i))
			if err != nil {
				return err
			}
			p.reply.add(start, rtt)
			p.mu.Lock()
			p.outcomes[string(resp.Outcome)]++
			p.mu.Unlock()
		}
		if p.switchSession != "" {
			if err := p.taskSwitch(ctx); err != nil {
				return err
			}
		} else if s == "" {
			// Nothing to probe until a turn settles.
			select {
			case <-p.freed:
			case <-time.After(time.Until(until)):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := pause(ctx, p.gap); err != nil {
			return err
		}
	}
	return nil
}

// taskSwitch opens the switch session with its snapshot and closes it.
func (p *prober) taskSwitch(ctx context.Context) error {
	start := time.Now()
	raw, rtt, err := p.c.roundTrip(ctx, shared.ActionSessionSubscribe, shared.SessionRef{SessionID: p.switchSession})
	if err != nil {
		return err
	}
	var resp shared.SessionSubscribeResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("decode session.subscribe response: %w", err)
	}
	if !resp.Joined || resp.Snapshot == nil {
		return errors.New("session.subscribe of a closed session answered without a snapshot")
	}
	p.subscribe.add(start, rtt)
	start = time.Now()
	_, rtt, err = p.c.roundTrip(ctx, shared.ActionSessionUnsubscribe, shared.SessionRef{SessionID: p.switchSession})
	if err != nil {
		return err
	}
	if p.seq != nil {
		p.seq.forget(p.switchSession)
	}
	p.unsubscribe.add(start, rtt)
	return nil
}

// probeFigures are a prober's measurements over one phase.
type probeFigures struct {
	MessageAdd latency `json:"message_add"`
	// PromptToSettled runs from sending a prompt to reading its turn's
	// session.turn.settled.
	PromptToSettled latency        `json:"prompt_to_turn_settled"`
	Subscribe       *latency       `json:"subscribe_with_snapshot,omitempty"`
	Unsubscribe     *latency       `json:"unsubscribe,omitempty"`
	Outcomes        map[string]int `json:"outcomes"`
	// Unsettled counts prompts of the phase whose turn had not settled
	// when the figures were taken.
	Unsettled int `json:"turns_not_settled"`
}

// figures summarises the samples taken in [from, to).
func (p *prober) figures(from, to time.Time) probeFigures {
	f := probeFigures{
		MessageAdd:      summarize(p.reply.between(from, to)),
		PromptToSettled: summarize(p.toSettled.between(from, to)),
	}
	if p.switchSession != "" {
		sub, unsub := summarize(p.subscribe.between(from, to)), summarize(p.unsubscribe.between(from, to))
		f.Subscribe, f.Unsubscribe = &sub, &unsub
	}
	p.mu.Lock()
	f.Outcomes, p.outcomes = p.outcomes, map[string]int{}
	for _, sent := range p.sent {
		if !sent.IsZero() && !sent.Before(from) && sent.Before(to) {
			f.Unsettled++
		}
	}
	p.mu.Unlock()
	return f
}

// seqCheck follows the seq numbers of one connection's session
// notifications (docs/protocol.md, "Session stream"): each notification
// takes the next number except an intermediate session.message.updated,
// which repeats the last. Anything else is a gap: the client missed a
// frame. It is safe for concurrent use.
type seqCheck struct {
	mu   sync.Mutex        // guards last and gaps
	last map[string]uint64 // session → last seq seen
	gaps int64
}

func newSeqCheck() *seqCheck { return &seqCheck{last: map[string]uint64{}} }

// observe checks a session notification; others are ignored.
func (s *seqCheck) observe(n benchNote) {
	if !isSessionAction(n.Action) || n.Seq == 0 {
		return
	}
	sid := sessionOf(n.Payload)
	s.mu.Lock()
	defer s.mu.Unlock()
	last, seen := s.last[sid]
	if seen && n.Seq != last && n.Seq != last+1 {
		s.gaps++
	}
	s.last[sid] = n.Seq
}

// forget drops a session the connection has left; a new subscription
// numbers from the snapshot again.
func (s *seqCheck) forget(session string) {
	s.mu.Lock()
	delete(s.last, session)
	s.mu.Unlock()
}

func (s *seqCheck) count() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gaps
}

// cpuMeter measures the CPU time of the server, of its agents (the
// processes below it) and of the bench itself over a phase.
type cpuMeter struct {
	srv    *benchServer
	start  map[int]time.Duration // pid → CPU time at the start; the server, its agents and the bench
	agents []int
}

func startCPU(srv *benchServer) *cpuMeter {
	m := &cpuMeter{srv: srv, start: map[int]time.Duration{}, agents: descendants(srv.pid())}
	for _, pid := range append([]int{srv.pid(), os.Getpid()}, m.agents...) {
		if t, err := processCPU(pid); err == nil {
			m.start[pid] = t
		}
	}
	return m
}

// cpuFigures are CPU seconds used over a phase. On a machine of n cores a
// phase of d seconds has n·d to share.
type cpuFigures struct {
	ServerS float64 `json:"server_cpu_s"`
	AgentsS float64 `json:"agents_cpu_s"`
	BenchS  float64 `json:"bench_cpu_s"`
}

func (m *cpuMeter) read() cpuFigures {
	used := func(pid int) float64 {
		t0, ok := m.start[pid]
		if !ok {
			return 0
		}
		t, err := processCPU(pid)
		if err != nil {
			return 0
		}
		return (t - t0).Seconds()
	}
	f := cpuFigures{ServerS: round3(used(m.srv.pid())), BenchS: round3(used(os.Getpid()))}
	var agents float64
	for _, pid := range m.agents {
		agents += used(pid)
	}
	f.AgentsS = round3(agents)
	return f
}
