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

// check returns the outcome of the newest check, running one when the last
// is older than readinessCacheFor.
func (d *databaseCheck) check(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.checked.IsZero() && time.Since(d.checked) < readinessCacheFor {
		return d.err
	}
	ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
	defer cancel()
	d.err = d.ping(ctx)
	d.checked = time.Now()
	return d.err
}
