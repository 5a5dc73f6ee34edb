package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// grabber hands the test engine's context to the test, to stand in for
// the shell's. On the host go-app mounts components as the server does,
// so the context comes with OnPreRender.
type grabber struct {
	app.Compo
	ctx app.Context
}

func (g *grabber) OnPreRender(ctx app.Context) { g.ctx = ctx }

func (g *grabber) Render() app.UI { return app.Div() }

// subscriptionServer is the herd server reduced to session subscriptions:
// it records the subscription requests in the order they arrive and keeps
// the connection's sessions as the gateway does (a repeated subscribe
// only acknowledges). Everything else is answered with {}.
type subscriptionServer struct {
	mu      sync.Mutex
	ops     []string        // guarded by mu; "subscribe s1" and so on
	members map[string]bool // guarded by mu
	// unanswered is how many subscribes, first ones first, get no answer,
	// as from a server too busy to answer within the client's timeout;
	// guarded by mu.
	unanswered int
}

func (s *subscriptionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := r.Context()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		req, err := shared.DecodeRequest(data)
		if err != nil {
			return
		}
		ref, _ := shared.DecodePayload[shared.SessionRef](req.Payload)
		var answer any = shared.Empty{}
		s.mu.Lock()
		switch req.Action {
		case shared.ActionSessionSubscribe:
			s.ops = append(s.ops, "subscribe "+ref.SessionID)
			if s.unanswered > 0 {
				s.unanswered--
				s.mu.Unlock()
				continue
			}
			resp := shared.SessionSubscribeResponse{}
			if !s.members[ref.SessionID] {
				s.members[ref.SessionID] = true
				resp = shared.SessionSubscribeResponse{Joined: true, Snapshot: &shared.SessionSnapshot{
					Session: shared.Session{ID: ref.SessionID, TaskID: "t1", State: shared.SessionWaitingForInput},
				}}
			}
			answer = resp
		case shared.ActionSessionUnsubscribe:
			s.ops = append(s.ops, "unsubscribe "+ref.SessionID)
			delete(s.members, ref.SessionID)
		case shared.ActionSessionFocus:
			s.ops = append(s.ops, "focus "+ref.SessionID)
		}
		s.mu.Unlock()
		env, err := shared.NewResponse(req.ID, req.Action, answer, time.Now())
		if err != nil {
			return
		}
		frame, _ := json.Marshal(env)
		if c.Write(ctx, websocket.MessageText, frame) != nil {
			return
		}
	}
}

// seen returns the recorded operations and the sessions the connection
// has open.
func (s *subscriptionServer) seen() ([]string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var open []string
	for id := range s.members {
		open = append(open, id)
	}
	return append([]string(nil), s.ops...), open
}

// A person flicking between two sessions makes the view close one and
// open the other many times over. The server must see every change in the
// order the view made it, or a late unsubscribe leaves the shown session
// closed on the server and its transcript silent.
// viewOn returns a session pane of task t1 on a real client of srv, mounted
// in go-app's test engine, with the engine to run its dispatches.
func viewOn(t *testing.T, srv *subscriptionServer, opts wsclient.Options) (*sessionView, app.Context, app.TestEngine) {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	opts.URL = "ws" + strings.TrimPrefix(hs.URL, "http")
	client := wsclient.New(opts)
	client.Start()
	t.Cleanup(client.Close)
	require.Eventually(t, func() bool { return client.Request(context.Background(), shared.ActionPing, nil, nil) == nil },
		5*time.Second, time.Millisecond)

	eng := app.NewTestEngine()
	var g grabber
	require.NoError(t, eng.Load(&g))
	eng.ConsumeAll()
	require.NotNil(t, g.ctx.Context, "the engine mounted the grabber")
	s := booted()
	s.link = &link{ui: g.ctx, shell: s, client: client}
	s.link.subscriptions = &subscriptionQueue{start: func(drain func()) { g.ctx.Async(drain) }}
	tv := &taskView{Shell: s, mounted: true}
	v := newSessionView(tv)
	t.Cleanup(v.release)
	tv.view, s.sessions = v, v
	v.taskID = "t1"
	return v, g.ctx, eng
}

func TestSubscriptionChangesReachTheServerInTheOrderTheViewMadeThem(t *testing.T) {
	srv := &subscriptionServer{members: make(map[string]bool)}
	v, ctx, eng := viewOn(t, srv, wsclient.Options{})

	sessions := []shared.Session{{ID: "s1", TaskID: "t1"}, {ID: "s2", TaskID: "t1"}}
	var want []string
	for i := range 40 {
		next := sessions[i%2]
		if i > 0 {
			want = append(want, "unsubscribe "+sessions[(i+1)%2].ID)
		}
		want = append(want, "subscribe "+next.ID, "focus "+next.ID)
		v.open(ctx, next)
	}
	require.Eventually(t, func() bool { ops, _ := srv.seen(); return len(ops) >= len(want) }, 10*time.Second, time.Millisecond)
	eng.ConsumeAll()

	ops, open := srv.seen()
	assert.Equal(t, want, ops)
	assert.Equal(t, []string{"s2"}, open, "the server has exactly the shown session open")
	require.NotNil(t, v.detail)
	assert.True(t, v.detail.Loaded(), "the shown session's snapshot arrived")
}

// A subscribe the server answers too late (the client's request timed out)
// is sent again after a pause, so the shown session loads instead of
// staying empty with an error.
func TestATimedOutSubscribeIsRetried(t *testing.T) {
	srv := &subscriptionServer{members: make(map[string]bool), unanswered: 2}
	v, ctx, eng := viewOn(t, srv, wsclient.Options{RequestTimeout: 200 * time.Millisecond})
	v.open(ctx, shared.Session{ID: "s1", TaskID: "t1"})

	require.Eventually(t, func() bool {
		eng.ConsumeAll()
		return v.detail != nil && v.detail.Loaded()
	}, 10*time.Second, 10*time.Millisecond, "the session loads once a retried subscribe is answered")
	assert.Empty(t, v.err)
	ops, open := srv.seen()
	assert.Equal(t, 3, strings.Count(strings.Join(ops, ","), "subscribe s1")-strings.Count(strings.Join(ops, ","), "unsubscribe s1"),
		"two unanswered subscribes, then the one that loads: %v", ops)
	assert.Equal(t, []string{"s1"}, open)
}
