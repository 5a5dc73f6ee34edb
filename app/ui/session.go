package ui

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// defaultProfileID is the agent profile a new session starts with unless
// the person picks another.
const defaultProfileID = "mock"

// sessionView is the session pane of the selected task, owned by the task
// view and touched only on the UI goroutine. It keeps at most one session
// open (subscribed) on the connection: the one shown.
type sessionView struct {
	tv *taskView
	// taskID is the task whose sessions are listed.
	taskID string
	// wanted is the session the address names; empty for the primary (or
	// newest) one, primary.
	wanted   string
	primary  string
	sessions []shared.Session
	listErr  string
	// openID is the session subscribed on the connection; detail and
	// outbox belong to it.
	openID string
	detail *state.SessionDetail
	outbox *state.Outbox
	// subscribing is set while session.subscribe is in flight, so a
	// re-render or a resync never subscribes twice; joins counts the
	// joins, so an answer to an older one (the detail is the same value
	// across them) changes nothing.
	subscribing bool
	joins       uint64
	// tools holds the tool content fetched with "Show all".
	tools *state.ToolFetches
	// subscriptions sends the subscription changes in order: the link's
	// one queue, shared by every pane the connection has had, so that a
	// pane closed while another opens cannot unsubscribe after the new
	// one subscribed.
	subscriptions *subscriptionQueue

	profileID string
	starting  bool
	// started is the session this pane started last.
	started string
	// input is the composer's text; drafts keeps it per task.
	input  string
	drafts state.Drafts
	// planFold remembers per session whether its docked plan is folded.
	planFold state.PlanFold
	// content is what the next prompt carries beside its text.
	content composerContent
	// completion is the slash command list of the composer; keyTaken is
	// set while a key it took is still on its way to listenForEnter.
	completion state.Completion
	keyTaken   bool
	// asPrompt sends the composer's text as a new prompt while a question
	// is open, instead of as its answer.
	asPrompt bool
	// err is the last failed action, shown above the composer.
	err string
	// follow decides whether the transcript scrolls with new output.
	follow state.Follow
	// earlier is set while a page of older messages is being fetched.
	earlier request
	// tr is the transcript as last derived from the detail.
	tr transcriptView
	// scroll listens for the transcript's scroll events; enter for Enter
	// in the composer.
	scroll app.Func
	enter  app.Func
	paste  app.Func
	// focusOnLoad moves focus to an open request once the session just
	// opened has loaded: opening a task that needs you lands on what it
	// needs. A reload of the same session (a reconnect) leaves focus alone.
	focusOnLoad bool
	// refresh is the last session.git.refresh sent, with its outcome.
	refresh gitRefresh
	// config holds the configuration changes on their way to the agent.
	config configEdit

	// frame is the requestAnimationFrame callback that flushes the
	// detail's batch; framePending is set while one is requested.
	frame        app.Func
	framePending bool
	frameID      app.Value
}

// newSessionView returns the session pane of a mounted task view.
func newSessionView(tv *taskView) *sessionView {
	v := &sessionView{tv: tv, profileID: defaultProfileID, drafts: state.NewDrafts(localStorage), planFold: state.NewPlanFold(localStorage),
		tools: state.NewToolFetches()}
	v.subscriptions = tv.Shell.link.subscriptions
	v.frame = app.FuncOf(func(app.Value, []app.Value) any {
		dispatch(v.ui(), func(ctx app.Context) {
			v.framePending = false
			if v.detail != nil && v.detail.Flush() > 0 {
				v.output()
			}
		})
		return nil
	})
	v.listenForScroll()
	v.listenForEnter()
	v.listenForPaste()
	return v
}

// release frees the frame callback and the listeners.
func (v *sessionView) release() {
	if v.framePending {
		app.Window().Call("cancelAnimationFrame", v.frameID)
	}
	v.frame.Release()
	v.stopListeningForScroll()
	v.stopListeningForEnter()
	v.stopListeningForPaste()
}

func (v *sessionView) client() *wsclient.Client { return v.tv.Shell.link.client }

// ui returns the shell's context. Requests run and report back through
// it rather than through an event's context: go-app drops a dispatch whose
// source element has left the page, and the button that started a request
// often has by the time it is answered. A dispatch through it re-renders
// the shell, and with it the task view (see taskView.Rev).
func (v *sessionView) ui() app.Context { return v.tv.Shell.link.ui }

