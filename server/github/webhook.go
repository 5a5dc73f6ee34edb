package github

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/store"
)

// MaxPayloadBytes bounds a delivery's body: GitHub caps webhook payloads
// at 25 MB.
const MaxPayloadBytes = 25 << 20

// errTooLarge refuses a payload longer than MaxPayloadBytes.
var errTooLarge = fmt.Errorf("payload exceeds %d bytes", MaxPayloadBytes)

// Delivery records are pruned hourly once they are a week old, well past
// the three days for which GitHub offers to redeliver a delivery.
const (
	deliveryRetention = 7 * 24 * time.Hour
	pruneEvery        = time.Hour
)

// Marker is told which tasks' pull requests changed, after the change was
// committed; *projector.Projector is one.
type Marker interface {
	Mark(taskID string)
}

// DeliveryStore is what the Webhook needs of the store; *store.Store is
// one.
type DeliveryStore interface {
	ApplyDelivery(ctx context.Context, deliveryID, event string, apply func(*store.PullRequestTx) error) (fresh bool, changedTasks []string, err error)
	PruneDeliveries(ctx context.Context, before time.Time) (int64, error)
}

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Secret is the webhook's secret, as configured on GitHub; required.
	Secret string
	// Store keeps deliveries and pull requests; required.
	Store DeliveryStore
	// Marker is told which tasks changed; required.
	Marker Marker
	// Logger receives rejected and failed deliveries; nil discards them.
	Logger *slog.Logger
}

// Webhook is the http.Handler GitHub delivers webhook events to. It is
// safe for concurrent use.
type Webhook struct {
	secret []byte
	store  DeliveryStore
	marker Marker
	log    *slog.Logger
	now    func() time.Time

	pruneMu sync.Mutex
	// nextPrune is when a fresh delivery next prunes old records. Guarded
	// by pruneMu.
	nextPrune time.Time
}

// NewWebhook returns a Webhook. Without a secret it refuses: an unsigned
// endpoint would let anyone rewrite pull request state, so a server
// without a secret does not serve the route at all.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	switch {
	case cfg.Secret == "":
		return nil, errors.New("github webhook: a secret is required")
	case cfg.Store == nil:
		return nil, errors.New("github webhook: a store is required")
	case cfg.Marker == nil:
		return nil, errors.New("github webhook: a marker is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Webhook{secret: []byte(cfg.Secret), store: cfg.Store, marker: cfg.Marker, log: log, now: time.Now}, nil
}

// ServeHTTP verifies and applies one delivery. See the package
// documentation for the status codes it answers with.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		reply(rw, http.StatusMethodNotAllowed, "GitHub webhooks are delivered with POST")
		return
	}
	body, err := readPayload(rw, r)
	switch {
	case errors.Is(err, errTooLarge):
		reply(rw, http.StatusRequestEntityTooLarge, err.Error())
		return
	case err != nil:
		reply(rw, http.StatusBadRequest, "could not read the payload")
		return
	}
	delivery, event := r.Header.Get("X-GitHub-Delivery"), r.Header.Get("X-GitHub-Event")
	if !w.signed(r.Header.Get("X-Hub-Signature-256"), body) {
		w.log.Warn("github webhook: rejected a delivery with a missing or wrong signature",
			"delivery", delivery, "event", event, "remote", r.RemoteAddr)
		reply(rw, http.StatusUnauthorized, "missing or wrong X-Hub-Signature-256: check that the webhook secret matches herd's")
		return
	}
	if delivery == "" || event == "" {
		reply(rw, http.StatusBadRequest, "X-GitHub-Delivery and X-GitHub-Event headers are required")
		return
	}
	if event == eventPing {
		reply(rw, http.StatusOK, "pong")
		return
	}
	decode, ok := decoders[event]
	if !ok {
		reply(rw, http.StatusAccepted, fmt.Sprintf("event %s ignored", event))
		return
	}
	payload, err := jsonPayload(r.Header.Get("Content-Type"), body)
	var c change
	if err == nil {
		c, err = decode(payload)
	}
	if err != nil {
		w.log.Warn("github webhook: rejected an unreadable delivery", "delivery", delivery, "event", event, "err", err)
		reply(rw, http.StatusBadRequest, err.Error())
		return
	}
	w.apply(r.Context(), rw, delivery, event, c)
}

// apply stores the change a delivery carries, marks the tasks it changed
// and answers.
func (w *Webhook) apply(ctx context.Context, rw http.ResponseWriter, delivery, event string, c change) {
	if c == nil {
		reply(rw, http.StatusOK, "nothing to change")
		return
	}
	fresh, changed, err := w.store.ApplyDelivery(ctx, delivery, event, c.apply)
	if err != nil {
		w.log.Error("github webhook: could not store a delivery", "delivery", delivery, "event", event, "err", err)
		reply(rw, http.StatusInternalServerError, "could not store the delivery; redeliver it later")
		return
	}
	if !fresh {
		reply(rw, http.StatusOK, "already delivered")
		return
	}
	for _, id := range changed {
		w.marker.Mark(id)
	}
	w.prune(ctx)
	reply(rw, http.StatusOK, "applied")
}

// readPayload reads a delivery's body; a body longer than MaxPayloadBytes
// is errTooLarge, refused before it is read when its length is declared.
func readPayload(rw http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxPayloadBytes {
		return nil, errTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxPayloadBytes))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, errTooLarge
	}
	return body, err
}

// signed reports whether header is the body's signature under the
// secret, comparing in constant time.
func (w *Webhook) signed(header string, body []byte) bool {
	sig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, w.secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// prune deletes delivery records older than deliveryRetention, at most
// once per pruneEvery, on the goroutine of the delivery that finds it due.
func (w *Webhook) prune(ctx context.Context) {
	w.pruneMu.Lock()
	now := w.now()
	due := !now.Before(w.nextPrune)
	if due {
		w.nextPrune = now.Add(pruneEvery)
	}
	w.pruneMu.Unlock()
	if !due {
		return
	}
	if _, err := w.store.PruneDeliveries(ctx, now.Add(-deliveryRetention)); err != nil {
		w.log.Error("github webhook: could not prune old deliveries", "err", err)
	}
}

// jsonPayload returns the JSON of a delivery: the body itself, or its
// payload field when the webhook is configured to send form data.
func jsonPayload(contentType string, body []byte) ([]byte, error) {
	if mt, _, _ := mime.ParseMediaType(contentType); mt != "application/x-www-form-urlencoded" {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("form payload is malformed: %w", err)
	}
	return []byte(form.Get("payload")), nil
}

// reply answers with a status and a line of text, which GitHub shows in
// the delivery's log.
func reply(rw http.ResponseWriter, code int, msg string) {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	rw.WriteHeader(code)
	_, _ = io.WriteString(rw, msg+"\n")
}
