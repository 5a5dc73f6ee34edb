package sessions

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts the sessions' database writes that had to wait for the
// database, by outcome.
type metrics struct {
	retries   prometheus.Counter
	abandoned prometheus.Counter
}

// newMetrics registers the collectors with reg (none when nil):
//
//   - herd_session_write_retries_total: attempts of a session write
//     (agent output, a turn's end, a failure) that found the database
//     unavailable and were retried;
//   - herd_session_writes_abandoned_total: such writes given up (the
//     manager closed, or their caller's deadline passed), left for
//     start-up recovery or the next change to repair.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_session_write_retries_total",
			Help: "Session writes retried because the database was unavailable.",
		}),
		abandoned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_session_writes_abandoned_total",
			Help: "Session writes given up while the database was unavailable (at shutdown, or past their caller's deadline).",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.retries, m.abandoned} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register session metrics: %w", err)
		}
	}
	return m, nil
}
