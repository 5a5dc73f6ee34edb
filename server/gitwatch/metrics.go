package gitwatch

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the Watchers of a process do. Repositories never
// become labels. A nil *Metrics counts nothing.
type Metrics struct {
	changed, unchanged, failed prometheus.Counter
	recordErrors               prometheus.Counter
	coalesced                  prometheus.Counter
	cpu                        prometheus.Counter
}

// NewMetrics returns Metrics whose collectors are registered with reg:
//
//   - herd_gitwatch_observations_total{result}: observations that ended,
//     by result — "changed" (handed to Record), "unchanged" (the same as
//     the last one recorded) or "failed" (Observe returned an error; one
//     whose message changed is handed to Record too);
//   - herd_gitwatch_record_errors_total: Record calls that returned an
//     error;
//   - herd_gitwatch_refreshes_coalesced_total: Refresh calls served by an
//     observation already queued or already due to follow the running
//     one, the queue's overflow policy;
//   - herd_gitwatch_git_cpu_seconds_total: user plus system CPU time of
//     the git processes that made the observations.
//
// A nil reg leaves the collectors unregistered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	results := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herd_gitwatch_observations_total",
		Help: "Git observations of task repositories that ended, by result.",
	}, []string{"result"})
	m := &Metrics{
		changed:   results.WithLabelValues("changed"),
		unchanged: results.WithLabelValues("unchanged"),
		failed:    results.WithLabelValues("failed"),
		recordErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_gitwatch_record_errors_total",
			Help: "Git observations the Record callback failed to store.",
		}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_gitwatch_refreshes_coalesced_total",
			Help: "Git refresh requests served by an observation already queued or following the running one.",
		}),
		cpu: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_gitwatch_git_cpu_seconds_total",
			Help: "User plus system CPU time of the git processes run for observations.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{results, m.recordErrors, m.coalesced, m.cpu} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register gitwatch metrics: %w", err)
		}
	}
	return m, nil
}

// observed counts an observation that ended with err, handed to Record if
// recorded.
func (m *Metrics) observed(err error, recorded bool) {
	switch {
	case m == nil:
	case err != nil:
		m.failed.Inc()
	case recorded:
		m.changed.Inc()
	default:
		m.unchanged.Inc()
	}
}

// recordFailed counts a Record call that returned an error.
func (m *Metrics) recordFailed() {
	if m != nil {
		m.recordErrors.Inc()
	}
}

// coalesce counts a Refresh that asked for no observation of its own.
func (m *Metrics) coalesce() {
	if m != nil {
		m.coalesced.Inc()
	}
}

// spent counts CPU time spent by git.
func (m *Metrics) spent(d time.Duration) {
	if m != nil && d > 0 {
		m.cpu.Add(d.Seconds())
	}
}
