package server

import (
	"context"
	"sync"
	"time"
)

// Readiness probe bounds: one database check at a time, answered from the
// last result for readinessCacheFor, each check given readinessTimeout.
const (
	readinessTimeout  = 2 * time.Second
	readinessCacheFor = time.Second
)

// databaseCheck answers whether the database takes work, for /readyz. A
// load balancer probing often costs the database one ping per
// readinessCacheFor, not one per probe, and a slow check makes probes wait
// for it rather than pile up.
type databaseCheck struct {
	ping func(context.Context) error

	mu      sync.Mutex // held for a whole check, so checks never overlap
	checked time.Time
	err     error
}

// check returns the outcome of the newest check and whether it ran one now,
// which it does when the last is older than readinessCacheFor. The check
// does not end with the probe that asked for it: a probe that gave up must
// not leave its cancellation as the answer to the next ones.
func (d *databaseCheck) check(ctx context.Context) (err error, fresh bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.checked.IsZero() && time.Since(d.checked) < readinessCacheFor {
		return d.err, false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readinessTimeout)
	defer cancel()
	d.err = d.ping(ctx)
	d.checked = time.Now()
	return d.err, true
}
