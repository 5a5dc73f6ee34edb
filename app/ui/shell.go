package ui

import (
	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
)

// desktopMinWidth is the narrowest viewport, in CSS pixels, that gets the
// desktop layout; narrower ones get the phone layout. app.css uses the same
// breakpoint in its media queries.
const desktopMinWidth = 768

// actionSelectTask is posted by a task row with the task id as its value.
const actionSelectTask = "herd.task.select"

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
// data.
func Routes(snapshot SnapshotFunc) {
	app.Route("/", func() app.Composer { return &shell{snapshot: snapshot} })
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
	// link and wake exist only while mounted in the browser.
	link *link
	wake *wakeListener
	// sessions is the selected task's session pane; browser only.
	sessions *sessionView

	// ready is set once the first boot response has been applied.
	ready bool
	// bootErr is the server's answer when a boot failed; empty otherwise.
	bootErr    string
	phone      bool
	sheetOpen  bool
	selectedID string
	draft      draft
	// dismissal is the last error.dismiss sent, with its outcome.
	dismissal dismissal
	// prLink is the selected task's pull request link control.
	prLink prLink
}

// OnInit creates the store; it runs on the server and in the browser,
// where it starts from the snapshot the server rendered into the page.
func (s *shell) OnInit() {
	s.store = state.New()
	if app.IsClient {
		s.hydrate()
	}
}

// OnMount runs only in the browser: it picks the layout and connects.
func (s *shell) OnMount(ctx app.Context) {
	s.measure()
	ctx.Handle(actionSelectTask, s.onSelectTask)
	s.link = newLink(ctx, s)
	s.sessions = newSessionView(s)
	s.wake = listenForWake(s.link.client.Nudge)
	s.link.client.Start()
}

// OnDismount disconnects. The client's goroutines reach the UI goroutine
// only through go-app's buffered dispatch queue, so waiting for them here
// does not deadlock.
func (s *shell) OnDismount() {
	s.wake.release()
	s.link.client.Close()
	s.sessions.release()
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

// Render draws the page.
func (s *shell) Render() app.UI {
	layout := "layout-desktop"
	if s.phone {
		layout = "layout-phone"
	}
	root := app.Div().ID("app-root").Class("shell", layout)
	if s.ready {
		root = root.DataSet("ready", "true")
	}
	header := s.renderTopbar()
	main := app.Main().ID("main").Class("main")
	if s.sheetOpen {
		// The open sheet is modal: the page behind it takes no focus or
		// clicks.
		header = header.Attr("inert", true)
		main = main.Attr("inert", true)
	}
	return root.Body(
		header,
		app.If(!s.phone, func() app.UI {
			return app.Aside().Class("sidebar").Aria("label", "Tasks").Body(s.renderSwitcher(false))
		}),
		main.Body(s.renderMain()),
		app.If(s.phone, s.renderSheet),
		s.renderSnapshot(),
	)
}

// renderTopbar draws the header: the phone's switcher button, the brand,
// the workspace and the connection indicator.
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
		app.Span().
			ID("conn-status").
			Class("conn", "conn-"+conn.String()).
			Role("status").
			Title("Connection to the server").
			Body(
				app.Span().Class("conn-dot").Aria("hidden", "true"),
				app.Span().Class("conn-text").Text(conn.String()),
			),
	)
}

// renderMain draws the main pane: a boot error if any, then the selected
// task, or the new task form when none is selected.
func (s *shell) renderMain() app.UI {
	t, selected := s.store.Task(s.selectedID)
	return app.Div().Class("main-inner").Body(
		app.If(s.bootErr != "", func() app.UI {
			return app.P().Class("banner", "banner-error").Role("alert").Text("Could not load tasks: " + s.bootErr)
		}),
		app.If(selected, func() app.UI { return s.renderDetail(t, s.sessionPane()) }).
			Else(s.renderNewTask),
	)
}

// onSelectTask handles actionSelectTask: it shows the task and closes the
// phone sheet.
func (s *shell) onSelectTask(ctx app.Context, a app.Action) {
	id, ok := a.Value.(string)
	if !ok {
		return
	}
	s.selectedID = id
	s.syncSessions(ctx)
	if s.sheetOpen {
		s.closeSheet(ctx)
	}
}

// syncSessions points the session pane at the selected task; an unchanged
// selection changes nothing.
func (s *shell) syncSessions(ctx app.Context) {
	if s.sessions == nil {
		return
	}
	t, _ := s.store.Task(s.selectedID)
	s.sessions.show(ctx, t)
}

// sessionPane is the session pane in the browser; nil on the server,
// whose render has no connection to list sessions with.
func (s *shell) sessionPane() app.UI {
	if s.sessions == nil || s.sessions.taskID != s.selectedID {
		return nil
	}
	return s.sessions.renderSessionPane()
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
