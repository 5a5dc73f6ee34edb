package faults

import (
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// The outage scenario's shape.
const (
	// outageLength is how long the database is away: longer than
	// SQLite's 5 s busy timeout, so writes fail rather than wait it out.
	outageLength   = 8 * time.Second
	outageSessions = 4
	// outageChunks at 5 ms apart stream for about four seconds when
	// nothing blocks them, so every stream is under way when the outage
	// begins and is held up by it.
	outageChunks = 800
	outageQueued = 2
	// attemptsUntil is how far into the outage a prompt attempt may
	// start: one on SQLite waits out the 5 s busy timeout, so an attempt
	// started later would be answered only after the outage.
	attemptsUntil = outageLength - 5500*time.Millisecond
)

// database is a database herd can be pointed at and a way to take it away
// and give it back.
type database struct {
	serve serveOptions
	// begin takes the database away once herd runs on it; end gives it
	// back.
	begin func(h *herd)
	end   func()
}

// databases lists the two databases the outage scenario runs on.
var databases = []struct {
	name string
	open func(t *testing.T) database
}{
	{"sqlite", func(t *testing.T) database {
		// Another connection holds SQLite's write lock, as a backup tool
		// or a second process would.
		var release func()
		return database{
			begin: func(h *herd) { release = storetest.LockSQLite(t, filepath.Join(h.dataDir, "herd.db")) },
			end:   func() { release() },
		}
	}},
	{"postgres", func(t *testing.T) database {
		pg := storetest.OwnPostgres(t)
		return database{
			serve: serveOptions{databaseURL: pg.CreateDatabase("herd")},
			begin: func(*herd) { pg.Stop() },
			end:   pg.Start,
		}
	}},
}

// Streams running through a database outage lose nothing: while the
// database is away /readyz answers 503 and prompts are refused as
// unavailable (and never stored); the agents' output waits for the
// database, so once it is back every stream is stored whole, every
// acknowledged prompt runs exactly once and no session stays RUNNING.
func TestDatabaseOutageLosesNothing(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			rec := record(t)
			d := db.open(t)
			h := startHerd(t, d.serve)
			f := newFleet(t, h, outageSessions, outageChunks)
			f.startStreams(5, outageQueued)
			f.waitStreaming(40)

			rec.want("outage_requests_refused", ">=1")
			rec.want("outage_acked_before_end", "0")
			rec.want("outage_answers_wrong", "0")
			rec.want("readyz_503_during_outage", ">=1")
			d.begin(h)
			o := &outage{began: time.Now(), ended: make(chan struct{})}
			probes := probeReadiness(h)
			var attempts sync.WaitGroup
			for _, m := range f.members {
				attempts.Go(func() { f.attemptDuring(rec, m, o) })
			}
			o.await(t)
			// A probe still in flight was asked during the outage and
			// counts as such.
			close(probes.stopc)
			d.end()
			end := time.Now()
			close(o.ended)
			notReady, ready := probes.wait()
			rec.add("readyz_503_during_outage", notReady)
			rec.add("readyz_200_during_outage", ready)
			rec.millis("outage", end.Sub(o.began))
			h.waitReady(30 * time.Second)
			rec.millis("outage_end_until_ready", time.Since(end))
			attempts.Wait()
			rec.millis("slowest_refusal", o.slowest())
			all := f.settle(60 * time.Second)
			rec.millis("outage_end_until_settled", time.Since(end))
			f.verify(rec, all, streamEnd{whole: true})
		})
	}
}

// outage is one database outage in progress.
type outage struct {
	began time.Time
	ended chan struct{} // closed once the database is back
	// refused counts requests refused as unavailable.
	refused atomic.Int32
	mu      sync.Mutex // guards slowestRefusal
	// slowestRefusal is the longest a refused request waited for its
	// answer.
	slowestRefusal time.Duration
}

// await returns once the outage has lasted outageLength and at least one
// request has been refused, so that the refusal is always seen: on SQLite
// writes queue for the single writer connection, each waiting out the
// busy timeout, so the first answer may come later than 5 s.
func (o *outage) await(t *testing.T) {
	time.Sleep(time.Until(o.began.Add(outageLength))) // the outage's length, not a synchronisation
	deadline := time.Now().Add(40 * time.Second)
	for o.refused.Load() == 0 {
		if time.Now().After(deadline) {
			t.Errorf("no request was refused within %s of the outage", time.Since(o.began))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (o *outage) over() bool {
	select {
	case <-o.ended:
		return true
	default:
		return false
	}
}

func (o *outage) slowest() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.slowestRefusal
}

// attemptDuring sends the member prompts during the outage, one a second
// while attemptsUntil has not passed. Each must be refused as unavailable
// while the database is away; one answered after it is back may have been
// taken, and then counts as acknowledged like any other.
func (f *fleet) attemptDuring(rec *scenario, m *member, o *outage) {
	for k := 0; time.Since(o.began) < attemptsUntil; k++ {
		id := fmt.Sprintf("o-%s-%d", m.name, k)
		sent := time.Now()
		// Longer than the server's 30 s request timeout, so its answer is
		// what ends the wait.
		ctx, cancel := timeout(45 * time.Second)
		_, err := f.send(ctx, prompt{id, m.session, "echo " + id})
		cancel()
		took, over := time.Since(sent), o.over()
		switch code := codeOf(err); {
		case code == string(shared.CodeUnavailable):
			rec.add("outage_requests_refused", 1)
			o.refused.Add(1)
			o.mu.Lock()
			o.slowestRefusal = max(o.slowestRefusal, took)
			o.mu.Unlock()
		case code == "" && !over:
			rec.add("outage_acked_before_end", 1)
			f.t.Errorf("%s: message.add was acknowledged while the database was away", m.name)
		case code == "":
			rec.add("outage_requests_taken_after_end", 1)
		default:
			rec.add("outage_answers_wrong", 1)
			f.t.Errorf("%s: message.add during the outage answered %q after %s, want unavailable", m.name, code, took)
		}
		time.Sleep(time.Until(o.began.Add(time.Duration(k+1) * time.Second)))
	}
}

// readinessProbe asks /readyz every 200 ms until stopc is closed.
type readinessProbe struct {
	stopc chan struct{}
	done  chan struct{}
	// notReady and ready count the answers; set before done closes.
	notReady, ready int
}

func probeReadiness(h *herd) *readinessProbe {
	p := &readinessProbe{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			switch h.readyz() {
			case http.StatusServiceUnavailable:
				p.notReady++
			case http.StatusOK:
				p.ready++
			}
			select {
			case <-p.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// wait waits for the probe to end once stopc is closed and returns its
// counts.
func (p *readinessProbe) wait() (notReady, ready int) {
	<-p.done
	return p.notReady, p.ready
}
