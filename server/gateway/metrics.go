package gateway

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the gateway's Prometheus collectors. Labels never carry
// transcript content or unbounded values: actions outside the protocol's
// vocabulary are counted as "unknown".
type metrics struct {
	connections   prometheus.Gauge
	requests      *prometheus.CounterVec   // action, code ("ok" on success)
	duration      *prometheus.HistogramVec // action
	notifications *prometheus.CounterVec   // action
	closes        *prometheus.CounterVec   // reason
	pings         *prometheus.CounterVec   // outcome
	queued        *prometheus.CounterVec   // queue class
	replaced      prometheus.Counter
	evicted       prometheus.Counter
	// yielded counts the evictions (also in evicted) that made room for
	// a semantic frame.
	yielded prometheus.Counter
	// queuedSemantic and queuedReplaceable are queued's two series,
	// looked up once rather than for every frame.
	queuedSemantic, queuedReplaceable prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "herd_ws_connections",
			Help: "Open WebSocket connections.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herd_ws_requests_total",
			Help: "WebSocket requests answered, by action and result code.",
		}, []string{"action", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herd_ws_request_duration_seconds",
			Help:    "Time from dispatching a request to queueing its answer.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"action"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herd_ws_notifications_total",
			Help: "Notifications queued to connections, by action.",
		}, []string{"action"}),
		closes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herd_ws_closes_total",
			Help: "Connections ended, by reason.",
		}, []string{"reason"}),
		pings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herd_ws_pings_total",
			Help: "Keepalive pings, by outcome: pong; held (unanswered while the connection's own reader or writer was busy, so tried again); timeout (the connection was closed).",
		}, []string{"outcome"}),
		queued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herd_ws_session_frames_queued_total",
			Help: "Session notifications queued to connections, by queue class (semantic, replaceable).",
		}, []string{"class"}),
		replaced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_ws_replaced_total",
			Help: "Queued intermediate message states replaced in place by a newer state.",
		}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_ws_evicted_total",
			Help: "Queued intermediate message states dropped to keep a session within its allowance or a connection within its byte bound.",
		}),
		yielded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_ws_evicted_for_ordered_total",
			Help: "Queued intermediate message states, of any session, dropped to make room under a connection's byte bound for an ordered notification (also counted in herd_ws_evicted_total).",
		}),
	}
	m.queuedSemantic = m.queued.WithLabelValues(string(laneSemantic))
	m.queuedReplaceable = m.queued.WithLabelValues(string(laneReplaceable))
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.connections, m.requests, m.duration, m.notifications, m.closes, m.pings, m.queued, m.replaced, m.evicted, m.yielded} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				continue
			}
			return nil, err
		}
	}
	return m, nil
}

// countYielded counts n queued states evicted for a semantic frame.
func (m *metrics) countYielded(n int) {
	if n > 0 {
		m.evicted.Add(float64(n))
		m.yielded.Add(float64(n))
	}
}
