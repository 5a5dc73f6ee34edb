package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/shared"
)

// The status browser tests check what a task row shows while the agents
// run elsewhere: rows come from each task's status summary on the
// workspace feed, and the page opens (subscribes to) at most the one
// session it shows. Every test runs at the desktop and at the phone
// viewport; on a phone the rows are looked at in the opened task sheet.
//
// statusProbe runs before any page script. It wraps window.WebSocket to
// record, per frame sent and received, its type, action and payload's
// session_id and task_id (a response also carries those of the request it
// answers), in window.__herdFrames; and it records in window.__herdSeen,
// per task row, the sequence of state labels the row showed, so a badge
// that flickers for a moment is caught too.
const statusProbe = `(() => {
  const frames = {sockets: 0, sent: [], received: [], unparsed: 0};
  window.__herdFrames = frames;
  const requests = new Map();
  const field = (p, k) => (p && typeof p === 'object' && typeof p[k] === 'string') ? p[k] : '';
  const Native = window.WebSocket;
  class Recording extends Native {
    constructor(...args) {
      super(...args);
      frames.sockets++;
      this.addEventListener('message', e => {
        let f;
        try { f = JSON.parse(e.data); } catch (_) { frames.unparsed++; return; }
        const req = (f.type !== 'notification' && requests.get(f.id)) || {};
        frames.received.push({type: f.type || '', action: f.action || '',
          session_id: field(f.payload, 'session_id'), task_id: field(f.payload, 'task_id'),
          req_session_id: req.session_id || '', req_task_id: req.task_id || '',
          code: field(f.payload, 'code'), snapshot: !!(f.payload && f.payload.snapshot), t: Math.round(performance.now())});
      });
    }
    send(data) {
      let f;
      try { f = JSON.parse(data); } catch (_) { frames.unparsed++; return super.send(data); }
      const rec = {type: f.type || '', action: f.action || '',
        session_id: field(f.payload, 'session_id'), task_id: field(f.payload, 'task_id'), t: Math.round(performance.now())};
      if (f.id) requests.set(f.id, rec);
      frames.sent.push(rec);
      return super.send(data);
    }
  }
  window.WebSocket = Recording;

  const seen = {};
  window.__herdSeen = seen;
  const look = () => {
    for (const icon of document.querySelectorAll('.task-row[data-task-id] .state-icon')) {
      const id = icon.closest('.task-row').dataset.taskId;
      const label = icon.getAttribute('aria-label');
      const list = seen[id] || (seen[id] = []);
      if (list[list.length - 1] !== label) list.push(label);
    }
  };
  new MutationObserver(look).observe(document, {childList: true, subtree: true, attributes: true, attributeFilter: ['class', 'aria-label']});
})();`

// wsFrame is one frame statusProbe recorded.
type wsFrame struct {
	Type      string `json:"type"`
	Action    string `json:"action"`
	SessionID string `json:"session_id"`
	TaskID    string `json:"task_id"`
	// ReqSessionID and ReqTaskID, on a response, are the session_id and
	// task_id of the request it answers.
	ReqSessionID string `json:"req_session_id"`
	ReqTaskID    string `json:"req_task_id"`
}

// wsFrames is window.__herdFrames.
type wsFrames struct {
	Sockets  int       `json:"sockets"`
	Sent     []wsFrame `json:"sent"`
	Received []wsFrame `json:"received"`
	Unparsed int       `json:"unparsed"`
}

// sessionFrames returns the frames whose action is a session one.
func sessionFrames(frames []wsFrame) []wsFrame {
	var out []wsFrame
	for _, f := range frames {
		if strings.HasPrefix(f.Action, "session.") {
			out = append(out, f)
		}
	}
	return out
}

// runsOf counts the stretches of consecutive labels equal to label.
func runsOf(labels []string, label string) int {
	n := 0
	for i, l := range labels {
		if l == label && (i == 0 || labels[i-1] != label) {
			n++
		}
	}
	return n
}

// countByAction says how many frames each action had, sorted by action.
func countByAction(frames []wsFrame) string {
	n := map[string]int{}
	for _, f := range frames {
		n[f.Type+" "+f.Action]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %6d %s", n[k], k)
	}
	return b.String()
}

