package ui

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// socketPath is where the server accepts WebSocket connections.
const socketPath = "/ws"

// link ties a mounted shell to the server through its one client. Its
// callbacks run on the client's goroutines and reach the shell only through
// ctx.Dispatch.
type link struct {
	// ui is the shell's context; every dispatch re-renders the shell.
	ui     app.Context
	shell  *shell
	client *wsclient.Client
	// subscriptions sends the session panes' subscription changes, one at
	// a time, in the order they were made.
	subscriptions *subscriptionQueue
	// workspaceID is the workspace of the last boot, asked for again on the
	// next one. Only the OnConnect hook touches it, and the client never
	// runs two hooks at once.
	workspaceID string
}

// newLink builds the shell's client for the page's own origin. The caller
// starts it.
func newLink(ctx app.Context, s *shell) *link {
	l := &link{ui: ctx, shell: s, workspaceID: s.bootWorkspaceID}
	l.subscriptions = &subscriptionQueue{start: func(drain func()) { ctx.Async(drain) }}
	opts := wsclient.Options{
		URL:            socketURL(app.Window().URL()),
		OnConnect:      l.boot,
		OnNotification: l.notify,
		OnStatus:       l.status,
	}
	if app.Window().URL().Query().Get("test-hooks") == "1" {
		opts.OnRequestSent = l.installTestHooks()
	}
	l.client = wsclient.New(opts)
	return l
}

// installTestHooks is for browser tests only (the page was opened with
// ?test-hooks=1): window.__herdTestDropAfterNextSend() arms a drop of the
// connection right after the next message.add has been sent, so that its
// answer is lost the way a network failure loses it.
func (l *link) installTestHooks() func(action string) {
	var armed atomic.Bool
	app.Window().Set("__herdTestDropAfterNextSend", app.FuncOf(func(app.Value, []app.Value) any {
		armed.Store(true)
		return nil
	}))
	return func(action string) {
		if action == shared.ActionMessageAdd && armed.CompareAndSwap(true, false) {
			l.client.Drop()
		}
	}
}

// socketURL returns the WebSocket URL of the server that served page.
func socketURL(page *url.URL) string {
	scheme := "ws"
	if page.Scheme == "https" {
		scheme = "wss"
	}
	return (&url.URL{Scheme: scheme, Host: page.Host, Path: socketPath}).String()
}

// status shows the client's connection status.
func (l *link) status(st wsclient.Status) {
	c := state.Connecting
	switch st {
	case wsclient.StatusOnline:
		c = state.Online
	case wsclient.StatusOffline:
		c = state.Offline
	}
	dispatch(l.ui, func(app.Context) { l.shell.store.SetConnection(c) })
}

// apply makes a store write on the UI goroutine.
func (l *link) apply(w state.Write) {
	dispatch(l.ui, func(app.Context) { l.shell.store.Apply(w) })
}

// boot is the client's OnConnect hook, the one place that runs after every
// (re)connect. It loads the workspace's tasks and, once the listing is
// complete, drops the stored tasks it no longer holds. Boot joins the
// workspace feed on the server, so events flow from the moment it is
// answered; the dispatch queue keeps them in order with the listing.
//
// Each request takes a Mark just before it is sent and its answer is
// applied with it, so a live event the store applied in between is not
// overwritten by the older copy the server read (state.ResponseWrite).
// Marks and listed are touched only on the UI goroutine: a dispatch queued
// before the request is sent takes the mark, and it runs before the
// dispatch of anything the client receives afterwards.
func (l *link) boot(ctx context.Context) {
	var mark state.Mark
	dispatch(l.ui, func(app.Context) { mark = l.shell.store.Mark() })

	var resp shared.BootResponse
	if err := l.client.Request(ctx, shared.ActionBoot, shared.BootRequest{WorkspaceID: l.workspaceID}, &resp); err != nil {
		l.failed(err)
		return
	}
	l.workspaceID = resp.WorkspaceID
	// The new connection has no session open: subscribe the shown one
	// again (and reconcile its unconfirmed prompts once it is loaded).
	dispatch(l.ui, func(ctx app.Context) {
		if v := l.shell.sessions; v != nil {
			v.reconnected(ctx)
		}
		if r := l.shell.review; r != nil {
			r.reconnected(ctx)
		}
	})
	listed := make(map[string]struct{}, len(resp.Tasks))
	dispatch(l.ui, func(app.Context) {
		s := l.shell
		s.applyBoot(resp, mark, listed)
		s.bootErr = ""
		s.ready = true
	})
	// Boot joined the feed, so inbox events flow already; the listing
	// follows them (state.Inbox.Load keeps what they brought).
	l.loadInbox(ctx, resp.WorkspaceID)

	for cursor := resp.NextCursor; cursor != ""; {
		var sent state.Mark
		dispatch(l.ui, func(app.Context) { sent = l.shell.store.Mark() })
		var page shared.TaskListResponse
		req := shared.TaskListRequest{WorkspaceID: resp.WorkspaceID, Cursor: cursor}
		if err := l.client.Request(ctx, shared.ActionTaskList, req, &page); err != nil {
			l.failed(err)
			return
		}
		dispatch(l.ui, func(app.Context) { l.shell.applyListed(page.Tasks, sent, listed) })
		cursor = page.NextCursor
	}

	dispatch(l.ui, func(app.Context) {
		l.shell.store.Retain(mark, listed)
		l.shell.listed = true
	})
}

