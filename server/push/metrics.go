package push

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the Senders of a process do. Devices never become
// labels. A nil *Metrics counts nothing.
type Metrics struct {
	outcomes map[Outcome]prometheus.Counter
	retries  prometheus.Counter
	pruned   prometheus.Counter
	latency  prometheus.Histogram
}

// latencyBuckets span a loopback push service (milliseconds) to a slow
// one behind retries (tens of seconds).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// NewMetrics returns Metrics whose collectors are registered with reg:
//
//   - herd_push_messages_total{outcome}: messages that left the queue, by
//     outcome — "sent", "gone" (the device's push service no longer
//     knows it), "rejected" (another answer), "expired" (the TTL passed
//     before it was accepted), "exhausted" (retries used up), "failed"
//     (herd could not make the request, or a SendNow's one request
//     failed with what a Send would retry);
//   - herd_push_queue_drops_total{reason}: messages dropped before being
//     sent, by reason — "replaced" (a newer one of the same tag took its
//     place), "overflow" (the device's queue was full), "closed" (the
//     sender stopped);
//   - herd_push_retries_total: requests repeated after a 429, 5xx or
//     network error;
//   - herd_push_devices_pruned_total: devices removed because their push
//     service answered 404 or 410;
//   - herd_push_latency_seconds: from the event that caused a push to the
//     moment its accepted request left herd.
//
// A nil reg leaves the collectors unregistered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	messages := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herd_push_messages_total",
		Help: "Web Push messages that left the queue, by outcome.",
	}, []string{"outcome"})
	drops := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herd_push_queue_drops_total",
		Help: "Web Push messages dropped before being sent, by reason.",
	}, []string{"reason"})
	m := &Metrics{
		outcomes: map[Outcome]prometheus.Counter{},
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_push_retries_total",
			Help: "Web Push requests repeated after a 429, 5xx or network error.",
		}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_push_devices_pruned_total",
			Help: "Push devices removed because their push service answered 404 or 410.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herd_push_latency_seconds",
			Help:    "Time from the event that caused a push to its accepted request leaving herd.",
			Buckets: latencyBuckets,
		}),
	}
	for _, o := range []Outcome{OutcomeSent, OutcomeGone, OutcomeRejected, OutcomeExpired, OutcomeExhausted, OutcomeFailed} {
		m.outcomes[o] = messages.WithLabelValues(string(o))
	}
	for _, o := range []Outcome{OutcomeReplaced, OutcomeOverflow, OutcomeClosed} {
		m.outcomes[o] = drops.WithLabelValues(string(o))
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{messages, drops, m.retries, m.pruned, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register push metrics: %w", err)
		}
	}
	return m, nil
}

// result counts a message's outcome.
func (m *Metrics) result(r Result) {
	if m != nil {
		m.outcomes[r.Outcome].Inc()
	}
}

// sentAfter observes the latency of a sent message.
func (m *Metrics) sentAfter(d time.Duration) {
	if m != nil {
		m.latency.Observe(d.Seconds())
	}
}

// retried counts a repeated request.
func (m *Metrics) retried() {
	if m != nil {
		m.retries.Inc()
	}
}

// prunedDevice counts a device removed for its push service.
func (m *Metrics) prunedDevice() {
	if m != nil {
		m.pruned.Inc()
	}
}