// Row state labels, as the rows name them.
const (
	labelPermission = "Needs permission"
	labelGenerating = "Generating"
	labelWaiting    = "Waiting for input"
)

// viewport is one of the two layouts every status test runs at.
type viewport struct {
	name  string
	phone bool
}

var viewports = []viewport{{"desktop", false}, {"phone", true}}

// atEveryViewport runs body as a subtest per viewport.
func atEveryViewport(t *testing.T, body func(t *testing.T, v viewport)) {
	for _, v := range viewports {
		t.Run(v.name, func(t *testing.T) { body(t, v) })
	}
}

// statusPage is the web app in a headless Chromium tab with statusProbe
// installed.
type statusPage struct {
	t     *testing.T
	tab   context.Context // the tab; each step bounds its own wait
	phone bool
	name  string // for screenshots
}

// openStatusPage loads url at the viewport with statusProbe installed and
// waits for the live boot.
func openStatusPage(t *testing.T, v viewport, url, name string) *statusPage {
	t.Helper()
	p := &statusPage{t: t, tab: newBrowser(t), phone: v.phone, name: name + "-" + v.name}
	_, err := chromedp.Call(withTimeout(t, p.tab), page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: statusProbe})
	require.NoError(t, err)
	view := chromedp.EmulateViewport(1280, 800)
	if v.phone {
		view = chromedp.Emulate(device.IPhone12)
	}
	p.do(view, chromedp.Navigate(url), waitReady())
	size, err := chromedp.Run(withTimeout(t, p.tab), chromedp.Evaluate[string](`innerWidth + "x" + innerHeight`))
	require.NoError(t, err)
	want := "1280x800"
	if v.phone {
		want = "390x844"
	}
	require.Equal(t, want, size)
	return p
}

// do runs steps within one bounded wait; when one fails it saves a
// screenshot and logs the rows and the main pane before failing the test.
func (p *statusPage) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx := withTimeout(p.t, p.tab)
	for i, step := range steps {
		if err := chromedp.Do(ctx, step); err != nil {
			diag := withTimeout(p.t, p.tab)
			rows, _ := chromedp.Run(diag, chromedp.Evaluate[string](`[...document.querySelectorAll('.task-row')].map(r => r.outerHTML).join('\n')`))
			main, _ := chromedp.Run(diag, chromedp.Evaluate[string](`document.querySelector('#main').outerHTML`))
			seen, _ := chromedp.Run(diag, chromedp.Evaluate[map[string][]string](`window.__herdSeen`))
			frames, _ := chromedp.Run(diag, chromedp.Evaluate[string](`JSON.stringify({sockets: window.__herdFrames.sockets,
				sent: window.__herdFrames.sent.filter(f => f.action.startsWith('session.')),
				received: window.__herdFrames.received.filter(f => f.action.startsWith('session.') && f.type !== 'notification')})`))
			p.t.Logf("rows when step %d failed:\n%s\nmain pane:\n%s\nlabels each row showed: %v\nsession requests and answers: %s",
				i+1, rows, main, seen, frames)
			if png, err := chromedp.Run(diag, chromedp.FullScreenshot(100)); err == nil {
				p.t.Logf("screenshot: %s", p.name+"-failed.png")
				saveArtifact(p.t, p.name+"-failed.png", png)
			}
			require.NoError(p.t, err, "step %d", i+1)
		}
	}
}

// evalOn evaluates a JavaScript expression in the page.
func evalOn[T any](p *statusPage, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(withTimeout(p.t, p.tab), chromedp.Evaluate[T](expr))
	require.NoError(p.t, err)
	return v
}

// scope is the part of the page that holds the rows at this viewport.
func (p *statusPage) scope() string {
	if p.phone {
		return "#switcher-sheet"
	}
	return ".sidebar"
}

// showRows makes the task rows visible: on a phone it opens the sheet.
func (p *statusPage) showRows() {
	p.t.Helper()
	if p.phone {
		p.do(
			chromedp.Click(chromedp.CSS("#switcher-toggle")),
			chromedp.WaitVisible(chromedp.CSS("#switcher-sheet")),
		)
	}
}

