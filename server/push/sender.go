package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/clock"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// DefaultSubscriber is the VAPID contact (the JWT's sub) when none is
// configured.
const DefaultSubscriber = "mailto:herd@localhost"

// Defaults of Config.
const (
	DefaultWorkers     = 4
	DefaultQueueLength = 64
	DefaultMaxAttempts = 8
	// DefaultRequestTimeout bounds one request to a push service.
	DefaultRequestTimeout = 30 * time.Second
)

// Retry backoff without Retry-After: firstBackoff, doubling up to
// maxBackoff.
const (
	firstBackoff = time.Second
	maxBackoff   = 5 * time.Minute
)

// Devices is what the Sender needs of the store.
type Devices interface {
	// MarkPushSent records that a push to the device was accepted.
	MarkPushSent(ctx context.Context, deviceID string, at time.Time) error
	// DropPushDevice removes a device whose push service no longer knows
	// its subscription at endpoint.
	DropPushDevice(ctx context.Context, deviceID, endpoint string) (bool, error)
}

// storeTimeout bounds one store call of a worker.
const storeTimeout = 5 * time.Second

// Config configures a Sender.
type Config struct {
	// Devices records deliveries and removes forgotten devices. Required.
	Devices Devices
	// VAPIDPublicKey and VAPIDPrivateKey are the server's key pair
	// (store.VAPIDKeys). Required.
	VAPIDPublicKey  string
	VAPIDPrivateKey string
	// Subscriber is the contact push services see: "mailto:<address>" or
	// an https:// URL; empty means DefaultSubscriber.
	Subscriber string
	// Client makes the requests; nil means one with DefaultRequestTimeout
	// that does not follow redirects.
	Client *http.Client
	// Workers bounds the requests in flight at once; 0 means
	// DefaultWorkers.
	Workers int
	// QueueLength bounds the messages waiting per device; 0 means
	// DefaultQueueLength. Messages of one tag (task) replace each other,
	// so it bounds the tasks with news for a device that is slow to take
	// them.
	QueueLength int
	// MaxAttempts bounds the requests made for one message; 0 means
	// DefaultMaxAttempts.
	MaxAttempts int
	// Clock is the time source; nil means the time package's.
	Clock clock.Clock
	// Logger receives what push services refused; nil discards it.
	Logger *slog.Logger
	// Metrics counts outcomes; nil counts nothing.
	Metrics *Metrics
	// OnResult, if set, is told every message's outcome, from the
	// goroutine that decided it (a worker, or Send's caller for a message
	// that Send dropped). It must return quickly and not call the Sender.
	OnResult func(Result)
}

// Outcome is what became of a message.
type Outcome string

// The outcomes of a message.
const (
	// OutcomeSent: the push service accepted it (200, 201 or 202).
	OutcomeSent Outcome = "sent"
	// OutcomeGone: the push service no longer knows the device (404 or
	// 410); the device was removed.
	OutcomeGone Outcome = "gone"
	// OutcomeRejected: the push service answered otherwise.
	OutcomeRejected Outcome = "rejected"
	// OutcomeExpired: its TTL passed before it was accepted.
	OutcomeExpired Outcome = "expired"
	// OutcomeExhausted: MaxAttempts requests were answered 429, 5xx or
	// failed.
	OutcomeExhausted Outcome = "exhausted"
	// OutcomeFailed: herd could not make the request (a device's keys
	// that do not encrypt); a SendNow's retryable failure too.
	OutcomeFailed Outcome = "failed"
	// OutcomeReplaced: a newer message with its tag took its place while
	// it waited.
	OutcomeReplaced Outcome = "replaced"
	// OutcomeOverflow: the device's queue was full; the oldest waiting
	// message is dropped for the new one.
	OutcomeOverflow Outcome = "overflow"
	// OutcomeClosed: the Sender stopped before sending it.
	OutcomeClosed Outcome = "closed"
)

// Result is a message's outcome.
type Result struct {
	DeviceID string
	Kind     shared.PushKind
	Tag      string
	Outcome  Outcome
	// Status is the push service's last answer; 0 when none came.
	Status int
	// Attempts counts the requests made.
	Attempts int
	// Latency is from the event Send was given to the moment the accepted
	// request left herd; zero unless sent.
	Latency time.Duration
	// Err says why it was not sent; nil when sent.
	Err error
}

// Sender delivers Web Push messages to devices: one queue per device,
// served by a fixed pool of workers, in order per device. It is safe for
// concurrent use.
type Sender struct {
	cfg        Config
	client     *http.Client
	subscriber string
	clock      clock.Clock
	log        *slog.Logger

	// ctx is the context of requests and store calls; cancel ends it when
	// Close gives up draining.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// lanes are the devices with waiting or in-flight messages; guarded
	// by mu.
	lanes map[string]*lane
	// ready are the lanes with a message to send and none in flight,
	// served first in, first out; guarded by mu.
	ready []*lane
	// closing is set by Close; guarded by mu.
	closing bool
	// aborting is set when Close's deadline passes: workers drop what is
	// left instead of sending it; guarded by mu.
	aborting bool
	// closed is closed when Close has finished.
	closed chan struct{}

	// wake tells idle workers that a lane became ready; its capacity is
	// the number of workers, so a wake-up is never lost.
	wake chan struct{}
	// done is closed by Close to wake every worker.
	done    chan struct{}
	workers sync.WaitGroup
	// timers counts the retry timers that are pending or running.
	timers sync.WaitGroup
}

// ErrClosed is returned by Send and SendNow after Close.
var ErrClosed = shared.Errorf(shared.CodeUnavailable, "push delivery is shutting down")