// show makes task the one whose sessions are shown, and sessionID (empty
// for the task's primary or newest) the open one. An unchanged task and
// session change nothing, so re-renders never list or subscribe again.
func (v *sessionView) show(ctx app.Context, task shared.Task, sessionID string) {
	if task.ID == v.taskID {
		if sessionID == v.wanted {
			return
		}
		v.wanted = sessionID
		for _, s := range v.sessions {
			if s.ID == sessionID || (sessionID == "" && s.ID == task.PrimarySessionID) {
				v.open(ctx, s)
				return
			}
		}
		// A session this pane has not listed (started elsewhere): list
		// again, and the answer opens it.
		v.list(ctx, v.primary)
		return
	}
	v.close()
	v.taskID, v.primary, v.wanted, v.sessions, v.listErr, v.err = task.ID, task.PrimarySessionID, sessionID, nil, "", ""
	v.input, v.asPrompt = v.drafts.Get(task.ID), false
	v.restoreDraft()
	if task.ID != "" {
		v.list(ctx, task.PrimarySessionID)
	}
}

// list loads the task's sessions and opens the one the address names, or
// else the primary one (or the newest), unless one is open already.
func (v *sessionView) list(ctx app.Context, primary string) {
	ctx = v.ui()
	taskID := v.taskID
	ctx.Async(func() {
		var resp shared.SessionListResponse
		err := v.client().Request(context.Background(), shared.ActionSessionList, map[string]string{"task_id": taskID}, &resp)
		dispatch(ctx, func(ctx app.Context) {
			if v.taskID != taskID {
				return
			}
			if err != nil {
				if !lostConnection(err) {
					// A lost connection lists again once it is back.
					v.listErr = describe(err)
				}
				return
			}
			v.listErr = ""
			v.setListed(resp.Sessions)
			if len(v.sessions) == 0 || (v.openID != "" && (v.wanted == "" || v.wanted == v.openID)) {
				return
			}
			pick := v.sessions[len(v.sessions)-1]
			for _, s := range v.sessions {
				if s.ID == primary {
					pick = s
				}
				if primary == "" && s.CreatedAt.After(pick.CreatedAt) {
					pick = s
				}
			}
			for _, s := range v.sessions {
				if s.ID == v.wanted {
					pick = s
				}
			}
			v.open(ctx, pick)
		})
	})
}

// open subscribes to a session and shows it.
func (v *sessionView) open(ctx app.Context, s shared.Session) {
	ctx = v.ui()
	if s.ID == v.openID {
		return
	}
	v.close()
	v.openID, v.err = s.ID, ""
	v.follow, v.earlier, v.focusOnLoad, v.config = state.Follow{}, request{}, true, configEdit{}
	v.content = composerContent{}
	v.detail = state.NewSessionDetail(s.ID)
	v.detail.SetSession(s)
	v.outbox = v.tv.Shell.outboxOf(s.ID)
	v.restoreDraft()
	v.subscribe(ctx)
	id := s.ID
	v.subscriptions.do(func() {
		_ = v.client().Request(context.Background(), shared.ActionSessionFocus, shared.SessionRef{SessionID: id}, nil)
	})
}

// close unsubscribes from the open session, if any.
func (v *sessionView) close() {
	if v.openID == "" {
		return
	}
	id := v.openID
	v.openID, v.detail, v.outbox, v.subscribing = "", nil, nil, false
	v.refresh = gitRefresh{}
	v.subscriptions.do(func() {
		_ = v.client().Request(context.Background(), shared.ActionSessionUnsubscribe, shared.SessionRef{SessionID: id}, nil)
	})
}

// subscribe asks for the open session's snapshot; resubscribe first leaves
// the session on the server (after a gap) so the server sends a fresh one.
func (v *sessionView) subscribe(ctx app.Context) { v.join(ctx, false, 0) }

func (v *sessionView) resubscribe(ctx app.Context) { v.join(ctx, true, 0) }

// joinBackoff is the pause before each retry of a join that timed out or
// met an unavailable server; after the last one the error is shown.
var joinBackoff = []time.Duration{250 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}

// retryableJoin reports whether a failed session.subscribe may succeed if
// sent again: it timed out, or the server was unavailable.
func retryableJoin(err error) bool {
	return errors.Is(err, wsclient.ErrTimeout) || shared.ErrorCode(err) == shared.CodeUnavailable
}