// hideRows closes the phone's sheet; the desktop sidebar stays.
func (p *statusPage) hideRows() {
	p.t.Helper()
	if p.phone {
		p.do(
			chromedp.Click(chromedp.CSS("#switcher-close")),
			chromedp.WaitNotVisible(chromedp.CSS("#switcher-sheet")),
		)
	}
}

// row is the selector of a task's row in the switcher of this viewport.
func (p *statusPage) row(taskID string) string {
	return p.scope() + ` .task-row[data-task-id="` + taskID + `"]`
}

// rowLabel is a JavaScript expression for the state label of the task's
// row, or "" while the row is not visible.
func (p *statusPage) rowLabel(taskID string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e && e.offsetParent !== null ? e.getAttribute('aria-label') : ''; })()`,
		jsString(p.row(taskID)+" .state-icon"))
}

// rowShows is true once every listed task's visible row shows label.
func (p *statusPage) rowShows(label string, taskIDs ...string) string {
	conds := make([]string, len(taskIDs))
	for i, id := range taskIDs {
		conds[i] = p.rowLabel(id) + ` === ` + jsString(label)
	}
	return strings.Join(conds, " && ")
}

// rowHasErrorDot is true while the task's visible row shows its error dot.
func (p *statusPage) rowHasErrorDot(taskID string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.offsetParent !== null; })()`,
		jsString(p.row(taskID)+" .error-dot"))
}

// openTask selects the task through its row.
func (p *statusPage) openTask(taskID string) {
	p.t.Helper()
	p.showRows()
	p.do(chromedp.Click(chromedp.CSS(p.row(taskID))))
	if p.phone {
		p.do(chromedp.WaitNotVisible(chromedp.CSS("#switcher-sheet")))
	}
}

// showTab shows the task's chat or details tab on a phone, where they do
// not fit side by side; on the desktop both show, and it does nothing.
func (p *statusPage) showTab(tab string) {
	p.t.Helper()
	if p.phone {
		p.do(chromedp.Click(chromedp.CSS("#tab-"+tab)), chromedp.WaitVisible(chromedp.CSS(`#task-view[data-tab="`+tab+`"]`)))
	}
}

// settle returns once the page shows every summary the server derived
// from changes made before the call. The projector derives summaries in
// the order tasks were marked and publishes them on the connection's one
// ordered lane, so once the summary of a task created now has reached the
// page, every earlier one has; and the page applies notifications in
// arrival order, so once the row of a task created after that shows,
// those summaries have been rendered.
func (p *statusPage) settle(c *testClient, workspaceID string) {
	p.t.Helper()
	marker := c.task(workspaceID, "Marker")
	p.do(waitJS(`window.__herdFrames.received.some(f => f.action === 'task.status_summary.updated' && f.task_id === ` + jsString(marker) + `)`))
	rendered := c.task(workspaceID, "Rendered marker")
	p.do(waitJS(`document.querySelector(` + jsString(`.task-row[data-task-id="`+rendered+`"]`) + `) !== null`))
}

// frames returns what statusProbe recorded.
func (p *statusPage) frames() wsFrames {
	p.t.Helper()
	f := evalOn[wsFrames](p, `window.__herdFrames`)
	require.Zero(p.t, f.Unparsed, "every frame is one JSON envelope")
	return f
}

// seen returns the labels the task's row showed, in order.
func (p *statusPage) seen(taskID string) []string {
	p.t.Helper()
	return evalOn[[]string](p, `window.__herdSeen[`+jsString(taskID)+`] || []`)
}

// screenshot saves the page as artifacts/e2e/NAME-VIEWPORT-WHAT.png.
func (p *statusPage) screenshot(what string) {
	p.t.Helper()
	saveScreenshot(p.t, withTimeout(p.t, p.tab), p.name+"-"+what+".png")
}

// saveArtifact writes a screenshot taken already, for failure reports.
func saveArtifact(tb testing.TB, name string, png []byte) {
	tb.Helper()
	if err := os.MkdirAll(artifactDir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(artifactDir, name), png, 0o644)
	}
}

