package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

type number struct {
	N int `json:"n"`
}

func TestRequestCorrelatesAnswersByID(t *testing.T) {
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		first, err := readRequest(ctx, c)
		if err != nil {
			return
		}
		second, err := readRequest(ctx, c)
		if err != nil {
			return
		}
		// Answer in reverse order: only the ids can tell them apart.
		_ = respond(ctx, c, second, second.Payload)
		_ = respond(ctx, c, first, first.Payload)
		echoServer(ctx, c)
	})
	c := startClient(t, url, Options{})
	connected(t, c)

	var wg sync.WaitGroup
	got := make([]number, 2)
	for i := range got {
		wg.Go(func() {
			assert.NoError(t, c.Request(t.Context(), "echo", number{N: i + 1}, &got[i]))
		})
	}
	wg.Wait()
	assert.Equal(t, []number{{N: 1}, {N: 2}}, got)
}

func TestRequestReturnsTheServersErrorAsSharedError(t *testing.T) {
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		req, err := readRequest(ctx, c)
		if err != nil {
			return
		}
		_ = send(ctx, c, shared.NewErrorEnvelope(req.ID, req.Action, shared.Errorf(shared.CodeNotFound, "task t1 does not exist"), time.Now()))
		echoServer(ctx, c)
	})
	c := startClient(t, url, Options{})
	connected(t, c)

	err := c.Request(t.Context(), shared.ActionTaskGet, shared.TaskRef{TaskID: "t1"}, nil)
	var coded *shared.Error
	require.ErrorAs(t, err, &coded)
	assert.Equal(t, shared.CodeNotFound, coded.Code)
	assert.Equal(t, "task t1 does not exist", coded.Message)
}

func TestRequestTimesOutWithoutAnAnswer(t *testing.T) {
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		for {
			if _, err := readRequest(ctx, c); err != nil {
				return
			}
		}
	})
	c := startClient(t, url, Options{RequestTimeout: 50 * time.Millisecond})
	connected(t, c)

	err := c.Request(t.Context(), "ping", nil, nil)
	assert.ErrorIs(t, err, ErrTimeout)
	assert.True(t, strings.HasPrefix(err.Error(), "ping: "), "error names the action: %v", err)
}

// An action the server may take long with is waited for longer than an
// ordinary request: the answer that Request gave up on arrives through
// RequestWithin.
func TestRequestWithinWaitsLongerThanTheRequestTimeout(t *testing.T) {
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		for {
			req, err := readRequest(ctx, c)
			if err != nil {
				return
			}
			time.Sleep(200 * time.Millisecond) // the server's slow step
			_ = respond(ctx, c, req, shared.Empty{})
		}
	})
	c := startClient(t, url, Options{RequestTimeout: 20 * time.Millisecond})
	connected(t, c)

	assert.ErrorIs(t, c.Request(t.Context(), shared.ActionReviewPush, nil, nil), ErrTimeout)
	assert.NoError(t, c.RequestWithin(t.Context(), 10*time.Second, shared.ActionReviewPush, nil, nil))
}

func TestRequestEndsWithTheCallersContext(t *testing.T) {
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		for {
			if _, err := readRequest(ctx, c); err != nil {
				return
			}
		}
	})
	c := startClient(t, url, Options{RequestTimeout: time.Hour})
	connected(t, c)

	ctx, cancel := context.WithCancel(t.Context())
	go cancel()
	assert.ErrorIs(t, c.Request(ctx, "ping", nil, nil), context.Canceled)
}

// A caller giving up on its request, even while the request is being
// written, leaves the connection to the other requests.
func TestCancelledRequestKeepsTheConnection(t *testing.T) {
	url := startServer(t, echoServer)
	c := startClient(t, url, Options{MinBackoff: time.Hour, MaxBackoff: time.Hour})
	connected(t, c)
	for i := range 50 {
		ctx, cancel := context.WithCancel(t.Context())
		go cancel()
		_ = c.Request(ctx, "echo", number{N: i}, nil)
		var got number
		require.NoError(t, c.Request(t.Context(), "echo", number{N: i}, &got), "request %d after a cancelled one", i)
		require.Equal(t, number{N: i}, got)
	}
}

