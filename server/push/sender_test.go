package push_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/push"
	"github.com/herd-dev/herd/server/push/pushtest"
	"github.com/herd-dev/herd/shared"
)

func TestAPushArrivesDecryptedWithTheHeadersOfItsKind(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	cases := []struct {
		kind    shared.PushKind
		ttl     int
		urgency string
	}{
		{shared.PushPermission, 12 * 3600, "high"},
		{shared.PushClarification, 12 * 3600, "high"},
		{shared.PushClose, 12 * 3600, "normal"},
		{shared.PushError, 3600, "normal"},
		{shared.PushTurn, 600, "low"},
		{shared.PushPullRequest, 3600, "normal"},
		{shared.PushTest, 600, "normal"},
	}
	sent := push.NewMessage(shared.PushMessage{
		Kind: shared.PushPermission, Tag: "task:T1", WorkspaceID: "W", TaskID: "T1", SessionID: "S",
		PendingID: "P", Title: "Fix the login bug needs permission", Body: "Edit notes.txt", ToolKind: "edit",
		Actions: []shared.PushAction{{OptionID: "allow", Label: "Allow once", Kind: "allow_once"}},
		URL:     "/tasks/T1/sessions/S", Pending: 3,
	})
	// The event happened 5 s before it was sent, on the fake clock.
	require.NoError(t, f.sender.Send(target, sent, f.clock.Now().Add(-5*time.Second)))
	for i, c := range cases[1:] {
		f.send(target, message(c.kind, fmt.Sprint("T", i+2), "b"))
	}

	got, raw := f.messages(sub, len(cases))
	want := sent.Payload
	want.SentAt = f.clock.Now()
	require.Equal(t, want, got[0], "the decrypted payload is what was sent, stamped")
	for i, c := range cases {
		require.Equal(t, c.kind, got[i].Kind)
		require.Equal(t, c.ttl, raw[i].TTL, c.kind)
		require.Equal(t, c.urgency, raw[i].Urgency, c.kind)
		require.Equal(t, push.Topic(got[i].TaskID), raw[i].Topic, c.kind)
		require.Len(t, raw[i].Topic, 22)
		require.Equal(t, push.DefaultSubscriber, raw[i].Subscriber)
	}
	require.NotEqual(t, push.Topic("T1"), push.Topic("T2"))

	r := f.result()
	require.Equal(t, push.OutcomeSent, r.Outcome)
	require.Equal(t, http.StatusCreated, r.Status)
	require.Equal(t, 5*time.Second, r.Latency, "latency runs from the event to the request")
	for range len(cases) - 1 {
		require.Equal(t, push.OutcomeSent, f.result().Outcome)
	}
	require.Equal(t, float64(len(cases)), f.counter("herd_push_messages_total", "outcome", "sent"))
	require.Equal(t, float64(len(cases)), f.counter("herd_push_latency_seconds"))

	stored, err := f.db.GetPushDevice(t.Context(), target.ID, "token")
	require.NoError(t, err)
	require.NotNil(t, stored.LastSentAt, "an accepted push marks the device sent")
	require.True(t, stored.LastSentAt.Equal(f.clock.Now()))
}

func TestADeviceWhoseServiceForgotItIsRemoved(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusGone} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			f := newFixture(t, nil)
			target, sub := f.device()
			kept, keptSub := f.device()
			f.service.Script(sub, pushtest.Answer{Status: status}, pushtest.Always)
			f.send(target, message(shared.PushPermission, "T1", "one"))
			f.send(kept, message(shared.PushPermission, "T1", "one"))

			r := f.result()
			if r.DeviceID != target.ID {
				r = f.result()
			}
			require.Equal(t, push.OutcomeGone, r.Outcome)
			require.Equal(t, status, r.Status)
			_, err := f.db.GetPushDevice(t.Context(), target.ID, "token")
			require.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "the forgotten device is removed")
			_, err = f.db.GetPushDevice(t.Context(), kept.ID, "token")
			require.NoError(t, err, "another device stays")
			f.messages(keptSub, 1)
			require.Equal(t, 1.0, f.counter("herd_push_devices_pruned_total"))
			require.Equal(t, 1.0, f.counter("herd_push_messages_total", "outcome", "gone"))
		})
	}
}