// startStatusServer runs the composed server with the web app on addr,
// keeping its data in dataDir, without the demo workspace. Shutting it down
// in the test is fine: cleanup shuts it down again, harmlessly.
func startStatusServer(tb testing.TB, addr, dataDir string) *server.Server {
	tb.Helper()
	var srv *server.Server
	h, err := newUI(testStatic(tb), func(ctx context.Context) (shared.BootResponse, error) {
		return srv.BootSnapshot(ctx)
	})
	require.NoError(tb, err)
	srv, err = server.New(server.Config{Addr: addr, DataDir: dataDir}, server.Options{Version: "test", UI: h, PushLoopbackHTTP: true})
	require.NoError(tb, err)
	require.NoError(tb, srv.Start(context.Background()))
	tb.Cleanup(func() { shutdown(tb, srv) })
	return srv
}

func shutdown(tb testing.TB, srv *server.Server) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(tb, srv.Shutdown(ctx))
}

// eventually polls cond from the test until it holds, for at most 20 s.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up after 20s waiting until %s", what)
		}
		<-tick.C
	}
}

// workspace creates a workspace and returns its id.
func (c *testClient) workspace(name string) string {
	c.tb.Helper()
	return c.call("workspace.create", map[string]any{"name": name})["id"].(string)
}

// task creates a task and returns its id.
func (c *testClient) task(workspaceID, title string) string {
	c.tb.Helper()
	return c.call("task.create", map[string]any{"workspace_id": workspaceID, "title": title})["id"].(string)
}

// mockSession starts a mock agent session for the task and waits until it
// takes prompts; it returns the session id.
func (c *testClient) mockSession(taskID string) string {
	c.tb.Helper()
	id := c.call("session.create", map[string]any{"task_id": taskID, "agent_profile_id": "mock"})["id"].(string)
	eventually(c.tb, "session "+id+" waits for input", func() bool {
		for _, s := range c.call("session.list", map[string]any{"task_id": taskID})["sessions"].([]any) {
			s := s.(map[string]any)
			if s["id"] == id {
				require.NotEqual(c.tb, "FAILED", s["state"], "the mock agent did not start: %v", s)
				return s["state"] == "WAITING_FOR_INPUT"
			}
		}
		return false
	})
	return id
}

// prompt sends a prompt to a session; it must be dispatched at once.
func (c *testClient) prompt(sessionID, text string) {
	c.tb.Helper()
	c.n++
	added := c.call("message.add", map[string]any{
		"session_id": sessionID, "client_message_id": fmt.Sprintf("status-%s-%d", sessionID, c.n), "content": text,
	})
	require.Equal(c.tb, "dispatched", added["outcome"])
}

// messages lists a session's newest messages.
func (c *testClient) messages(sessionID string) []map[string]any {
	c.tb.Helper()
	var out []map[string]any
	for _, m := range c.call("message.list", map[string]any{"session_id": sessionID, "limit": 500})["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// message returns the session's first message of type typ with content
// (any content when empty), if any.
func (c *testClient) message(sessionID, typ, content string) (map[string]any, bool) {
	c.tb.Helper()
	for _, m := range c.messages(sessionID) {
		if m["type"] == typ && (content == "" || m["content"] == content) {
			return m, true
		}
	}
	return nil, false
}

func TestBrowserBackgroundPermissionShowsOnBothSwitchersWithoutSubscribing(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Status")
		c.task(ws, "Quiet neighbour")
		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "status-permission")
		p.showRows()

		taskID := c.task(ws, "Asks before editing")
		sessionID := c.mockSession(taskID)
		c.prompt(sessionID, "/scenario permission-busy")
		p.do(waitJS(p.rowShows(labelPermission, taskID)))
		p.screenshot("pending")

		// While the request waits, an unrelated read runs to completion;
		// the row must not stop asking for permission.
		eventually(t, "the unrelated read has completed", func() bool {
			m, ok := c.message(sessionID, "tool_call", "Read README.md")
			return ok && m["status"] == "complete"
		})
		p.settle(c, ws)
		require.Equal(t, labelPermission, evalOn[string](p, p.rowLabel(taskID)), "the row still asks for permission after the read completed")
		seen := p.seen(taskID)
		first := slices.Index(seen, labelPermission)
		require.GreaterOrEqual(t, first, 0)
		require.Equal(t, []string{labelPermission}, seen[first:], "once asking for permission, the row never showed anything else: %v", seen)

		request, ok := c.message(sessionID, "permission_request", "")
		require.True(t, ok, "the permission request is in the transcript")
		require.Equal(t, "pending", request["status"])
		c.call("permission.respond", map[string]any{"session_id": sessionID, "pending_id": request["pending_id"], "option_id": "allow"})
		p.do(waitJS(p.rowLabel(taskID) + ` !== ` + jsString(labelPermission) + ` && ` + p.rowLabel(taskID) + ` !== ''`))
		p.do(waitJS(p.rowShows(labelWaiting, taskID)))
		seen = p.seen(taskID)
		t.Logf("%s: the row showed %q", v.name, seen)
		require.Equal(t, 1, runsOf(seen, labelPermission), "the row asked for permission in one stretch, without a gap: %q", seen)

		f := p.frames()
		t.Logf("%s: sent%s\nreceived%s", v.name, countByAction(f.Sent), countByAction(f.Received))
		require.Empty(t, sessionFrames(f.Sent), "the page opened no session")
		require.Empty(t, sessionFrames(f.Received), "the page received no session frame")
		require.True(t, slices.ContainsFunc(f.Received, func(r wsFrame) bool {
			return r.Action == "task.status_summary.updated" && r.TaskID == taskID
		}), "the row's badge came from the task's summary on the workspace feed")
	})
}