// join subscribes to the open session for a fresh snapshot; attempt counts
// the retries of a failed join (see joinBackoff).
func (v *sessionView) join(ctx app.Context, leaveFirst bool, attempt int) {
	ctx = v.ui()
	if v.subscribing || v.openID == "" {
		return
	}
	v.subscribing = true
	v.joins++
	v.detail.Reset()
	id, detail, gen := v.openID, v.detail, v.joins
	v.subscriptions.do(func() {
		c := v.client()
		if leaveFirst {
			_ = c.Request(context.Background(), shared.ActionSessionUnsubscribe, shared.SessionRef{SessionID: id}, nil)
		}
		var resp shared.SessionSubscribeResponse
		err := c.Request(context.Background(), shared.ActionSessionSubscribe, shared.SessionRef{SessionID: id}, &resp)
		if err == nil && resp.Snapshot == nil {
			// Already open on this connection: only a fresh join replays.
			_ = c.Request(context.Background(), shared.ActionSessionUnsubscribe, shared.SessionRef{SessionID: id}, nil)
			err = c.Request(context.Background(), shared.ActionSessionSubscribe, shared.SessionRef{SessionID: id}, &resp)
		}
		dispatch(ctx, func(ctx app.Context) {
			if v.detail != detail || v.joins != gen {
				// Another session, or a later join of this one, owns it.
				return
			}
			v.subscribing = false
			if err != nil || resp.Snapshot == nil {
				switch {
				case err == nil, lostConnection(err):
					// A lost connection subscribes again on reconnect.
				case retryableJoin(err) && attempt < len(joinBackoff):
					// A busy server answered too late, or its database was
					// away: the session stays unloaded until a join
					// succeeds, so try again rather than show nothing.
					after(ctx, joinBackoff[attempt], func(ctx app.Context) {
						if v.detail == detail && v.joins == gen {
							v.join(ctx, true, attempt+1)
						}
					})
				default:
					v.err = "Could not open the session: " + describe(err)
				}
				return
			}
			v.detail.Load(*resp.Snapshot)

			v.restoreScroll()
			if v.focusOnLoad {
				v.focusOnLoad = false
				if len(v.openRequests()) > 0 {
					v.focusRequest()
				} else if v.started == v.openID {
					// A session the person just started: its composer is
					// what comes next.
					focus(v.ui(), idComposerInput)
				}
			}
			v.reconcile(ctx)
		})
	})
}

// subscriptionQueue sends the session view's subscription changes
// (session.subscribe, session.unsubscribe, session.focus) one at a time,
// each once the one before was answered, in the order the view made them.
// Sent from goroutines of their own, the unsubscribe of a session just
// closed could overtake the subscribe that opens it again, and leave the
// shown session closed on the server: its transcript would stay silent.
type subscriptionQueue struct {
	// start runs the drain on a goroutine of its own: the UI's Async, so
	// the goroutine belongs to the UI; it ends when the queue is empty.
	start func(drain func())

	mu      sync.Mutex
	ops     []func() // guarded by mu; the changes not yet sent
	running bool     // guarded by mu; a drain is sending them
}

// do queues op, which sends one change and waits for its answer.
func (q *subscriptionQueue) do(op func()) {
	q.mu.Lock()
	q.ops = append(q.ops, op)
	idle := !q.running
	q.running = true
	q.mu.Unlock()
	if idle {
		q.start(q.drain)
	}
}

// drain runs the queued changes in order until none is left.
func (q *subscriptionQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.ops) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		op := q.ops[0]
		q.ops[0] = nil
		q.ops = q.ops[1:]
		q.mu.Unlock()
		op()
	}
}

// reconnected runs after every (re)connect: the server forgot the
// connection's sessions, so the open one is subscribed again and the
// session list refreshed.
func (v *sessionView) reconnected(ctx app.Context) {
	if v.taskID == "" {
		return
	}
	v.subscribing = false
	v.list(ctx, v.primary)
	v.subscribe(ctx)
}

// push takes a session notification in arrival order.
func (v *sessionView) push(ctx app.Context, env shared.Envelope) {
	if v.detail == nil {
		return
	}
	writes := v.detail.Writes()
	if v.detail.Push(env) {
		v.resubscribe(ctx)
		return
	}
	switch env.Action {
	case shared.NotifySessionStateChanged, shared.NotifySessionActivityChanged:
		v.updateListed()
	case shared.NotifySessionConfigUpdated:
		v.syncConfigControls()
	}
	if v.detail.Writes() != writes {
		v.output()
	}
	if v.detail.Pending() && !v.framePending {
		v.framePending = true
		v.frameID = app.Window().Call("requestAnimationFrame", v.frame)
	}
}

// setListed takes the sessions of a session.list answer. The answer may
// have been read before a state event the open session's detail applied
// since: its copy of the open session passes the detail's revision gate,
// and the list shows whichever is newer.
func (v *sessionView) setListed(sessions []shared.Session) {
	v.sessions = sessions
	if v.detail == nil {
		return
	}
	for i, s := range sessions {
		if s.ID == v.openID {
			v.detail.SetSession(s)
			sessions[i] = v.detail.Session()
		}
	}
}