func TestA429IsRetriedAfterItsRetryAfter(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	f.service.Script(sub, pushtest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "120"}, 1)
	f.send(target, message(shared.PushPermission, "T1", "retry me"))

	require.Equal(t, 120*time.Second, f.clock.nextTimer(t), "the retry waits for Retry-After")
	f.clock.Advance(119 * time.Second)
	require.Equal(t, 1, f.clock.Pending(), "no retry before Retry-After")
	require.Len(t, sub.Requests(), 1)
	f.clock.Advance(time.Second)

	got, raw := f.messages(sub, 1)
	require.Equal(t, "retry me", got[0].Body)
	require.Equal(t, 12*3600-120, raw[0].TTL, "a retry carries the TTL that remains")
	require.Equal(t, []int{429, okStatus}, statuses(sub.Requests()))
	r := f.result()
	require.Equal(t, push.OutcomeSent, r.Outcome)
	require.Equal(t, 2, r.Attempts)
	require.Equal(t, 1.0, f.counter("herd_push_retries_total"))
}

func TestServerErrorsAreRetriedWithBackoffThenSucceed(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	f.service.Script(sub, pushtest.Answer{Status: http.StatusInternalServerError}, 2)
	f.service.Script(sub, pushtest.Answer{Status: http.StatusServiceUnavailable}, 1)
	f.send(target, message(shared.PushClarification, "T1", "which branch?"))

	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		require.Equal(t, want, f.clock.nextTimer(t))
		f.clock.Advance(want)
	}
	got, _ := f.messages(sub, 1)
	require.Equal(t, "which branch?", got[0].Body)
	require.Equal(t, []int{500, 500, 503, okStatus}, statuses(sub.Requests()))
	r := f.result()
	require.Equal(t, push.OutcomeSent, r.Outcome)
	require.Equal(t, 4, r.Attempts)
}

func TestRetriesAreBoundedInNumber(t *testing.T) {
	f := newFixture(t, func(c *push.Config) { c.MaxAttempts = 3 })
	target, sub := f.device()
	f.service.Script(sub, pushtest.Answer{Status: http.StatusBadGateway}, pushtest.Always)
	f.send(target, message(shared.PushPermission, "T1", "x"))
	for range 2 {
		f.clock.Advance(f.clock.nextTimer(t))
	}
	r := f.result()
	require.Equal(t, push.OutcomeExhausted, r.Outcome)
	require.Equal(t, 3, r.Attempts)
	require.ErrorContains(t, r.Err, "502")
	require.Len(t, sub.Requests(), 3)
	require.Equal(t, 0, f.clock.Pending())
}

func TestAPushIsGivenUpOnceItsTTLHasPassed(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()

	// A Retry-After beyond the TTL gives up at once.
	f.service.Script(sub, pushtest.Answer{Status: http.StatusServiceUnavailable, RetryAfter: "900"}, 1)
	f.send(target, message(shared.PushTurn, "T1", "done"))
	r := f.result()
	require.Equal(t, push.OutcomeExpired, r.Outcome)
	require.Equal(t, 503, r.Status)
	require.Equal(t, 0, f.clock.Pending(), "no retry is scheduled past the TTL")

	// A message whose TTL passes while it waits behind a retry is dropped
	// without a request.
	f.service.Script(sub, pushtest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "700"}, 1)
	f.send(target, message(shared.PushPermission, "T2", "long-lived"))
	require.Equal(t, 700*time.Second, f.clock.nextTimer(t))
	f.send(target, message(shared.PushTurn, "T3", "short-lived"))
	f.clock.Advance(700 * time.Second)

	sent, expired := f.result(), f.result()
	require.Equal(t, push.OutcomeSent, sent.Outcome)
	require.Equal(t, "task:T2", sent.Tag)
	require.Equal(t, push.OutcomeExpired, expired.Outcome)
	require.Equal(t, "task:T3", expired.Tag)
	require.Equal(t, 0, expired.Attempts)
	require.Equal(t, []int{503, 429, okStatus}, statuses(sub.Requests()))
	require.Equal(t, 2.0, f.counter("herd_push_messages_total", "outcome", "expired"))
}

// inFlight is a transport that counts the requests in flight per
// endpoint and keeps the highest count.
type inFlight struct {
	mu      sync.Mutex
	now     map[string]int
	highest map[string]int
}

func (c *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	url := r.URL.String()
	c.mu.Lock()
	c.now[url]++
	c.highest[url] = max(c.highest[url], c.now[url])
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.now[url]--
		c.mu.Unlock()
	}()
	return http.DefaultTransport.RoundTrip(r)
}

