package ui

import (
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/markdown"
	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// Tabs of a task view where chat and details do not fit side by side (the
// phone, and desktop windows narrower than app.css's side panel
// breakpoint).
const (
	tabChat    = "chat"
	tabDetails = "details"
)

// Element ids of the task view.
const (
	idTaskTitle  = "detail-title"
	idStateChip  = "task-state-chip"
	idTabChat    = "tab-chat"
	idTabDetails = "tab-details"
)

// taskView is the selected task: its chat pane (the session pane) and its
// details (description, repositories, git, pull request). It is a go-app
// component so that it owns the session pane's lifetime: mounted, it keeps
// the shown session subscribed; dismounted (no task selected), it
// unsubscribes. Its exported fields are its whole input from the shell.
type taskView struct {
	app.Compo

	// Shell is the page, for the store and the connection; it never
	// changes, so it never re-renders the view by itself.
	Shell *shell
	Task  shared.Task
	// SessionID is the session the address names; empty for the task's
	// primary (or newest) one.
	SessionID string
	Phone     bool
	Conn      state.Connection
	Profiles  []shared.AgentProfile
	// Rev is the shell's render count. The view's own state (the session
	// pane's, the controls') changes inside dispatches through the shell's
	// context, which re-render the shell but, by themselves, no child
	// whose input is unchanged: a new Rev on every shell render makes the
	// view render with it. Its children (transcript entries, rows) still
	// skip what did not change.
	Rev uint64

	mounted bool
	// view is the session pane; nil on the server and before mount.
	view *sessionView
	tab  string
	// dismissal is the last error.dismiss sent, with its outcome.
	dismissal dismissal
	// prLink is the task's pull request link control.
	prLink prLink
}

// OnMount creates the session pane and shows the task's sessions.
func (tv *taskView) OnMount(ctx app.Context) {
	tv.mounted = true
	tv.view = newSessionView(tv)
	tv.Shell.sessions = tv.view
	tv.view.show(ctx, tv.Task, tv.SessionID)
	if id := tv.Shell.focusOnOpen; id != "" {
		// Deferred past the render that follows the mount, which draws
		// the session pane.
		tv.Shell.focusOnOpen = ""
		focus(ctx, id)
	}
}

// OnUpdate follows the shell's selection: another task or session is
// shown in place.
func (tv *taskView) OnUpdate(ctx app.Context) {
	if tv.view != nil && tv.view.taskID != tv.Task.ID {
		// Another task opens on its chat.
		tv.tab = ""
	}
	if tv.view != nil {
		tv.view.show(ctx, tv.Task, tv.SessionID)
	}
}

// OnDismount closes the shown session.
func (tv *taskView) OnDismount() {
	tv.mounted = false
	if tv.view == nil {
		return
	}
	tv.view.close()
	// Answers still on their way find no task here and change nothing.
	tv.view.taskID = ""
	tv.view.release()
	if tv.Shell.sessions == tv.view {
		tv.Shell.sessions = nil
	}
	tv.view = nil
}

// Render draws the task's header, then its chat pane and details: side by
// side on a wide window, as two tabs otherwise.
func (tv *taskView) Render() app.UI {
	t := tv.Task
	tab := tv.tab
	if tab == "" {
		tab = tabChat
	}
	return app.Article().
		ID("task-view").
		Class("task-view").
		DataSet("task-id", t.ID).
		DataSet("tab", tab).
		Aria("labelledby", idTaskTitle).
		Body(
			tv.renderHead(),
			app.Div().Class("task-tabs").Role("tablist").Aria("label", "Task").Body(
				tv.tabButton(idTabChat, tabChat, "Chat", tab),
				tv.tabButton(idTabDetails, tabDetails, "Details", tab),
			),
			app.Div().Class("task-body").Body(
				app.Section().ID("chat-pane").Class("chat-pane").Role("tabpanel").Aria("labelledby", idTabChat).Body(
					tv.renderChat(),
				),
				app.Aside().ID("task-details").Class("task-details").Role("tabpanel").Aria("labelledby", idTabDetails).Body(
					tv.renderDetails(),
				),
			),
		)
}

// renderHead draws the title and the task's state chip. While the agent
// waits on the person the chip is a button that jumps to the request.
func (tv *taskView) renderHead() app.UI {
	t := tv.Task
	row := state.RowOf(t)
	title := app.H1().ID(idTaskTitle).Class("detail-title").Text(titleOrPlaceholder(t.Title))
	if app.IsClient {
		// A tooltip for a title cut short. Only in the browser, which sets
		// attributes through the DOM: the server's render writes them with
		// Go quoting, so user text never goes into one there.
		title = title.Title(titleOrPlaceholder(t.Title))
	}
	inner := []app.UI{stateIconBeside(row.Indicator), app.Span().Text(row.Indicator.Label())}
	var chip app.UI = app.Span().ID(idStateChip).Class("state-chip", "state-chip-"+string(row.Indicator)).Body(inner...)
	if tv.view != nil && len(tv.view.openRequests()) > 0 {
		chip = app.Button().ID(idStateChip).Class("state-chip", "state-chip-"+string(row.Indicator), "state-chip-jump").Type("button").
			Aria("controls", idPendingCard).
			Title("Go to the request").
			OnClick(tv.onJumpToRequest).
			Body(inner...)
	}
	return app.Header().Class("detail-head").Body(title, chip)
}

// tabButton is one of the task's tabs.
func (tv *taskView) tabButton(id, tab, text, current string) app.UI {
	return app.Button().ID(id).Class("task-tab").Type("button").Role("tab").
		Aria("selected", tab == current).
		Aria("controls", map[string]string{tabChat: "chat-pane", tabDetails: "task-details"}[tab]).
		OnClick(func(ctx app.Context, _ app.Event) { tv.tab = tab }).
		Text(text)
}

// onJumpToRequest shows the chat and moves focus to the request the agent
// waits on.
func (tv *taskView) onJumpToRequest(ctx app.Context, _ app.Event) {
	tv.tab = tabChat
	tv.view.focusRequest()
}

// renderChat draws the task's active error, then the session pane, or on
// the server (which has no connection to list sessions with) what the
// summary says about it.
func (tv *taskView) renderChat() app.UI {
	sum := tv.Task.StatusSummary
	return app.Div().Class("chat-inner").Body(
		// A stable slot, so the banner coming and going never rebuilds
		// the session pane after it (go-app matches children by position).
		app.Div().Class("task-error-slot").Body(
			app.If(sum != nil && sum.ActiveError != nil, func() app.UI { return tv.renderErrorBanner(tv.Task.ID, *sum.ActiveError) }),
		),
		app.If(tv.view == nil, func() app.UI { return renderSession(state.RowOf(tv.Task)) }).
			Else(func() app.UI { return tv.view.renderSessionPane() }),
	)
}

// renderDetails draws what the task is: when it was
// created, its description, the git state of its repositories (once a
// session of it is open), where it works, its changes and its pull request.
func (tv *taskView) renderDetails() app.UI {
	t := tv.Task
	row := state.RowOf(t)
	sum := t.StatusSummary
	return app.Div().Class("details-inner").Body(
		app.P().Class("detail-created").Body(
			app.Text("Created "),
			app.Time().
				DateTime(t.CreatedAt.UTC().Format(time.RFC3339)).
				Title(t.CreatedAt.UTC().Format(time.RFC3339)).
				Text(t.CreatedAt.Local().Format("2 Jan 2006, 15:04")),
		),
		app.Section().Class("detail-section").Aria("labelledby", "detail-description").Body(
			app.H2().ID("detail-description").Text("Description"),
			app.If(t.Description != "", func() app.UI {
				return app.Div().Class("description").Body(markdown.Render(t.Description))
			}).Else(func() app.UI {
				return app.P().Class("muted").Text("No description.")
			}),
		),
		app.If(tv.view != nil && tv.view.taskID == t.ID && tv.view.detail != nil && len(tv.view.detail.Git()) > 0, func() app.UI {
			return tv.view.renderGitPanel()
		}),
		app.Section().Class("detail-section").Aria("labelledby", "detail-repositories").Body(
			app.H2().ID("detail-repositories").Text("Repositories"),
			renderRepositories(t.Repositories),
			app.If(row.HasGit, func() app.UI {
				return app.P().Class("detail-git").Body(
					app.Text("Changes: "),
					gitTotals(row.Additions, row.Deletions, row.ChangedFiles),
					app.If(row.NoBase, noBaseMark),
				)
			}),
			app.If(sum != nil && sum.PullRequest != nil, func() app.UI { return renderPullRequest(row, sum.PullRequest) }),
			tv.renderPRLink(t),
		),
	)
}