// updateListed gives the session list the open session's record: every
// listed copy has passed through the detail's revision gate, so the
// detail's is the newest.
func (v *sessionView) updateListed() {
	s := v.detail.Session()
	for i := range v.sessions {
		if v.sessions[i].ID == s.ID {
			v.sessions[i] = s
		}
	}
}

// onStart starts a session for the task with the selected profile.
func (v *sessionView) onStart(ctx app.Context, _ app.Event) {
	ctx = v.ui()
	if v.starting || v.taskID == "" {
		return
	}
	v.starting, v.err = true, ""
	req := shared.SessionCreateRequest{TaskID: v.taskID, AgentProfileID: v.profileID}
	ctx.Async(func() {
		var s shared.Session
		err := v.client().Request(context.Background(), shared.ActionSessionCreate, req, &s)
		dispatch(ctx, func(ctx app.Context) {
			v.starting = false
			if v.taskID != req.TaskID {
				return
			}
			if err != nil {
				v.err = "Could not start a session: " + describe(err)
				return
			}
			if !slices.ContainsFunc(v.sessions, func(x shared.Session) bool { return x.ID == s.ID }) {
				v.sessions = append(v.sessions, s)
			}
			v.started = s.ID
			v.open(ctx, s)
			v.wanted = s.ID
			v.tv.Shell.navigate(ctx, state.Route{TaskID: v.taskID, SessionID: s.ID})
		})
	})
}

// onProfile records the agent profile picked for the next session.
func (v *sessionView) onProfile(ctx app.Context, _ app.Event) {
	v.profileID = ctx.JSSrc().Get("value").String()
}

// gitRefresh is one session.git.refresh request: the session it names and
// its state.
type gitRefresh struct {
	sessionID string
	request
}

// onGitRefresh asks the server to observe the open session's repositories
// again. Its answer only says that an observation was scheduled; the
// result arrives later as session.git.updated, so only a failure changes
// what the panel says.
func (v *sessionView) onGitRefresh(ctx app.Context, _ app.Event) {
	ctx = v.ui()
	id := v.openID
	if id == "" || (v.refresh.busy && v.refresh.sessionID == id) {
		return
	}
	v.refresh = gitRefresh{sessionID: id, request: request{busy: true}}
	ctx.Async(func() {
		err := v.client().Request(context.Background(), shared.ActionSessionGitRefresh, shared.SessionRef{SessionID: id}, nil)
		dispatch(ctx, func(app.Context) { v.refreshed(id, err) })
	})
}

// refreshed records the answer to a session.git.refresh for session id,
// unless the pane has closed that session since.
func (v *sessionView) refreshed(id string, err error) {
	if v.refresh.sessionID != id {
		return
	}
	v.refresh.answered(err)
}

// lostConnection reports whether err means the request's answer was lost
// with the connection (or never sent): the reconnect deals with it.
func lostConnection(err error) bool {
	return errors.Is(err, wsclient.ErrClosed) || errors.Is(err, wsclient.ErrNotConnected) ||
		errors.Is(err, context.Canceled)
}

// newClientMessageID returns a fresh client_message_id (29 bytes; the
// protocol allows 1 to 128).
func newClientMessageID() string { return "cm-" + rand.Text() }

// webStorage is one of the browser's storages (localStorage,
// sessionStorage) as a state.KV; a browser without it keeps nothing.
type webStorage string

// The storages herd keeps things in: drafts, prompts not yet confirmed and
// what was seen survive a restart of the browser; a scroll position only
// the tab's reload.
const (
	localStorage   webStorage = "localStorage"
	sessionStorage webStorage = "sessionStorage"
)

func (w webStorage) store() app.Value { return app.Window().Get(string(w)) }

// Get implements state.KV.
func (l webStorage) Get(k string) (string, bool) {
	st := l.store()
	if !st.Truthy() {
		return "", false
	}
	v := st.Call("getItem", k)
	if v.IsNull() || v.IsUndefined() {
		return "", false
	}
	return v.String(), true
}

// Set implements state.KV.
func (l webStorage) Set(k, v string) {
	if st := l.store(); st.Truthy() {
		st.Call("setItem", k, v)
	}
}

// Delete implements state.KV.
func (l webStorage) Delete(k string) {
	if st := l.store(); st.Truthy() {
		st.Call("removeItem", k)
	}
}
