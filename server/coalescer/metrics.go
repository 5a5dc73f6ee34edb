package coalescer

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// reasonNames are the values of the "reason" label, by reason.
var reasonNames = [numReasons]string{
	reasonOpen:     "open",
	reasonWindow:   "window",
	reasonBarrier:  "barrier",
	reasonShutdown: "shutdown",
}

// Metrics counts what every Coalescer of a process does. Its only label is
// the publication reason: sessions and content never become labels. A nil
// *Metrics counts nothing.
type Metrics struct {
	chunks       prometheus.Counter
	publications [numReasons]prometheus.Counter
	coalesced    prometheus.Counter
	bytes        prometheus.Counter
	barriers     prometheus.Counter
	waits        prometheus.Counter
}

// NewMetrics returns Metrics whose collectors are registered with reg:
//
//   - herd_coalescer_chunks_total: non-empty chunks received;
//   - herd_coalescer_publications_total{reason}: opens and appends handed to
//     the sink, by what triggered them — "open" (a message's first bytes),
//     "window", "barrier" or "shutdown" (a flush of pending bytes);
//   - herd_coalescer_coalesced_chunks_total: chunks that did not cause a
//     publication of their own (a publication of n chunks adds n-1);
//   - herd_coalescer_bytes_total: text bytes published;
//   - herd_coalescer_barriers_total: barriers passed through;
//   - herd_coalescer_backpressure_waits_total: Chunk or Barrier calls that
//     waited for a slow sink.
//
// A nil reg leaves the collectors unregistered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	newCounter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	pubs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herd_coalescer_publications_total",
		Help: "Stream publications (opens and appends) handed to the sink, by reason.",
	}, []string{"reason"})
	m := &Metrics{
		chunks: newCounter("herd_coalescer_chunks_total",
			"Non-empty stream chunks received by coalescers."),
		coalesced: newCounter("herd_coalescer_coalesced_chunks_total",
			"Stream chunks published together with an earlier chunk of the same message."),
		bytes: newCounter("herd_coalescer_bytes_total",
			"Stream text bytes published by coalescers."),
		barriers: newCounter("herd_coalescer_barriers_total",
			"Barrier events passed through coalescers."),
		waits: newCounter("herd_coalescer_backpressure_waits_total",
			"Chunk or barrier calls that waited for a slow sink."),
	}
	for r, name := range reasonNames {
		m.publications[r] = pubs.WithLabelValues(name)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.chunks, pubs, m.coalesced, m.bytes, m.barriers, m.waits} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register coalescer metrics: %w", err)
		}
	}
	return m, nil
}

// received counts n chunks taken from the queue.
func (m *Metrics) received(n int) {
	if m == nil || n == 0 {
		return
	}
	m.chunks.Add(float64(n))
}

// published counts one publication of chunks chunks and n bytes.
func (m *Metrics) published(r reason, chunks, n int) {
	if m == nil {
		return
	}
	m.publications[r].Inc()
	m.coalesced.Add(float64(chunks - 1))
	m.bytes.Add(float64(n))
}

// barrier counts one barrier passed through.
func (m *Metrics) barrier() {
	if m != nil {
		m.barriers.Inc()
	}
}

// waited counts one producer call that had to wait for room.
func (m *Metrics) waited() {
	if m != nil {
		m.waits.Inc()
	}
}