func TestBrowserErrorDotAppearsAndClearsOnDismiss(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Status")
		c.task(ws, "Fine")
		taskID := c.task(ws, "Fails once")
		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "status-error")
		p.showRows()

		sessionID := c.mockSession(taskID)
		c.prompt(sessionID, "/scenario error")
		p.do(waitJS(p.rowHasErrorDot(taskID)))
		p.screenshot("dot")
		sum := c.call("task.get", map[string]any{"task_id": taskID})["status_summary"].(map[string]any)
		active, ok := sum["active_error"].(map[string]any)
		require.True(t, ok, "the summary carries the active error: %v", sum)
		preview := active["preview"].(string)
		require.NotEmpty(t, preview)

		p.hideRows()
		p.openTask(taskID)
		p.do(
			chromedp.WaitVisible(chromedp.CSS("#error-banner")),
			waitJS(`document.querySelector('#error-banner .error-preview').textContent === `+jsString(preview)),
		)
		p.screenshot("banner")
		p.do(
			chromedp.Click(chromedp.CSS("#error-dismiss")),
			waitJS(`document.querySelector('#error-banner') === null`),
		)
		p.showRows()
		p.do(
			waitJS(p.rowLabel(taskID)+` !== ''`),
			waitJS(`!(`+p.rowHasErrorDot(taskID)+`)`),
		)
		require.Zero(t, evalOn[int](p, `document.querySelectorAll('.error-dot').length`), "no row shows an error dot")
		p.screenshot("dismissed")
	})
}

func TestBrowserRestartLeavesNoStaleActivityBadge(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		dir := t.TempDir()
		first := startStatusServer(t, "127.0.0.1:0", dir)
		addr := first.Addr()
		c := MustDialTest(t, first)
		ws := c.workspace("Status")
		c.task(ws, "Idle")
		taskID := c.task(ws, "Sleeps through the restart")
		sessionID := c.mockSession(taskID)
		p := openStatusPage(t, v, "http://"+addr+"/", "status-restart")
		p.showRows()
		c.prompt(sessionID, "/scenario sleep 60000")
		p.do(waitJS(p.rowShows(labelGenerating, taskID)))
		p.screenshot("before")

		// The page stays open across the restart, on the same address: it
		// reconnects and boots again on its own.
		shutdown(t, first)
		p.do(waitJS(`document.querySelector('#conn-status.conn-online') === null`))
		second := startStatusServer(t, addr, dir)
		require.Equal(t, addr, second.Addr())
		p.do(
			waitJS(`document.querySelector('#conn-status.conn-online') !== null`),
			waitJS(p.rowShows(labelWaiting, taskID)),
		)
		require.Zero(t, evalOn[int](p, `document.querySelectorAll('.state-generating, .state-background').length`),
			"no generating or background indicator anywhere on the page")
		p.screenshot("after")

		// A fresh load renders the same from the server's first screen.
		status, html := getPage(t, "http://"+addr+"/", nil)
		require.Equal(t, 200, status)
		require.NotContains(t, html, "state-generating")
		require.NotContains(t, html, "state-background")
		p.do(chromedp.Reload(), waitReady())
		p.showRows()
		p.do(waitJS(p.rowShows(labelWaiting, taskID)))
		require.Zero(t, evalOn[int](p, `document.querySelectorAll('.state-generating, .state-background').length`))
		seen := p.seen(taskID)
		require.NotContains(t, seen, labelGenerating, "the reloaded page never showed the task generating: %v", seen)
	})
}

