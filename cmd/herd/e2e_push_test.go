package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/push/pushtest"
)

// The push browser tests run the web app's Web Push path in headless
// Chromium against the loopback push service (server/push/pushtest).
// Headless Chromium reaches no real push service, so PushManager.subscribe
// cannot run there: a device registers a loopback subscription through
// window.herdRegisterPush, the step after it, which keeps the device's
// credential in IndexedDB as "Turn on" does. The test plays the browser's
// push service: it takes the push the server sent to the subscription
// (pushtest decrypts it) and hands its plaintext to the service worker
// with ServiceWorker.deliverPushMessage, as Chromium does with a push it
// received. No DevTools command clicks a notification's button, so a
// button is pressed by calling the worker's own handleNotificationAction,
// which its notificationclick listener calls, in the worker's target.
//
// The test reads notifications only once the worker has finished handling
// every push it was handed (pushProbe). Polling getNotifications every
// 25 ms from the moment of delivery lost the notification for good in
// about one run in three (it never showed afterwards), consistent with
// Chromium dropping from its store a notification its platform does not
// show yet; reads after the handler finished never did.

// pushProbe runs in the service worker. It wraps the worker's handlePush,
// which its push listener calls by name, and keeps each push's outcome in
// self.__herdPushes, so the test can wait until the pushes it delivered
// are handled.
const pushProbe = `(() => {
  if (self.__herdPushes) return true;
  self.__herdPushes = [];
  const handle = handlePush;
  handlePush = (data) => {
    const done = handle(data).then(() => 'handled', (err) => 'failed: ' + err);
    self.__herdPushes.push(done);
    return done;
  };
  return true;
})()`

// pushDevice is one browser that gets pushes: its own headless Chromium
// with its own profile, the app open in its tab, its service worker's
// registration and its subscription at the loopback push service.
type pushDevice struct {
	t      *testing.T
	name   string
	origin string
	tab    context.Context
	sub    *pushtest.Subscription
	// sw is the tab's service worker, attached with pushProbe installed;
	// attached, Chromium keeps it running, and the probe with it.
	sw context.Context
	// handled counts the subscription's messages the test has looked at,
	// delivered those the test handed to the worker.
	handled, delivered int

	mu sync.Mutex
	// registration is the service worker's registration of origin's root
	// scope, from ServiceWorker.workerRegistrationUpdated; guarded by mu.
	registration serviceworker.RegistrationID
}

// openPushDevice starts a browser at the viewport, lets origin show
// notifications, opens the app at origin and registers a new loopback
// subscription as the device name of the shown workspace.
func openPushDevice(t *testing.T, ps *pushtest.Service, origin, name string, v viewport) *pushDevice {
	t.Helper()
	d := &pushDevice{t: t, name: name, origin: origin, tab: newBrowser(t)}
	ctx := withTimeout(t, d.tab)
	scope := origin + "/"
	// The listener runs on the tab's reading goroutine: it only keeps the
	// id, under the mutex.
	require.NoError(t, chromedp.Listen(d.tab, func(ev any) {
		if e, ok := ev.(*serviceworker.EventWorkerRegistrationUpdated); ok {
			for _, r := range e.Registrations {
				if r.ScopeURL == scope && !r.IsDeleted {
					d.mu.Lock()
					d.registration = r.RegistrationID
					d.mu.Unlock()
				}
			}
		}
	}))
	_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"},
		Setting:    browser.PermissionSettingGranted,
		Origin:     origin,
	})
	require.NoError(t, err)
	_, err = chromedp.Call(ctx, serviceworker.Enable, cdp.Empty{})
	require.NoError(t, err)
	view := chromedp.EmulateViewport(1280, 800)
	if v.phone {
		view = chromedp.Emulate(device.IPhone12)
	}
	require.NoError(t, chromedp.Do(ctx, view, chromedp.Navigate(scope), waitReady()))
	ready, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`navigator.serviceWorker.ready.then(() => true)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.True(t, ready)
	eventually(t, name+"'s service worker registration is reported", func() bool { return d.registrationID() != "" })
	var cancel context.CancelFunc
	d.sw, cancel = d.worker()
	t.Cleanup(cancel)
	_, err = chromedp.Run(withTimeout(t, d.sw), chromedp.Evaluate[bool](pushProbe))
	require.NoError(t, err)

	d.sub = ps.NewSubscription()
	subJSON, err := json.Marshal(d.sub.ToJSON())
	require.NoError(t, err)
	registered, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](
		`window.herdRegisterPush(`+string(subJSON)+`, `+jsString(name)+`)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "herdRegisterPush")
	require.Equal(t, name, registered["name"], "the device is registered under its name: %v", registered)
	return d
}

