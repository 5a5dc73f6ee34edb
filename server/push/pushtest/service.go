// Package pushtest is a Web Push service on loopback for tests: it makes
// subscriptions as a browser would, checks each push's VAPID
// authorization (RFC 8292) and headers (RFC 8030) as a push service
// would, decrypts its body (RFC 8291, RFC 8188) as the browser would, and
// records what arrived. It can be told to answer as a failing or
// forgetful push service does (404, 410, 429 with Retry-After, 500).
//
// Decryption is written here from the RFCs with the standard library, not
// with the library herd encrypts with, so a test against it checks herd's
// messages rather than a round trip through one implementation.
//
// The Service's HTTP server runs its own goroutines until Close (New
// registers it with the test's cleanup).
package pushtest

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// MaxBodyBytes is the largest push body the service takes: the 4,096
// bytes every push service must accept (RFC 8030 section 7.2).
const MaxBodyBytes = 4096

// Always makes Script apply to every request from now on.
const Always = -1

// Service is a push service on loopback. It is safe for concurrent use.
type Service struct {
	server *httptest.Server
	// origin is the endpoints' scheme and host, the aud VAPID tokens must
	// name.
	origin string

	mu sync.Mutex
	// applicationKey is the VAPID public key subscriptions were made
	// with; empty accepts any key. Guarded by mu.
	applicationKey string
	// subs are the subscriptions by id; guarded by mu.
	subs map[string]*Subscription
	// scripts are the answers queued per subscription id; guarded by mu.
	scripts map[string][]*script
	// log is every request in arrival order; guarded by mu.
	log []Request
	// changed is closed, and replaced, when log grows; guarded by mu.
	changed chan struct{}
	// messages counts accepted messages, naming their Location; guarded
	// by mu.
	messages int
}

// script is a queued answer and how many more requests it answers.
type script struct {
	answer Answer
	left   int // Always for every request
}

// Answer is how the service answers a request instead of accepting it,
// after checking its authorization.
type Answer struct {
	// Status is the HTTP status: 404 and 410 say the subscription is gone,
	// 429 and 5xx to come back later.
	Status int
	// RetryAfter is the Retry-After header, if any: seconds or an HTTP
	// date.
	RetryAfter string
}

// Request is one request the service received.
type Request struct {
	// SubscriptionID is the subscription the path names; empty when it
	// names none.
	SubscriptionID string
	At             time.Time
	// Status is the service's answer.
	Status int
	// Reason says why a request was refused; empty for an accepted one
	// and for a scripted answer.
	Reason string
	// Message is what an accepted request carried; nil otherwise.
	Message *Message
}

// Message is an accepted push: its decrypted payload and its headers.
type Message struct {
	Plaintext []byte
	// TTL is the TTL header, in seconds.
	TTL int
	// Urgency and Topic are their headers; empty when absent.
	Urgency string
	Topic   string
	// Subscriber is the VAPID token's sub.
	Subscriber string
	// At is when the service received it.
	At time.Time
}

// New starts a push service on 127.0.0.1, closed when tb ends.
func New(tb testing.TB) *Service {
	tb.Helper()
	s := &Service{
		subs:    map[string]*Subscription{},
		scripts: map[string][]*script{},
		changed: make(chan struct{}),
	}
	s.server = httptest.NewServer(http.HandlerFunc(s.serve))
	s.origin = s.server.URL
	tb.Cleanup(s.server.Close)
	return s
}

// Origin is the scheme and host of the service's endpoints.
func (s *Service) Origin() string { return s.origin }

// ExpectApplicationKey makes the service refuse (403) a push whose VAPID
// key is not publicKey (unpadded base64url), as a push service refuses
// one signed by another key than the subscription was made with.
func (s *Service) ExpectApplicationKey(publicKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applicationKey = publicKey
}

// Script makes the service answer sub's next n requests (Always: every
// one) with a, after checking their authorization. Scripts queue: the
// next one applies once this one's requests are answered.
func (s *Service) Script(sub *Subscription, a Answer, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[sub.ID] = append(s.scripts[sub.ID], &script{answer: a, left: n})
}

// Requests returns every request received so far, in arrival order.
func (s *Service) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Wait returns the requests received once done reports true of them,
// or ctx's error when it ends first.
func (s *Service) Wait(ctx context.Context, done func([]Request) bool) ([]Request, error) {
	for {
		s.mu.Lock()
		log, changed := append([]Request(nil), s.log...), s.changed
		s.mu.Unlock()
		if done(log) {
			return log, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return log, fmt.Errorf("wait for push requests (%d so far): %w", len(log), ctx.Err())
		}
	}
}

// record appends r to the log and wakes waiters.
func (s *Service) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, r)
	close(s.changed)
	s.changed = make(chan struct{})
}