// failed shows why loading failed. A lost connection is not shown here:
// the connection indicator says so, and the next connection boots again.
func (l *link) failed(err error) {
	if errors.Is(err, wsclient.ErrClosed) || errors.Is(err, wsclient.ErrNotConnected) ||
		errors.Is(err, context.Canceled) {
		return
	}
	msg := describe(err)
	dispatch(l.ui, func(app.Context) { l.shell.bootErr = msg })
}

// notify is the client's notification handler; it runs on the client's
// reading goroutine, so it only decodes and dispatches. Notifications the
// task switcher does not use are ignored.
func (l *link) notify(env shared.Envelope) {
	var w state.Write
	switch env.Action {
	case shared.NotifyTaskCreated, shared.NotifyTaskUpdated:
		t, err := shared.DecodePayload[shared.TaskEvent](env.Payload)
		if err != nil {
			app.Logf("herd: dropping %s: %v", env.Action, err)
			return
		}
		w = state.TaskWrite(t)
	case shared.NotifyTaskDeleted:
		t, err := shared.DecodePayload[shared.TaskEvent](env.Payload)
		if err != nil {
			app.Logf("herd: dropping %s: %v", env.Action, err)
			return
		}
		w = state.DeleteWrite(t)
	case shared.NotifyTaskStatusSummaryUpdated:
		ev, err := shared.DecodePayload[shared.StatusSummaryEvent](env.Payload)
		if err != nil {
			app.Logf("herd: dropping %s: %v", env.Action, err)
			return
		}
		w = state.SummaryWrite(ev.TaskID, ev.StatusSummary)
	case shared.NotifyInboxRequestOpened:
		r, err := shared.DecodePayload[shared.InboxRequest](env.Payload)
		if err != nil {
			app.Logf("herd: dropping %s: %v", env.Action, err)
			return
		}
		dispatch(l.ui, func(app.Context) { l.shell.inboxOpened(r) })
		return
	case shared.NotifyInboxRequestClosed:
		ev, err := shared.DecodePayload[shared.InboxRequestClosed](env.Payload)
		if err != nil {
			app.Logf("herd: dropping %s: %v", env.Action, err)
			return
		}
		dispatch(l.ui, func(app.Context) { l.shell.inboxClosed(ev) })
		return
	default:
		if strings.HasPrefix(env.Action, "session.") {
			dispatch(l.ui, func(ctx app.Context) {
				if v := l.shell.sessions; v != nil {
					v.push(ctx, env)
				}
			})
		}
		return
	}
	l.apply(w)
}

// wakeListener calls nudge when the browser reports that the network is
// back (window "online") or that the page became visible again (document
// "visibilitychange"), the two moments when waiting out a reconnect backoff
// would only keep the person looking at stale rows.
type wakeListener struct {
	online     app.Func
	visibility app.Func
}

// listenForWake registers the listeners; release removes them.
func listenForWake(nudge func()) *wakeListener {
	w := &wakeListener{
		online: app.FuncOf(func(app.Value, []app.Value) any {
			nudge()
			return nil
		}),
		visibility: app.FuncOf(func(app.Value, []app.Value) any {
			if app.Window().Get("document").Get("visibilityState").String() == "visible" {
				nudge()
			}
			return nil
		}),
	}
	app.Window().Call("addEventListener", "online", w.online)
	app.Window().Get("document").Call("addEventListener", "visibilitychange", w.visibility)
	return w
}

// release removes the listeners and frees their functions.
func (w *wakeListener) release() {
	app.Window().Call("removeEventListener", "online", w.online)
	app.Window().Get("document").Call("removeEventListener", "visibilitychange", w.visibility)
	w.online.Release()
	w.visibility.Release()
}