// registrationID is the service worker's registration id, "" until
// Chromium reported it.
func (d *pushDevice) registrationID() serviceworker.RegistrationID {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.registration
}

// awaitPush waits for the next push to the device's subscription of the
// kind (those of other kinds before it are passed over) and returns it
// with its payload decoded.
func (d *pushDevice) awaitPush(kind string) (pushtest.Message, map[string]any) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		msgs, err := d.sub.WaitMessages(ctx, d.handled+1)
		require.NoError(d.t, err, "%s waits for a %s push", d.name, kind)
		m := msgs[d.handled]
		d.handled++
		var payload map[string]any
		require.NoError(d.t, json.Unmarshal(m.Plaintext, &payload), "%s", m.Plaintext)
		if payload["kind"] == kind {
			return m, payload
		}
	}
}

// deliver hands a push's plaintext to the service worker, as Chromium's
// push service client does with a push it received, and waits until the
// worker has handled it.
func (d *pushDevice) deliver(m pushtest.Message) {
	d.t.Helper()
	_, err := chromedp.Call(withTimeout(d.t, d.tab), serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
		Origin: d.origin, RegistrationID: d.registrationID(), Data: string(m.Plaintext),
	})
	require.NoError(d.t, err)
	d.delivered++
	outcomes, err := chromedp.Run(withTimeout(d.t, d.sw), chromedp.Evaluate[[]string](fmt.Sprintf(`(async () => {
		while (self.__herdPushes.length < %d) await new Promise(r => setTimeout(r, 20));
		return Promise.all(self.__herdPushes);
	})()`, d.delivered), chromedp.EvalAwaitPromise))
	require.NoError(d.t, err, "%s waits until its worker handled push %d", d.name, d.delivered)
	require.Len(d.t, outcomes, d.delivered, "%s's worker handled each push once", d.name)
	require.Equal(d.t, "handled", outcomes[d.delivered-1], "%s's worker handled %s", d.name, m.Plaintext)
}

// shownNotification is what the test reads of a notification the service
// worker shows.
type shownNotification struct {
	Tag     string   `json:"tag"`
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	Actions []string `json:"actions"`
	Kind    string   `json:"kind"`
}

// notifications lists the notifications the device's service worker
// shows.
func (d *pushDevice) notifications() []shownNotification {
	d.t.Helper()
	out, err := chromedp.Run(withTimeout(d.t, d.tab), chromedp.Evaluate[[]shownNotification](
		`navigator.serviceWorker.ready.then(r => r.getNotifications()).then(ns => ns.map(n => ({
			tag: n.tag, title: n.title, body: n.body, actions: n.actions.map(a => a.title),
			kind: (n.data && n.data.kind) || ''})))`, chromedp.EvalAwaitPromise))
	require.NoError(d.t, err)
	return out
}

// tagged is the notifications shown with tag.
func (d *pushDevice) tagged(tag string) []shownNotification {
	d.t.Helper()
	var out []shownNotification
	for _, n := range d.notifications() {
		if n.Tag == tag {
			out = append(out, n)
		}
	}
	return out
}