// New starts a Sender's workers; Close stops them.
func New(cfg Config) (*Sender, error) {
	if cfg.Devices == nil || cfg.VAPIDPublicKey == "" || cfg.VAPIDPrivateKey == "" {
		return nil, errors.New("push: a sender needs the devices store and the VAPID key pair")
	}
	subscriber, err := libSubscriber(cfg.Subscriber)
	if err != nil {
		return nil, err
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.QueueLength <= 0 {
		cfg.QueueLength = DefaultQueueLength
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	s := &Sender{
		cfg: cfg, client: cfg.Client, subscriber: subscriber, clock: cfg.Clock, log: cfg.Logger,
		lanes:  map[string]*lane{},
		closed: make(chan struct{}),
		wake:   make(chan struct{}, cfg.Workers),
		done:   make(chan struct{}),
	}
	if s.client == nil {
		s.client = newClient()
	}
	if s.clock == nil {
		s.clock = clock.System{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for range cfg.Workers {
		s.workers.Add(1)
		go s.work()
	}
	return s, nil
}

// libSubscriber checks the configured VAPID contact and returns it as
// webpush-go takes it: the library prefixes "mailto:" to anything that is
// not an https: URL, so an address goes without its scheme.
func libSubscriber(sub string) (string, error) {
	if sub == "" {
		sub = DefaultSubscriber
	}
	if addr, ok := strings.CutPrefix(sub, "mailto:"); ok {
		if a, err := mail.ParseAddress(addr); err != nil || a.Address != addr {
			return "", fmt.Errorf("push: the VAPID subscriber %q is not mailto: and one address", sub)
		}
		return addr, nil
	}
	if u, err := url.Parse(sub); err != nil || u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("push: the VAPID subscriber %q is neither a mailto: address nor an https:// URL", sub)
	}
	return sub, nil
}

// newClient returns the default HTTP client of push requests: bounded in
// time, and not following redirects, which push services do not send.
func newClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = DefaultRequestTimeout
	return &http.Client{
		Transport: t,
		Timeout:   DefaultRequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// sentAtProbe is the longest SentAt a payload carries (stamped to the
// millisecond), used to check a payload's size before it is queued.
var sentAtProbe = time.Date(2006, 12, 22, 22, 22, 22, 222e6, time.UTC)

// checkPayload checks that m's payload, stamped, fits
// shared.MaxPushPayloadBytes.
func checkPayload(m Message) error {
	p := m.Payload
	p.SentAt = sentAtProbe
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode push message: %w", err)
	}
	if len(b) > shared.MaxPushPayloadBytes {
		return shared.Errorf(shared.CodeBadRequest, "a push message of %d bytes is over the %d a push carries", len(b), shared.MaxPushPayloadBytes)
	}
	return nil
}

// Send queues m for target without waiting. eventAt is when the event
// that caused it happened, the start of its latency. A newer message with
// the same tag replaces one still waiting for the device; a full queue
// drops its oldest waiting message. It fails only for a payload too large
// to push and after Close.
func (s *Sender) Send(target store.PushTarget, m Message, eventAt time.Time) error {
	if err := checkPayload(m); err != nil {
		return err
	}
	return s.enqueue(s.newItem(target, m, eventAt))
}

// SendNow sends m to target once, without retrying, after what is
// already queued for it, and returns nil once the push service accepted
// it. Otherwise the error is unavailable with the push service's answer
// (a device its service no longer knows is removed), or ctx's.
func (s *Sender) SendNow(ctx context.Context, target store.PushTarget, m Message, eventAt time.Time) error {
	if err := checkPayload(m); err != nil {
		return err
	}
	it := s.newItem(target, m, eventAt)
	it.reply = make(chan error, 1)
	if err := s.enqueue(it); err != nil {
		return err
	}
	select {
	case err := <-it.reply:
		return err
	case <-ctx.Done():
		s.withdraw(it)
		return fmt.Errorf("push to %s: %w", target.ID, errors.Join(shared.Errorf(shared.CodeUnavailable,
			"the push is still waiting its turn (its service asked herd to wait)"), ctx.Err()))
	}
}

// newItem makes a queue item of a message, its deadline its TTL from now.
func (s *Sender) newItem(target store.PushTarget, m Message, eventAt time.Time) *item {
	return &item{target: target, msg: m, eventAt: eventAt, deadline: s.clock.Now().Add(m.TTL)}
}

// Close stops taking messages and sends what is waiting, until ctx ends;
// then it cancels requests in flight and drops the rest (counted as
// closed). Messages waiting for a retry are dropped at once. When it
// returns no goroutine of the Sender runs. It returns ctx's error when
// it had to drop messages that were ready to send.
func (s *Sender) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.closed
		return nil
	}
	s.closing = true
	var dropped []*item
	for id, l := range s.lanes {
		if l.state == laneParked && l.timer.Stop() {
			s.timers.Done()
			dropped = append(dropped, l.items...)
			l.items, l.timer, l.state = nil, nil, laneIdle
			delete(s.lanes, id)
		}
	}
	close(s.done)
	s.mu.Unlock()
	s.drop(dropped, OutcomeClosed, ErrClosed)

	finished := make(chan struct{})
	go func() {
		s.workers.Wait()
		close(finished)
	}()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		err = fmt.Errorf("close push sender: %w", ctx.Err())
		s.mu.Lock()
		s.aborting = true
		s.mu.Unlock()
		s.cancel()
		<-finished
	}
	s.timers.Wait()
	s.cancel()
	s.client.CloseIdleConnections()
	close(s.closed)
	return err
}
