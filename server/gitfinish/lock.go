package gitfinish

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/herd-dev/herd/shared"
)

// dirs serializes the commits and pushes of each working tree.
var dirs = &locks{held: make(map[string]*dirLock)}

// acquire takes dir's lock for an operation called what whose bound,
// opCtx, ends after bound; parent is the caller's context.
func acquire(parent, opCtx context.Context, dir, what string, bound time.Duration) (unlock func(), err error) {
	unlock, err = dirs.lock(opCtx, dir)
	switch {
	case err == nil:
		return unlock, nil
	case parent.Err() != nil:
		return nil, fmt.Errorf("%s: %w", what, parent.Err())
	}
	return nil, shared.Errorf(shared.CodeUnavailable,
		"%s: another commit or push of this working tree was still running after %v", what, bound)
}

// locks holds one lock per directory while anyone holds or waits for it,
// so that it costs nothing for the directories no one is finishing.
type locks struct {
	mu sync.Mutex
	// held maps a directory's key (see lockKey) to its lock. Guarded by mu.
	held map[string]*dirLock
}

// dirLock is one directory's lock.
type dirLock struct {
	// token holds a value while the lock is held; a channel rather than a
	// mutex so that waiting for it can end with a context.
	token chan struct{}
	// users counts those holding or waiting for it. Guarded by locks.mu.
	users int
}

// lock takes dir's lock, waiting for it until ctx ends, and returns the
// function that releases it.
func (l *locks) lock(ctx context.Context, dir string) (unlock func(), err error) {
	key := lockKey(dir)
	l.mu.Lock()
	d := l.held[key]
	if d == nil {
		d = &dirLock{token: make(chan struct{}, 1)}
		l.held[key] = d
	}
	d.users++
	l.mu.Unlock()
	select {
	case d.token <- struct{}{}:
		return func() {
			<-d.token
			l.leave(key, d)
		}, nil
	case <-ctx.Done():
		l.leave(key, d)
		return nil, ctx.Err()
	}
}

// leave drops one user of key's lock d, and the lock with its last user.
func (l *locks) leave(key string, d *dirLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d.users--; d.users == 0 {
		delete(l.held, key)
	}
}

// lockKey names dir's lock: its absolute path with symbolic links
// resolved, so that two spellings of one directory share a lock.
func lockKey(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}
