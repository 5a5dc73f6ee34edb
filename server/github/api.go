package github

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// REST API limits and defaults.
const (
	// maxResponseBytes bounds the body of one API response.
	maxResponseBytes = 10 << 20
	// secondaryBackoff is how long to wait after a rate-limit answer that
	// says nothing of when to retry, as GitHub's documentation advises.
	secondaryBackoff = time.Minute
	// minBackoff is the least wait after a rate-limit answer, so that a
	// reset time already past by the local clock cannot make a hot loop.
	minBackoff = time.Second
	// maxBackoff caps a wait whatever the headers say: GitHub's rate-limit
	// window is an hour.
	maxBackoff = time.Hour
)

// api is a client of GitHub's REST API that revalidates what it fetched
// before with ETags and waits out rate limits. It is safe for concurrent
// use.
type api struct {
	base   string
	token  string
	client *http.Client
	limit  limiter

	mu sync.Mutex
	// cache holds the last answer to each path with its ETag. Guarded by
	// mu.
	cache map[string]cached
	// round counts the poll rounds; an entry not used in the current round
	// is dropped at its end, so the cache holds only what is still polled.
	// Guarded by mu.
	round uint64
}

// cached is the last answer to one path.
type cached struct {
	etag  string
	value any
	round uint64
}

// get fetches path (relative to the API's base URL) and decodes it as a T.
// It sends the ETag of the answer it has; changed is false when GitHub
// answered 304 Not Modified, which does not count against the rate limit,
// and the cached answer is returned.
func get[T any](ctx context.Context, a *api, path string) (v T, changed bool, err error) {
	a.mu.Lock()
	entry, ok := a.cache[path]
	a.mu.Unlock()
	if _, typed := entry.value.(T); !typed {
		ok = false
	}
	resp, err := a.do(ctx, path, entry.etag, ok)
	if err != nil {
		return v, false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && ok:
		a.keep(path, entry)
		return entry.value.(T), false, nil
	case resp.StatusCode != http.StatusOK:
		return v, false, a.failure(resp, path)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(&v); err != nil {
		return v, false, fmt.Errorf("decode GitHub's answer to %s: %w", path, err)
	}
	if etag := resp.Header.Get("ETag"); etag != "" {
		a.keep(path, cached{etag: etag, value: v})
	}
	return v, true, nil
}

// do sends one GET request once the rate limit allows it.
func (a *api) do(ctx context.Context, path, etag string, conditional bool) (*http.Response, error) {
	if err := a.limit.wait(ctx); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "herd")
	req.Header.Set("Authorization", "Bearer "+a.token)
	if conditional {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", path, err)
	}
	a.limit.observe(resp, time.Now())
	return resp, nil
}

// failure turns an answer other than 200 and 304 into an error, holding
// further requests back when it is a rate-limit answer without headers
// saying for how long.
func (a *api) failure(resp *http.Response, path string) error {
	var body struct {
		Message string `json:"message"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
	limited := resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode == http.StatusForbidden && strings.Contains(strings.ToLower(body.Message), "rate limit"))
	if now := time.Now(); limited && !a.limit.holding(now) {
		a.limit.hold(now, now.Add(secondaryBackoff))
	}
	return fmt.Errorf("GitHub answered %s to %s: %s", resp.Status, path, body.Message)
}

// keep stores an answer as used in the current round.
func (a *api) keep(path string, c cached) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c.round = a.round
	a.cache[path] = c
}

// forget drops the cached answers to paths, so that the next round
// fetches them in full.
func (a *api) forget(paths ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range paths {
		delete(a.cache, p)
	}
}

// endRound drops the answers the ending round did not use and starts the
// next round.
func (a *api) endRound() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, c := range a.cache {
		if c.round != a.round {
			delete(a.cache, p)
		}
	}
	a.round++
}

// limiter holds requests back while GitHub's rate limit is exhausted.
type limiter struct {
	mu sync.Mutex
	// until is when requests may resume. Guarded by mu.
	until time.Time
}

// wait returns once requests may be sent, or with ctx's error.
func (l *limiter) wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		d := time.Until(l.until)
		l.mu.Unlock()
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// observe reads the rate-limit headers of an answer received at now:
// an exhausted limit holds requests until its reset, and a rate-limit
// answer with Retry-After holds them that long.
func (l *limiter) observe(resp *http.Response, now time.Time) {
	h := resp.Header
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests {
		if after, ok := retryAfter(h.Get("Retry-After"), now); ok {
			l.hold(now, after)
			return
		}
	}
	if h.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		l.hold(now, time.Unix(reset, 0))
	} else {
		l.hold(now, now.Add(secondaryBackoff))
	}
}

// hold keeps requests back until until, at least minBackoff and at most
// maxBackoff after now, never shortening a longer hold.
func (l *limiter) hold(now, until time.Time) {
	if lo := now.Add(minBackoff); until.Before(lo) {
		until = lo
	}
	if hi := now.Add(maxBackoff); until.After(hi) {
		until = hi
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if until.After(l.until) {
		l.until = until
	}
}

// holding reports whether requests are held back at now.
func (l *limiter) holding(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.Before(l.until)
}

// retryAfter parses a Retry-After header (seconds or an HTTP date)
// received at now.
func retryAfter(v string, now time.Time) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return now.Add(time.Duration(s) * time.Second), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, true
	}
	return time.Time{}, false
}