// worker attaches to the device's running service worker.
func (d *pushDevice) worker() (context.Context, context.CancelFunc) {
	d.t.Helper()
	var id target.ID
	eventually(d.t, d.name+"'s service worker runs", func() bool {
		infos, err := chromedp.Targets(withTimeout(d.t, d.tab))
		require.NoError(d.t, err)
		for _, info := range infos {
			if info.Type == "service_worker" && strings.HasPrefix(info.URL, d.origin+"/") {
				id = info.TargetID
				return true
			}
		}
		return false
	})
	// Detached on cancel, not closed: the worker is the browser's.
	return chromedp.NewContext(d.tab, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
}

// press presses the button of the device's notification that answers
// with optionID, through the worker's handler of notification clicks,
// and returns what the handler says happened.
func (d *pushDevice) press(optionID string) string {
	d.t.Helper()
	out, err := chromedp.Run(withTimeout(d.t, d.sw), chromedp.Evaluate[string](
		`self.registration.getNotifications().then(ns => handleNotificationAction(ns[0], `+jsString(optionID)+`))`,
		chromedp.EvalAwaitPromise))
	require.NoError(d.t, err)
	return out
}

// screenshot saves the device's page as artifacts/e2e/push-NAME-WHAT.png.
func (d *pushDevice) screenshot(what string) {
	d.t.Helper()
	saveScreenshot(d.t, withTimeout(d.t, d.tab), "push-"+strings.ToLower(d.name)+"-"+what+".png")
}

// startPushServer runs the composed server with the web app and one
// workspace; it returns the server and a client of its API.
func startPushServer(t *testing.T) (*server.Server, *testClient, string) {
	t.Helper()
	srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
	c := MustDialTest(t, srv)
	return srv, c, c.workspace("Attention")
}

func TestBrowserPushNotificationIsAnsweredAndClosesOnTheSecondDevice(t *testing.T) {
	ps := pushtest.New(t)
	srv, c, ws := startPushServer(t)
	ps.ExpectApplicationKey(c.call("push.config.get", map[string]any{})["public_key"].(string))
	taskID := c.task(ws, "Tidy the notes")
	sessionID := c.mockSession(taskID)
	origin := "http://" + srv.Addr()
	laptop := openPushDevice(t, ps, origin, "Laptop", viewport{"desktop", false})
	phone := openPushDevice(t, ps, origin, "Phone", viewport{"phone", true})
	devices := c.call("push.device.list", map[string]any{"workspace_id": ws})["devices"].([]any)
	require.Len(t, devices, 2, "both browsers are devices of the workspace")

	c.prompt(sessionID, "/scenario permission")
	tag := "task:" + taskID
	for _, d := range []*pushDevice{laptop, phone} {
		m, p := d.awaitPush("permission")
		require.Equal(t, tag, p["tag"])
		d.deliver(m)
		shown := d.tagged(tag)
		require.Len(t, shown, 1, "%s: one notification per task", d.name)
		require.Equal(t, shownNotification{
			Tag: tag, Title: p["title"].(string), Body: "Edit notes.txt", Actions: []string{"Allow", "Reject"}, Kind: "permission",
		}, shown[0], d.name)
		require.Contains(t, shown[0].Title, "needs your permission")
	}
	request, ok := c.message(sessionID, "permission_request", "")
	require.True(t, ok)
	require.Equal(t, "pending", request["status"], "nothing answered it before the button")

	require.Equal(t, "answered", laptop.press("allow"))
	eventually(t, "the agent's turn continues with the permission given", func() bool {
		_, ok := c.message(sessionID, "agent", "allowed")
		return ok
	})
	require.Empty(t, laptop.tagged(tag), "the pressed notification closed")

	m, p := phone.awaitPush("close")
	require.Equal(t, tag, p["tag"])
	require.EqualValues(t, 0, p["pending"])
	require.Len(t, phone.tagged(tag), 1, "the phone still shows the request before its close push")
	phone.deliver(m)
	require.Empty(t, phone.tagged(tag), "the close push closed the phone's notification")

	// The phone's app shows the agent's answer in the session.
	require.NoError(t, chromedp.Do(withTimeout(t, phone.tab),
		chromedp.Navigate(origin+"/tasks/"+taskID+"/sessions/"+sessionID),
		waitReady(),
		waitJS(agentSaid("allowed")),
	))
	phone.screenshot("answered")
	laptop.screenshot("answered")
}

// pendingRequest is a request the test made an agent open.
type pendingRequest struct {
	taskID, sessionID, pendingID, kind string
}

// openRequest prompts the session with the scenario and waits until its
// request of type typ is pending.
func openRequest(c *testClient, taskID, sessionID, scenario, typ string) pendingRequest {
	c.tb.Helper()
	c.prompt(sessionID, "/scenario "+scenario)
	var r pendingRequest
	eventually(c.tb, "session "+sessionID+" waits on its "+typ, func() bool {
		m, ok := c.message(sessionID, typ, "")
		if ok && m["status"] == "pending" {
			r = pendingRequest{taskID: taskID, sessionID: sessionID, pendingID: m["pending_id"].(string), kind: scenario}
		}
		return r.pendingID != ""
	})
	return r
}

func TestBrowserInboxAnswersFiveRequestsAcrossThirtyTasksOnAPhone(t *testing.T) {
	const tasks = 30
	scenarios := []struct{ scenario, typ string }{
		{"permission", "permission_request"}, {"clarify", "clarification_request"},
		{"permission", "permission_request"}, {"clarify", "clarification_request"},
		{"permission", "permission_request"},
	}
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv, c, ws := startPushServer(t)
		var ids []string
		for i := range tasks {
			ids = append(ids, c.task(ws, fmt.Sprintf("Task %02d", i+1)))
		}
		// Five tasks spread over the list ask, one after the other, so the
		// inbox's order (newest first) is known.
		var reqs []pendingRequest
		for i, s := range scenarios {
			taskID := ids[i*6+2]
			reqs = append(reqs, openRequest(c, taskID, c.mockSession(taskID), s.scenario, s.typ))
		}
		listed := c.call("inbox.list", map[string]any{"workspace_id": ws})["requests"].([]any)
		require.Len(t, listed, len(reqs))

		p := openStatusPage(t, v, "http://"+srv.Addr()+"/inbox", "inbox")
		item := func(r pendingRequest) string {
			return `#inbox .inbox-item[data-pending-id="` + r.pendingID + `"]`
		}
		count := func(n int) string {
			return fmt.Sprintf(`document.querySelector('#inbox-count').textContent === '%d' && document.querySelectorAll('#inbox .inbox-item').length === %d`, n, n)
		}
		p.do(waitJS(count(len(reqs))), waitJS(`document.title === '(5) herd'`))
		order := evalOn[[]string](p, `[...document.querySelectorAll('#inbox .inbox-item')].map(e => e.dataset.pendingId)`)
		var newestFirst []string
		for i := len(reqs) - 1; i >= 0; i-- {
			newestFirst = append(newestFirst, reqs[i].pendingID)
		}
		require.Equal(t, newestFirst, order, "the inbox lists the requests newest first")
		require.True(t, evalOn[bool](p, `(() => { const e = document.querySelector('#inbox-toggle'); return !!e && e.offsetParent !== null; })()`),
			"the top bar's count is visible")
		p.screenshot("five")

		for i := len(reqs) - 1; i >= 0; i-- {
			r := reqs[i]
			if r.kind == "clarify" {
				answer := fmt.Sprintf("branch %d", i)
				p.do(
					typeInto(item(r)+" textarea", answer),
					waitJS(`!document.querySelector(`+jsString(item(r)+" .inbox-send")+`).disabled`),
					chromedp.Click(chromedp.CSS(item(r)+" .inbox-send")),
				)
			} else {
				p.do(chromedp.Click(chromedp.CSS(item(r) + ` button[data-option-id="allow"]`)))
			}
			p.do(waitJS(count(i)), waitJS(`document.querySelector(`+jsString(item(r))+`) === null`))
		}
		p.do(
			chromedp.WaitVisible(chromedp.CSS("#inbox-empty")),
			waitJS(`document.title === 'herd'`),
		)
		p.screenshot("empty")

		for i, r := range reqs {
			want := "allowed"
			if r.kind == "clarify" {
				want = fmt.Sprintf("answer: branch %d", i)
			}
			eventually(t, "task "+r.taskID+"'s agent continues with "+want, func() bool {
				_, ok := c.message(r.sessionID, "agent", want)
				return ok
			})
		}
		require.Empty(t, c.call("inbox.list", map[string]any{"workspace_id": ws})["requests"])
		f := p.frames()
		t.Logf("%s: sent%s", v.name, countByAction(f.Sent))
		require.Empty(t, sessionFrames(f.Sent), "the inbox opened no session")
		require.Empty(t, sessionFrames(f.Received), "the inbox received no session frame")
		answers := 0
		for _, s := range f.Sent {
			if s.Action == "permission.respond" || s.Action == "clarification.respond" {
				answers++
			}
		}
		require.Equal(t, len(reqs), answers, "one answer sent per request")
	})
}