func TestDeliveriesToOneDeviceKeepTheirOrderAndNeverOverlap(t *testing.T) {
	counts := &inFlight{now: map[string]int{}, highest: map[string]int{}}
	f := newFixture(t, func(c *push.Config) {
		c.Workers, c.QueueLength = 4, 40
		c.Client = &http.Client{Transport: counts}
	})
	const devices, each = 3, 30
	var subs []*pushtest.Subscription
	var targets = make([]func(i int), devices)
	for d := range devices {
		target, sub := f.device()
		subs = append(subs, sub)
		targets[d] = func(i int) { f.send(target, message(shared.PushError, fmt.Sprint("T", i), fmt.Sprint(i))) }
	}
	for i := range each {
		for d := range devices {
			targets[d](i)
		}
	}
	for d, sub := range subs {
		got, _ := f.messages(sub, each)
		for i, m := range got {
			require.Equal(t, fmt.Sprint(i), m.Body, "device %d's message %d arrived out of order", d, i)
		}
	}
	counts.mu.Lock()
	defer counts.mu.Unlock()
	for d, sub := range subs {
		require.Equal(t, 1, counts.highest[sub.Endpoint], "device %d had two requests in flight", d)
	}
}

func TestANewerMessageWithTheSameTagReplacesOneWaiting(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	// The first push is answered 429, so what follows waits.
	f.service.Script(sub, pushtest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "60"}, 1)
	f.send(target, message(shared.PushPermission, "T0", "asks"))
	f.clock.nextTimer(t)

	f.send(target, message(shared.PushPermission, "T1", "first state"))
	f.send(target, message(shared.PushPermission, "T2", "other task"))
	f.send(target, message(shared.PushClose, "T1", "second state"))
	f.send(target, message(shared.PushClose, "T0", "answered"))

	replaced := []push.Result{f.result(), f.result()}
	require.Equal(t, push.OutcomeReplaced, replaced[0].Outcome)
	require.Equal(t, "task:T1", replaced[0].Tag)
	require.Equal(t, push.OutcomeReplaced, replaced[1].Outcome, "a message waiting for its retry is still waiting")
	require.Equal(t, "task:T0", replaced[1].Tag)

	f.clock.Advance(time.Minute)
	got, _ := f.messages(sub, 3)
	var bodies []string
	for _, m := range got {
		bodies = append(bodies, m.Body)
	}
	require.Equal(t, []string{"answered", "second state", "other task"}, bodies)
	require.Equal(t, 2.0, f.counter("herd_push_queue_drops_total", "reason", "replaced"))
}

func TestAFullQueueDropsItsOldestWaitingMessage(t *testing.T) {
	f := newFixture(t, func(c *push.Config) { c.QueueLength = 3 })
	target, sub := f.device()
	f.service.Script(sub, pushtest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "60"}, 1)
	f.send(target, message(shared.PushError, "T0", "0"))
	f.clock.nextTimer(t)
	for i := 1; i <= 4; i++ {
		f.send(target, message(shared.PushError, fmt.Sprint("T", i), fmt.Sprint(i)))
	}
	for _, want := range []string{"task:T0", "task:T1"} {
		r := f.result()
		require.Equal(t, push.OutcomeOverflow, r.Outcome)
		require.Equal(t, want, r.Tag)
	}
	f.clock.Advance(time.Minute)
	got, _ := f.messages(sub, 3)
	require.Equal(t, []string{"2", "3", "4"}, []string{got[0].Body, got[1].Body, got[2].Body})
	require.Equal(t, 2.0, f.counter("herd_push_queue_drops_total", "reason", "overflow"))
}

func TestSendNowAnswersWithThePushServicesReason(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	test := push.NewMessage(shared.PushMessage{Kind: shared.PushTest, Tag: "test", WorkspaceID: "W", Title: "Test"})

	require.NoError(t, f.sender.SendNow(t.Context(), target, test, f.clock.Now()))
	f.messages(sub, 1)

	f.service.Script(sub, pushtest.Answer{Status: http.StatusInternalServerError}, 1)
	err := f.sender.SendNow(t.Context(), target, test, f.clock.Now())
	require.Equal(t, shared.CodeUnavailable, shared.ErrorCode(err))
	require.ErrorContains(t, err, "500: Internal Server Error")
	require.Equal(t, 0, f.clock.Pending(), "a test push is not retried")

	f.service.Script(sub, pushtest.Answer{Status: http.StatusGone}, 1)
	err = f.sender.SendNow(t.Context(), target, test, f.clock.Now())
	require.ErrorContains(t, err, "no longer knows this device (410)")
	_, err = f.db.GetPushDevice(t.Context(), target.ID, "token")
	require.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
	require.Equal(t, []int{okStatus, 500, 410}, statuses(sub.Requests()))
}

