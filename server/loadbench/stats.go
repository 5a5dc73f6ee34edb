package loadbench

import (
	"math"
	"slices"
	"sync"
	"time"
)

// latency summarises a set of durations in milliseconds. Percentiles are
// nearest-rank: p99 of fewer than 100 samples is the largest but one or
// the maximum, so read it together with n.
type latency struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

// summarize returns the latency figures of ds; zero when ds is empty.
func summarize(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return latency{
		N:    len(s),
		P50:  ms(percentile(s, 0.50)),
		P95:  ms(percentile(s, 0.95)),
		P99:  ms(percentile(s, 0.99)),
		Max:  ms(s[len(s)-1]),
		Mean: ms(sum / time.Duration(len(s))),
	}
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ms converts a duration to milliseconds with microsecond resolution.
func ms(d time.Duration) float64 { return round3(float64(d.Microseconds()) / 1000) }

// round3 keeps three decimals, enough for milliseconds and ratios.
func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// budget is a measured figure beside its limit from DESIGN.md.
type budget struct {
	Limit    float64 `json:"limit"`
	Measured float64 `json:"measured"`
	Unit     string  `json:"unit"`
	Pass     bool    `json:"pass"`
}

// atMost checks measured ≤ limit. A missing measurement (no samples)
// fails.
func atMost(measured, limit float64, unit string, haveSamples bool) *budget {
	return &budget{Limit: limit, Measured: measured, Unit: unit, Pass: haveSamples && measured <= limit}
}

// ratio returns a/b rounded, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round3(a / b)
}

// timedSamples collects durations stamped with when they were taken, so a
// run can be cut into phases afterwards. Safe for concurrent use.
type timedSamples struct {
	mu sync.Mutex // guards s
	s  []timedSample
}

type timedSample struct {
	at time.Time
	d  time.Duration
}

func (t *timedSamples) add(at time.Time, d time.Duration) {
	t.mu.Lock()
	t.s = append(t.s, timedSample{at, d})
	t.mu.Unlock()
}

// between returns the durations taken in [from, to).
func (t *timedSamples) between(from, to time.Time) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []time.Duration
	for _, s := range t.s {
		if !s.at.Before(from) && s.at.Before(to) {
			out = append(out, s.d)
		}
	}
	return out
}
