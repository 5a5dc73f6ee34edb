package ui

import (
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// desktopMinWidth is the narrowest viewport, in CSS pixels, that gets the
// desktop layout; narrower ones get the phone layout. app.css uses the same
// breakpoint in its media queries.
const desktopMinWidth = 768

// Element ids that code refers to besides the markup that defines them.
const (
	idSwitcherToggle = "switcher-toggle"
	idSwitcherClose  = "switcher-close"
	idNewTaskTitle   = "new-task-title"
)

// Routes registers the UI's pages with go-app. The wasm main calls it
// before app.RunWhenOnBrowser, with a nil snapshot; the server calls it
// before serving pages (a path that is not registered on the server
// answers 404), with a snapshot that lets it render the first screen with
// data. go-app's routes are one registry per process, and a pattern route
// registered twice would keep answering with the first one: the pages are
// registered once, and a later call only replaces the snapshot (a test
// process starts one server after another).
func Routes(snapshot SnapshotFunc) {
	pages.snapshot.Store(&snapshot)
	pages.once.Do(func() {
		page := func() app.Composer { return &shell{snapshot: *pages.snapshot.Load()} }
		app.Route("/", page)
		// Every address is the same root: navigating between them keeps
		// the mounted shell (go-app updates a component of the same type
		// in place) and only changes what OnNav selects.
		app.RouteWithRegexp(`^/tasks/[^/]+(/sessions/[^/]+|/review)?/?$`, page)
		app.RouteWithRegexp(`^`+state.InboxPath+`/?$`, page)
	})
}

// pages holds what Routes registered: once, with the latest snapshot.
var pages struct {
	once     sync.Once
	snapshot atomic.Pointer[SnapshotFunc]
}

// shell is the root component; see the package documentation.
type shell struct {
	app.Compo

	store *state.Store
	// snapshot loads the first screen on the server; nil in the browser.
	snapshot SnapshotFunc
	// snapshotJSON is the server-rendered snapshot embedded in the page.
	snapshotJSON string
	// bootWorkspaceID is the workspace of the embedded snapshot; the first
	// live boot asks for it again.
	bootWorkspaceID string
	// link, wake and keys exist only while mounted in the browser.
	link *link
	wake *wakeListener
	keys *keyListener
	// sessions is the mounted task view's session pane, if any; browser
	// only. The task view sets and clears it.
	sessions *sessionView
	// review is the mounted review, if any; browser only. It sets and
	// clears it.
	review *reviewView
	// outboxes holds each session's outbox once one was needed, so the
	// session pane and the review send through the same one; browser only.
	outboxes outboxes
	// reviewComments holds each task's review comments once the review
	// needed them; browser only.
	reviewComments reviewCommentStores
	// inbox holds the workspace's pending requests; attention decides the
	// title and the sound, and attend, browser only, carries it out.
	inbox     *state.Inbox
	attention *state.Attention
	attend    *attender

	// ready is set once the first boot response has been applied; listed
	// once every page of a listing has been (a task on a later page is not
	// missing before that).
	ready  bool
	listed bool
	// bootErr is the server's answer when a boot failed; empty otherwise.
	bootErr   string
	phone     bool
	sheetOpen bool
	// route is what the address selects.
	route state.Route
	// seen remembers when each task was last looked at; query filters the
	// switcher by title; today is the local date rows compare their last
	// activity with.
	seen  state.Seen
	query string
	today string
	// focusOnOpen is the element the next task view to mount focuses
	// once it has rendered; empty for none.
	focusOnOpen string
	// renders counts the shell's renders; see taskView.Rev.
	renders uint64
	// rowEdit is the open actions of one task row.
	rowEdit rowEdit
	draft   draft
	// push is the "Notifications on this device" panel (notify.go).
	push pushPanel
}

// OnInit creates the store; it runs on the server and in the browser,
// where it starts from the snapshot the server rendered into the page.
func (s *shell) OnInit() {
	s.store = state.New()
	s.inbox = state.NewInbox()
	if app.IsClient {
		s.attention = state.NewAttention(localStorage)
		s.seen = state.LoadSeen(localStorage)
		s.hydrate()
	} else {
		s.attention = state.NewAttention(state.MapKV{})
	}
}

// OnMount runs only in the browser: it picks the layout and connects.
func (s *shell) OnMount(ctx app.Context) {
	s.measure()
	s.route = routeOf(app.Window().URL())
	s.link = newLink(ctx, s)
	s.wake = listenForWake(s.link.client.Nudge)
	s.keys = listenForKeys(s)
	s.attend = listenForAttention(ctx, s)
	s.syncAttention()
	s.installPushHook()
	s.link.client.Start()
}

// OnNav runs when the address changes (a link, history back or forward):
// the selection follows it.
func (s *shell) OnNav(ctx app.Context) {
	s.route = routeOf(ctx.Page().URL())
	if s.sheetOpen {
		s.sheetOpen = false
	}
	// A tapped notification navigates here: its task, not the panel.
	s.push.open = false
}

// OnDismount disconnects. The client's goroutines reach the UI goroutine
// only through go-app's buffered dispatch queue, so waiting for them here
// does not deadlock.
func (s *shell) OnDismount() {
	s.wake.release()
	s.keys.release()
	s.attend.release()
	s.releasePushHook()
	s.link.client.Close()
}

// OnResize switches between the phone and the desktop layout.
func (s *shell) OnResize(app.Context) {
	s.measure()
	if !s.phone {
		s.sheetOpen = false
	}
}

// measure sets the layout from the viewport width.
func (s *shell) measure() {
	w, _ := app.Window().Size()
	s.phone = w > 0 && w < desktopMinWidth
}

// Render draws the page: the top bar, the connection banner, the task
// switcher (sidebar or sheet) and the main pane.
func (s *shell) Render() app.UI {
	s.renders++
	s.today = time.Now().Format(time.DateOnly)
	if t, ok := s.selectedTask(); ok {
		// The task on screen is being looked at: what it did is seen.
		s.seen.Look(t.ID, state.RowOf(t).LastActivity)
	}
	layout := "layout-desktop"
	if s.phone {
		layout = "layout-phone"
	}
	root := app.Div().ID("app-root").Class("shell", layout)
	if s.ready {
		root = root.DataSet("ready", "true")
	}
	if s.ready && s.store.Connection() != state.Online {
		// Live indicators freeze: what they show is the last known state.
		root = root.Class("stale")
	}
	header := s.renderTopbar()
	main := app.Main().ID("main").Class("main")
	if _, selected := s.selectedTask(); selected {
		main = main.Class("main-task")
	}
	sidebar := app.Aside().Class("sidebar").Aria("label", "Tasks")
	if s.sheetOpen || s.push.open {
		// The open sheet or panel is modal: the page behind it takes no
		// focus or clicks.
		header = header.Attr("inert", true)
		main = main.Attr("inert", true)
		sidebar = sidebar.Attr("inert", true)
	}
	return root.Body(
		header,
		s.renderConnectionBanner(),
		// Always there, empty on a phone: go-app matches children by
		// position, and a sidebar that came and went with the layout would
		// rebuild the main pane after it (and remount the task view).
		sidebar.Body(
			app.If(!s.phone, func() app.UI { return s.renderSwitcher(false) }),
		),
		main.Body(s.renderMain()),
		app.If(s.phone, s.renderSheet),
		s.renderNotifyLayer(),
		s.renderSnapshot(),
	)
}

// renderTopbar draws the header: the phone's switcher button, the brand,
// the workspace, the connection indicator and the notifications bell.
func (s *shell) renderTopbar() app.HTMLHeader {
	conn := s.store.Connection()
	ws, hasWorkspace := s.store.Workspace()
	return app.Header().Class("topbar").Body(
		app.If(s.phone, func() app.UI {
			return app.Button().
				ID(idSwitcherToggle).
				Class("icon-button", "switcher-toggle").
				Type("button").
				Aria("label", "Tasks").
				Aria("expanded", s.sheetOpen).
				Aria("controls", "switcher-sheet").
				OnClick(s.onOpenSheet).
				Body(app.Span().Class("burger").Aria("hidden", "true"))
		}),
		app.Span().Class("brand").Body(
			app.Img().Class("brand-mark").Src("/web/icon.svg").Alt(""),
			app.Span().Class("brand-name").Text("herd"),
		),
		app.If(hasWorkspace, func() app.UI {
			return app.Span().Class("workspace-name").Title("Workspace").Text(ws.Name)
		}),
		s.renderInboxToggle(),
		app.Span().
			ID("conn-status").
			Class("conn", "conn-"+conn.String()).
			Role("status").
			Title("Connection to the server").
			Body(
				app.Span().Class("conn-dot").Aria("hidden", "true"),
				app.Span().Class("conn-text").Text(conn.String()),
			),
		s.renderNotifyButton(),
	)
}

// renderConnectionBanner says, while the connection is down after it was
// up, that what the page shows is the last known state, with a button
// that reconnects at once instead of waiting out the backoff.
//
// Its slot is always there, empty while online: go-app matches children
// by position, and a banner that came and went before the panes would
// make it rebuild them (and remount the task view) every time.
func (s *shell) renderConnectionBanner() app.UI {
	slot := app.Div().Class("reconnect-slot")
	if !s.ready || s.store.Connection() == state.Online {
		return slot
	}
	return slot.Body(app.Div().ID("reconnect-banner").Class("reconnect-banner").Role("status").Body(
		app.Span().Class("reconnect-text").Text("Reconnecting… States shown are the last known."),
		app.Button().ID("reconnect-now").Class("text-button").Type("button").OnClick(s.onReconnectNow).Text("Retry now"),
	))
}

// onReconnectNow skips the reconnect backoff.
func (s *shell) onReconnectNow(app.Context, app.Event) {
	if s.link != nil {
		s.link.client.Nudge()
	}
}

// selectedTask returns the task the address selects, if the store holds
// it.
func (s *shell) selectedTask() (shared.Task, bool) {
	if s.route.TaskID == "" {
		return shared.Task{}, false
	}
	return s.store.Task(s.route.TaskID)
}

// renderMain draws the main pane: a boot error if any, then the selected
// task, or the new task form when none is selected (or the addressed task
// is not there).
func (s *shell) renderMain() app.UI {
	t, selected := s.selectedTask()
	missing := s.route.TaskID != "" && !selected && s.listed
	return app.If(selected && s.route.Review, func() app.UI { return s.reviewViewOf(t) }).ElseIf(selected, func() app.UI {
		return s.taskViewOf(t)
	}).ElseIf(s.route.Inbox, func() app.UI {
		return s.renderInbox(time.Now())
	}).Else(func() app.UI {
		return app.Div().Class("main-inner").Body(
			app.If(s.bootErr != "", func() app.UI {
				return app.P().Class("banner", "banner-error").Role("alert").Text("Could not load tasks: " + s.bootErr)
			}),
			app.If(missing, func() app.UI {
				return app.P().ID("task-missing").Class("banner").Role("status").
					Text("That task is not in this workspace: it was archived, deleted or never existed here.")
			}),
			s.renderNewTask(),
		)
	})
}

// taskViewOf returns the task view of t, the selected task, with its
// input from the shell.
func (s *shell) taskViewOf(t shared.Task) *taskView {
	return &taskView{
		Shell:     s,
		Task:      t,
		SessionID: s.route.SessionID,
		Phone:     s.phone,
		Conn:      s.store.Connection(),
		Profiles:  s.store.AgentProfiles(),
		Rev:       s.renders,
	}
}

// routeOf returns what the page address u selects.
func routeOf(u *url.URL) state.Route { return state.ParseAddress(u.EscapedPath(), u.RawQuery) }

// selectTask navigates to task id's address.
func (s *shell) selectTask(ctx app.Context, id string) {
	s.navigate(ctx, state.Route{TaskID: id})
	if s.sheetOpen {
		s.closeSheet(ctx)
	}
}

// navigate makes r the page's address, in the history, and selects it.
func (s *shell) navigate(ctx app.Context, r state.Route) {
	if r == s.route {
		return
	}
	s.route = r
	ctx.Navigate(r.Path())
}

// focus moves keyboard focus to the element with id once the current
// update has been rendered.
func focus(ctx app.Context, id string) {
	ctx.Defer(func(app.Context) {
		if el := app.Window().GetElementByID(id); el.Truthy() {
			el.Call("focus")
		}
	})
}
