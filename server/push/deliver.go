package push

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/herd-dev/herd/shared"
)

// maxReasonBytes bounds the part of a push service's answer kept as its
// reason.
const maxReasonBytes = 200

// answer is how one request ended.
type answer struct {
	// status is the push service's answer; 0 when none came.
	status int
	// retryAfter is its Retry-After, when it gave one.
	retryAfter    time.Duration
	hasRetryAfter bool
	// reason is the start of its answer's body, one line.
	reason string
	// wrote is when the request left herd.
	wrote time.Time
	// err is a request that failed: before it left herd when local is
	// set (the device's keys do not encrypt), else on the way.
	err   error
	local bool
}

// deliver sends it, the head message of lane l, and decides what follows:
// done, retried later (the lane parked until then), or given up.
func (s *Sender) deliver(l *lane, it *item) {
	s.mu.Lock()
	aborting := s.aborting
	s.mu.Unlock()
	now := s.clock.Now()
	switch {
	case aborting:
		s.finish(l)
		s.drop([]*item{it}, OutcomeClosed, ErrClosed)
		return
	case !now.Before(it.deadline):
		s.finish(l)
		s.expire(it, 0)
		return
	}
	it.attempts++
	a := s.attempt(it, now)
	host := hostOf(it.target.Endpoint)
	switch {
	case a.err == nil && (a.status == http.StatusOK || a.status == http.StatusCreated || a.status == http.StatusAccepted):
		s.storeCall(func(ctx context.Context) error { return s.cfg.Devices.MarkPushSent(ctx, it.target.ID, a.wrote) })
		s.finish(l)
		r := Result{Outcome: OutcomeSent, Status: a.status}
		if !it.eventAt.IsZero() {
			r.Latency = a.wrote.Sub(it.eventAt)
			s.cfg.Metrics.sentAfter(r.Latency)
		}
		s.report(it, r)

	case a.err == nil && (a.status == http.StatusNotFound || a.status == http.StatusGone):
		s.storeCall(func(ctx context.Context) error {
			dropped, err := s.cfg.Devices.DropPushDevice(ctx, it.target.ID, it.target.Endpoint)
			if dropped {
				s.cfg.Metrics.prunedDevice()
			}
			return err
		})
		s.log.Info("push device removed: its push service no longer knows it",
			"device", it.target.ID, "service", host, "status", a.status)
		err := shared.Errorf(shared.CodeUnavailable, "the push service no longer knows this device (%d): it was removed", a.status)
		s.dropLane(l, OutcomeGone, err)
		s.finish(l)
		s.report(it, Result{Outcome: OutcomeGone, Status: a.status, Err: err})

	case a.err != nil && s.ctx.Err() != nil:
		// Close gave up waiting and cancelled the request.
		s.finish(l)
		s.drop([]*item{it}, OutcomeClosed, ErrClosed)

	case a.err != nil && a.local:
		s.finish(l)
		s.log.Warn("push not sent: it could not be made for the device", "device", it.target.ID, "error", a.err)
		s.report(it, Result{Outcome: OutcomeFailed, Err: shared.Errorf(shared.CodeUnavailable, "the push could not be made for this device: %v", a.err)})

	case a.err != nil || a.status == http.StatusTooManyRequests || a.status >= 500:
		err := a.failure()
		switch {
		case it.reply != nil:
			s.finish(l)
			s.report(it, Result{Outcome: OutcomeFailed, Status: a.status, Err: err})
		case it.attempts >= s.cfg.MaxAttempts:
			s.finish(l)
			s.log.Warn("push given up after retries", "device", it.target.ID, "service", host, "attempts", it.attempts, "error", err)
			s.report(it, Result{Outcome: OutcomeExhausted, Status: a.status, Err: err})
		default:
			wait := backoff(it.attempts)
			if a.hasRetryAfter {
				wait = a.retryAfter
			}
			if !now.Add(wait).Before(it.deadline) {
				s.finish(l)
				s.expire(it, a.status)
				return
			}
			s.cfg.Metrics.retried()
			s.park(l, it, wait)
		}

	default:
		s.finish(l)
		err := a.failure()
		s.log.Warn("push service refused a push", "device", it.target.ID, "service", host, "status", a.status, "reason", a.reason)
		s.report(it, Result{Outcome: OutcomeRejected, Status: a.status, Err: err})
	}
}