func TestSendNowEndsWithItsContext(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	f.service.Script(sub, pushtest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "60"}, 1)
	f.send(target, message(shared.PushPermission, "T0", "parked"))
	f.clock.nextTimer(t)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	test := push.NewMessage(shared.PushMessage{Kind: shared.PushTest, Tag: "test", WorkspaceID: "W"})
	require.ErrorIs(t, f.sender.SendNow(ctx, target, test, f.clock.Now()), context.Canceled)
	f.clock.Advance(time.Minute)
	got, _ := f.messages(sub, 1)
	require.Equal(t, "parked", got[0].Body)
	require.Len(t, sub.Messages(), 1, "the withdrawn test push is not sent")
}

func TestAPayloadTooLargeToPushIsRefused(t *testing.T) {
	f := newFixture(t, nil)
	target, _ := f.device()
	m := message(shared.PushPermission, "T1", strings.Repeat("x", shared.MaxPushPayloadBytes))
	require.Equal(t, shared.CodeBadRequest, shared.ErrorCode(f.sender.Send(target, m, f.clock.Now())))
}

func TestTheVAPIDSubscriberIsConfigured(t *testing.T) {
	f := newFixture(t, func(c *push.Config) { c.Subscriber = "https://herd.example.com" })
	target, sub := f.device()
	f.send(target, message(shared.PushTest, "T", "x"))
	_, raw := f.messages(sub, 1)
	require.Equal(t, "https://herd.example.com", raw[0].Subscriber)

	for _, bad := range []string{"herd@example.com", "mailto:not an address", "http://herd.example.com"} {
		_, err := push.New(push.Config{Devices: f.db, VAPIDPublicKey: "k", VAPIDPrivateKey: "k", Subscriber: bad})
		require.ErrorContains(t, err, "subscriber", bad)
	}
}

func TestANetworkErrorIsRetried(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	unreachable := target
	unreachable.ID = "unreachable"
	// Nothing listens on port 1 of loopback: connections are refused.
	unreachable.Endpoint = "http://127.0.0.1:1/push/x"
	f.send(unreachable, message(shared.PushPermission, "T1", "x"))
	require.Equal(t, time.Second, f.clock.nextTimer(t))
	f.send(target, message(shared.PushPermission, "T1", "y"))
	f.messages(sub, 1)
	require.Equal(t, 1.0, f.counter("herd_push_retries_total"))
}

func TestCloseSendsWhatWaitsDropsRetriesAndThenTakesNothing(t *testing.T) {
	f := newFixture(t, nil)
	target, sub := f.device()
	parked, parkedSub := f.device()
	f.service.Script(parkedSub, pushtest.Answer{Status: http.StatusServiceUnavailable}, 1)
	f.send(parked, message(shared.PushPermission, "T0", "waits for a retry"))
	f.clock.nextTimer(t)
	for i := range 8 {
		f.send(target, message(shared.PushError, fmt.Sprint("T", i), fmt.Sprint(i)))
	}

	require.NoError(t, f.sender.Close(t.Context()))
	require.Len(t, sub.Messages(), 8, "Close sends what waits")
	require.Len(t, parkedSub.Messages(), 0)
	require.Equal(t, 1.0, f.counter("herd_push_queue_drops_total", "reason", "closed"))
	require.Equal(t, 0, f.clock.Pending())
	require.ErrorIs(t, f.sender.Send(target, message(shared.PushError, "T", "late"), f.clock.Now()), push.ErrClosed)
}

// hanging is a transport whose requests wait for their context, telling
// started when one arrives.
type hanging struct{ started chan struct{} }

func (h hanging) RoundTrip(r *http.Request) (*http.Response, error) {
	h.started <- struct{}{}
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func TestCloseCancelsRequestsInFlightWhenItsDeadlinePasses(t *testing.T) {
	h := hanging{started: make(chan struct{}, 1)}
	f := newFixture(t, func(c *push.Config) { c.Workers = 1; c.Client = &http.Client{Transport: h} })
	target, _ := f.device()
	f.send(target, message(shared.PushPermission, "T0", "in flight"))
	f.send(target, message(shared.PushError, "T1", "queued"))
	<-h.started

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, f.sender.Close(ctx), context.Canceled)
	got := map[string]push.Outcome{}
	for range 2 {
		r := f.result()
		got[r.Tag] = r.Outcome
	}
	require.Equal(t, map[string]push.Outcome{"task:T0": push.OutcomeClosed, "task:T1": push.OutcomeClosed}, got)
}