func TestSocketCloseRejectsInFlightRequestsAtOnce(t *testing.T) {
	const inFlight = 3
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		for range inFlight {
			if _, err := readRequest(ctx, c); err != nil {
				return
			}
		}
		_ = c.Close(websocket.StatusGoingAway, "server restarting")
	})
	// With an hour-long timeout, only the close can end these requests.
	c := startClient(t, url, Options{RequestTimeout: time.Hour, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	connected(t, c)

	errs := make(chan error, inFlight)
	for range inFlight {
		go func() { errs <- c.Request(t.Context(), "ping", nil, nil) }()
	}
	for range inFlight {
		err := receive(t, errs, "an in-flight request to be rejected")
		assert.ErrorIs(t, err, ErrClosed)
		assert.Contains(t, err.Error(), "connection closed")
	}
}

func TestRequestWithoutAConnectionFailsAtOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	statuses := make(chan Status, 10)
	c := startClient(t, "ws"+strings.TrimPrefix(srv.URL, "http"), Options{
		RequestTimeout: time.Hour, MinBackoff: time.Hour, MaxBackoff: time.Hour,
		OnStatus: func(s Status) { statuses <- s },
	})
	for receive(t, statuses, "offline after the failed dial") != StatusOffline {
	}
	assert.ErrorIs(t, c.Request(t.Context(), "ping", nil, nil), ErrNotConnected)
}

func TestReconnectAfterServerDropRunsOnConnectAgain(t *testing.T) {
	var accepted atomic.Int32
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		if accepted.Add(1) == 1 {
			return // drop the first connection
		}
		echoServer(ctx, c)
	})
	connects := make(chan struct{}, 10)
	c := startClient(t, url, Options{OnConnect: func(context.Context) { connects <- struct{}{} }})

	receive(t, connects, "the first OnConnect")
	receive(t, connects, "OnConnect after the reconnect")
	var got number
	require.NoError(t, c.Request(t.Context(), "echo", number{N: 7}, &got))
	assert.Equal(t, 7, got.N)
}

func TestOnConnectContextEndsWithItsConnection(t *testing.T) {
	drop := make(chan struct{})
	var accepted atomic.Int32
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		if accepted.Add(1) == 1 {
			<-drop
			return
		}
		echoServer(ctx, c)
	})
	ended := make(chan error, 1)
	var calls atomic.Int32
	startClient(t, url, Options{OnConnect: func(ctx context.Context) {
		if calls.Add(1) > 1 {
			return
		}
		close(drop)
		<-ctx.Done()
		ended <- ctx.Err()
	}})
	assert.ErrorIs(t, receive(t, ended, "the hook's context to end"), context.Canceled)
}

func TestNudgeSkipsTheBackoff(t *testing.T) {
	var accepted atomic.Int32
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		if accepted.Add(1) == 1 {
			return
		}
		echoServer(ctx, c)
	})
	statuses := make(chan Status, 10)
	connects := make(chan struct{}, 10)
	c := startClient(t, url, Options{
		MinBackoff: time.Hour, MaxBackoff: time.Hour,
		OnConnect: func(context.Context) { connects <- struct{}{} },
		OnStatus:  func(s Status) { statuses <- s },
	})
	receive(t, connects, "the first OnConnect")
	for receive(t, statuses, "offline after the drop") != StatusOffline {
	}
	select {
	case <-connects:
		t.Fatal("reconnected before the nudge despite an hour of backoff")
	default:
	}

	c.Nudge()
	receive(t, connects, "OnConnect right after the nudge")
}

func TestNotificationsAreDeliveredInOrder(t *testing.T) {
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		for i := range 3 {
			env, err := shared.NewNotification(shared.NotifyTaskUpdated, number{N: i}, time.Now())
			if err != nil || send(ctx, c, env) != nil {
				return
			}
		}
		echoServer(ctx, c)
	})
	got := make(chan shared.Envelope, 10)
	startClient(t, url, Options{OnNotification: func(env shared.Envelope) { got <- env }})

	for i := range 3 {
		env := receive(t, got, "a notification")
		assert.Equal(t, shared.NotifyTaskUpdated, env.Action)
		var n number
		require.NoError(t, json.Unmarshal(env.Payload, &n))
		assert.Equal(t, i, n.N)
	}
}