// expire reports it given up because its TTL passed.
func (s *Sender) expire(it *item, status int) {
	s.report(it, Result{Outcome: OutcomeExpired, Status: status,
		Err: shared.Errorf(shared.CodeUnavailable, "the push expired before its push service accepted it")})
}

// failure is a's error as a person reads it.
func (a answer) failure() error {
	if a.err != nil {
		return shared.Errorf(shared.CodeUnavailable, "could not reach the push service: %v", a.err)
	}
	if a.reason == "" {
		a.reason = http.StatusText(a.status)
	}
	return shared.Errorf(shared.CodeUnavailable, "the push service answered %d: %s", a.status, a.reason)
}

// attempt makes one request for it at now: the payload stamped with
// SentAt, encrypted for the device and signed with the VAPID key, with
// what remains of its TTL.
func (s *Sender) attempt(it *item, now time.Time) answer {
	p := it.msg.Payload
	p.SentAt = now.UTC().Truncate(time.Millisecond)
	body, err := json.Marshal(p)
	if err != nil {
		return answer{err: err, local: true}
	}
	var wrote atomic.Int64
	ctx := httptrace.WithClientTrace(s.ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(s.clock.Now().UnixNano()) },
	})
	resp, err := webpush.SendNotificationWithContext(ctx, body,
		&webpush.Subscription{Endpoint: it.target.Endpoint, Keys: webpush.Keys{P256dh: it.target.P256dh, Auth: it.target.Auth}},
		&webpush.Options{
			HTTPClient:      s.client,
			Subscriber:      s.subscriber,
			Topic:           it.msg.Topic,
			TTL:             int(it.deadline.Sub(now) / time.Second),
			Urgency:         webpush.Urgency(it.msg.Urgency),
			VAPIDPublicKey:  s.cfg.VAPIDPublicKey,
			VAPIDPrivateKey: s.cfg.VAPIDPrivateKey,
		})
	if err != nil {
		// The client's errors are *url.Error; anything else arose while
		// encrypting or signing, before a request existed.
		var ue *url.Error
		return answer{err: err, local: !errors.As(err, &ue)}
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, reason: readReason(resp.Body)}
	if ns := wrote.Load(); ns != 0 {
		a.wrote = time.Unix(0, ns)
	} else {
		a.wrote = s.clock.Now()
	}
	if d, ok := retryAfter(resp.Header.Get("Retry-After"), s.clock.Now()); ok {
		a.retryAfter, a.hasRetryAfter = d, true
	}
	return a
}

// readReason reads the start of an answer's body as one line and drains
// the rest (bounded), so the connection can be reused.
func readReason(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, maxReasonBytes*4))
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	return shared.Clip(strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")), " "), maxReasonBytes)
}

// retryAfter parses a Retry-After header (seconds or an HTTP date) as a
// wait from now.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// backoff is the wait before the request after the attempts-th, when the
// push service gave no Retry-After.
func backoff(attempts int) time.Duration {
	d := firstBackoff
	for range attempts - 1 {
		if d *= 2; d >= maxBackoff {
			return maxBackoff
		}
	}
	return d
}

// storeCall runs a store call of a worker, bounded in time; a failure is
// logged, since the push's outcome does not depend on it.
func (s *Sender) storeCall(call func(context.Context) error) {
	ctx, cancel := context.WithTimeout(s.ctx, storeTimeout)
	defer cancel()
	if err := call(ctx); err != nil {
		s.log.Warn("push device record not updated", "error", err)
	}
}

// hostOf is an endpoint's host, for logs.
func hostOf(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil {
		return u.Host
	}
	return ""
}