func TestBrowserOnlyTheOpenSessionStreams(t *testing.T) {
	const (
		tasks     = 27
		streaming = 10
	)
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Busy")
		var ids []string
		for i := range tasks {
			ids = append(ids, c.task(ws, fmt.Sprintf("Task %02d", i+1)))
		}
		busy, opened := ids[:streaming], ids[tasks-1]
		sessions := make([]string, streaming)
		for i, id := range busy {
			sessions[i] = c.mockSession(id)
		}

		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "status-streams")
		p.openTask(opened)
		p.do(
			chromedp.WaitVisible(chromedp.CSS("#session-start")),
			waitJS(`document.querySelector('#session-profile').value === 'mock'`),
			chromedp.Click(chromedp.CSS("#session-start")),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
		)
		openedSession := evalOn[string](p, `document.querySelector('#session-view').dataset.sessionId`)
		require.NotEmpty(t, openedSession)

		for _, s := range sessions {
			c.prompt(s, "/scenario stream 400 20")
		}
		p.showRows()
		p.do(waitJS(p.rowShows(labelGenerating, busy...)))
		p.screenshot("generating")
		p.hideRows()
		// The page's own session streams while the ten do.
		p.do(
			sendPrompt("/scenario stream 60 20"),
			waitJS(`document.querySelector('.message[data-type="agent"][data-status="complete"]') !== null`),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
		)
		p.showRows()
		p.do(waitJS(p.rowShows(labelWaiting, busy...)))
		p.screenshot("settled")

		f := p.frames()
		t.Logf("%s: %d socket(s); sent%s\nreceived%s", v.name, f.Sockets, countByAction(f.Sent), countByAction(f.Received))
		require.Equal(t, 1, f.Sockets, "the page kept one connection throughout")
		for _, s := range sessionFrames(f.Sent) {
			if s.Action == "session.list" || s.Action == "session.create" {
				require.Equal(t, opened, s.TaskID, "%s for another task", s.Action)
				continue
			}
			require.Equal(t, openedSession, s.SessionID, "%s sent for another session", s.Action)
		}
		for _, s := range f.Sent {
			if s.SessionID != "" {
				require.Equal(t, openedSession, s.SessionID, "%s names another session", s.Action)
			}
		}
		require.True(t, slices.ContainsFunc(f.Sent, func(s wsFrame) bool {
			return s.Action == "session.subscribe" && s.SessionID == openedSession
		}), "the page subscribed to the session it shows")
		streamed := 0
		for _, r := range sessionFrames(f.Received) {
			if r.Type == "notification" {
				require.Equal(t, openedSession, r.SessionID, "%s notification of another session", r.Action)
				streamed++
				continue
			}
			require.True(t, r.ReqSessionID == openedSession || r.ReqTaskID == opened,
				"%s %s answers a request about another session: %+v", r.Type, r.Action, r)
		}
		require.Positive(t, streamed, "the open session streamed to the page")
		for _, id := range busy {
			require.Contains(t, p.seen(id), labelGenerating, "task %s's row showed it generating", id)
			require.True(t, slices.ContainsFunc(f.Received, func(r wsFrame) bool {
				return r.Action == "task.status_summary.updated" && r.TaskID == id
			}), "task %s's badge came from its summary", id)
		}
	})
}