func TestLargeResponseFitsTheReadLimit(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		req, err := readRequest(ctx, c)
		if err != nil {
			return
		}
		_ = respond(ctx, c, req, big)
		echoServer(ctx, c)
	})
	c := startClient(t, url, Options{})
	connected(t, c)

	var got string
	require.NoError(t, c.Request(t.Context(), shared.ActionTaskList, nil, &got))
	assert.Len(t, got, len(big))
}

func TestStatusGoesConnectingOnlineOffline(t *testing.T) {
	url := startServer(t, func(context.Context, *websocket.Conn) {})
	statuses := make(chan Status, 10)
	startClient(t, url, Options{
		MinBackoff: time.Hour, MaxBackoff: time.Hour,
		OnStatus: func(s Status) { statuses <- s },
	})
	for _, want := range []Status{StatusConnecting, StatusOnline, StatusOffline} {
		assert.Equal(t, want, receive(t, statuses, want.String()))
	}
}

func TestCloseEndsTheHookAndStopsReconnecting(t *testing.T) {
	url := startServer(t, echoServer)
	hookEnded := make(chan struct{})
	statuses := make(chan Status, 10)
	c := startClient(t, url, Options{
		OnConnect: func(ctx context.Context) {
			<-ctx.Done()
			close(hookEnded)
		},
		OnStatus: func(s Status) { statuses <- s },
	})
	connected(t, c)
	c.Close()

	select {
	case <-hookEnded:
	default:
		t.Fatal("Close returned before the OnConnect hook ended")
	}
	close(statuses)
	var last Status
	for s := range statuses {
		last = s
	}
	assert.Equal(t, StatusOnline, last, "no status is reported while closing")
	assert.ErrorIs(t, c.Request(t.Context(), "ping", nil, nil), ErrNotConnected)
}

func TestBackoffIsCappedAndJittered(t *testing.T) {
	lo, hi := 250*time.Millisecond, 10*time.Second
	for attempt := range 64 {
		ceiling := hi
		if attempt < 6 {
			ceiling = lo << attempt
		}
		for range 20 {
			d := backoff(attempt, lo, hi)
			require.GreaterOrEqual(t, d, ceiling/2, "attempt %d", attempt)
			require.LessOrEqual(t, d, ceiling, "attempt %d", attempt)
		}
	}
}

func TestUnreadableErrorEnvelopeIsAnInternalError(t *testing.T) {
	err := decodeReply("task.get", shared.Envelope{Type: shared.TypeError, Payload: json.RawMessage(`"nope"`)}, nil)
	var coded *shared.Error
	require.True(t, errors.As(err, &coded))
	assert.Equal(t, shared.CodeInternal, coded.Code)
}

func TestDropAfterARequestWasSentRejectsItAndReconnects(t *testing.T) {
	received := make(chan struct{}, 1)
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		// Read the request and never answer it: only the drop ends it.
		if _, err := readRequest(ctx, c); err == nil {
			received <- struct{}{}
		}
		echoServer(ctx, c)
	})
	connects := make(chan struct{}, 10)
	var c *Client
	c = startClient(t, url, Options{
		RequestTimeout: time.Hour,
		OnConnect:      func(context.Context) { connects <- struct{}{} },
		OnRequestSent: func(action string) {
			if action == "drop-me" {
				c.Drop()
			}
		},
	})
	receive(t, connects, "the first OnConnect")
	err := c.Request(t.Context(), "drop-me", nil, nil)
	assert.ErrorIs(t, err, ErrClosed, "the answer is lost with the connection")
	receive(t, received, "the server to have the request that was sent before the drop")
	receive(t, connects, "OnConnect after the reconnect")
	c.Drop()
	receive(t, connects, "OnConnect after a second drop")
}