// topicPattern is what a Topic header may hold (RFC 8030 section 5.4).
var topicPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// serve handles one push.
func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	id, ok := strings.CutPrefix(r.URL.Path, "/push/")
	s.mu.Lock()
	sub := s.subs[id]
	want := s.applicationKey
	s.mu.Unlock()
	refuse := func(status int, reason string) {
		s.record(Request{SubscriptionID: id, At: at, Status: status, Reason: reason})
		http.Error(w, reason, status)
	}
	if !ok || sub == nil {
		refuse(http.StatusNotFound, "no such subscription")
		return
	}
	if r.Method != http.MethodPost {
		refuse(http.StatusMethodNotAllowed, "a push is a POST")
		return
	}
	subscriber, authErr := checkVAPID(r.Header.Get("Authorization"), want, s.origin, at)
	if authErr != nil {
		refuse(authErr.status, authErr.reason)
		return
	}
	if a, ok := s.nextScripted(id); ok {
		s.record(Request{SubscriptionID: id, At: at, Status: a.Status})
		if a.RetryAfter != "" {
			w.Header().Set("Retry-After", a.RetryAfter)
		}
		http.Error(w, http.StatusText(a.Status), a.Status)
		return
	}

	msg := Message{Topic: r.Header.Get("Topic"), Urgency: r.Header.Get("Urgency"), Subscriber: subscriber, At: at}
	ttl, err := strconv.Atoi(r.Header.Get("TTL"))
	switch {
	case err != nil || ttl < 0:
		refuse(http.StatusBadRequest, "the TTL header is missing or not a number of seconds")
		return
	case r.Header.Get("Content-Encoding") != "aes128gcm":
		refuse(http.StatusBadRequest, "Content-Encoding is not aes128gcm")
		return
	case msg.Urgency != "" && !validUrgency(msg.Urgency):
		refuse(http.StatusBadRequest, "Urgency is not very-low, low, normal or high")
		return
	case msg.Topic != "" && !topicPattern.MatchString(msg.Topic):
		refuse(http.StatusBadRequest, "Topic is not at most 32 characters of base64url")
		return
	}
	msg.TTL = ttl
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		refuse(http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	if len(body) > MaxBodyBytes {
		refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
		return
	}
	if msg.Plaintext, err = decrypt(body, sub.key, sub.auth); err != nil {
		refuse(http.StatusBadRequest, "decrypt: "+err.Error())
		return
	}

	s.mu.Lock()
	s.messages++
	n := s.messages
	s.mu.Unlock()
	s.record(Request{SubscriptionID: id, At: at, Status: http.StatusCreated, Message: &msg})
	w.Header().Set("Location", fmt.Sprintf("%s/message/%d", s.origin, n))
	w.Header().Set("TTL", strconv.Itoa(ttl))
	w.WriteHeader(http.StatusCreated)
}

// nextScripted takes the scripted answer for subscription id's request,
// if one is queued.
func (s *Service) nextScripted(id string) (Answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	queue := s.scripts[id]
	if len(queue) == 0 {
		return Answer{}, false
	}
	sc := queue[0]
	if sc.left > 0 {
		sc.left--
		if sc.left == 0 {
			s.scripts[id] = queue[1:]
		}
	}
	return sc.answer, true
}

// validUrgency reports whether u is an Urgency of RFC 8030 section 5.3.
func validUrgency(u string) bool {
	switch u {
	case "very-low", "low", "normal", "high":
		return true
	}
	return false
}

// Subscription is a browser's push subscription at the service: the
// endpoint and keys it hands the application server, and the private
// key and auth secret that decrypt its pushes.
type Subscription struct {
	// ID names the subscription in its endpoint's path.
	ID string
	// Endpoint is http://127.0.0.1:<port>/push/<id>.
	Endpoint string
	// P256dh and Auth are the public key and auth secret, unpadded
	// base64url, as PushSubscription.toJSON() gives them.
	P256dh string
	Auth   string

	service *Service
	key     *ecdh.PrivateKey
	auth    []byte
}

// SubscriptionJSON is PushSubscription.toJSON().
type SubscriptionJSON struct {
	Endpoint       string  `json:"endpoint"`
	ExpirationTime *uint64 `json:"expirationTime"`
	Keys           struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// NewSubscription subscribes a new browser: a fresh P-256 key pair and
// 16-byte auth secret, at a fresh endpoint.
func (s *Service) NewSubscription() *Subscription {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	id := rand.Text()
	enc := base64.RawURLEncoding
	sub := &Subscription{
		ID: id, Endpoint: s.origin + "/push/" + id,
		P256dh: enc.EncodeToString(key.PublicKey().Bytes()), Auth: enc.EncodeToString(auth),
		service: s, key: key, auth: auth,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[id] = sub
	return sub
}

// ToJSON returns what the browser's PushSubscription.toJSON() would.
func (sub *Subscription) ToJSON() SubscriptionJSON {
	var j SubscriptionJSON
	j.Endpoint, j.Keys.P256dh, j.Keys.Auth = sub.Endpoint, sub.P256dh, sub.Auth
	return j
}

// Requests returns the requests the subscription's endpoint received, in
// arrival order.
func (sub *Subscription) Requests() []Request {
	return sub.own(sub.service.Requests())
}

// own keeps the requests of sub.
func (sub *Subscription) own(log []Request) []Request {
	var out []Request
	for _, r := range log {
		if r.SubscriptionID == sub.ID {
			out = append(out, r)
		}
	}
	return out
}

// WaitRequests returns the subscription's requests once there are at
// least n.
func (sub *Subscription) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	log, err := sub.service.Wait(ctx, func(log []Request) bool { return len(sub.own(log)) >= n })
	return sub.own(log), err
}

// Messages returns the messages the subscription accepted, in arrival
// order.
func (sub *Subscription) Messages() []Message {
	return messagesOf(sub.Requests())
}

// WaitMessages returns the subscription's accepted messages once there
// are at least n.
func (sub *Subscription) WaitMessages(ctx context.Context, n int) ([]Message, error) {
	log, err := sub.service.Wait(ctx, func(log []Request) bool { return len(messagesOf(sub.own(log))) >= n })
	return messagesOf(sub.own(log)), err
}

// messagesOf returns the messages of the accepted requests of log.
func messagesOf(log []Request) []Message {
	var out []Message
	for _, r := range log {
		if r.Message != nil {
			out = append(out, *r.Message)
		}
	}
	return out
}
