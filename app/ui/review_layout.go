package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// renderHead draws the way back to the task, the title, the repository
// picker, the scope switch, the totals, the refresh and the send button.
func (rv *reviewView) renderHead() app.UI {
	back := state.Route{TaskID: rv.Task.ID, SessionID: rv.Route.SessionID}
	return app.Header().Class("review-head").Body(
		app.Div().Class("review-title-line").Body(
			app.A().ID("review-exit").Class("review-exit").Href(back.Path()).Aria("label", "Back to the task").Text("←"),
			app.H1().ID(idReviewTitle).Class("review-title").TabIndex(-1).Body(
				app.Span().Class("review-title-what").Text("Review"),
				app.Span().Class("review-title-task").Text(titleOrPlaceholder(rv.Task.Title)),
			),
			busyButton(idReviewRefresh, "Refresh", "Refreshing…", rv.infoReq.busy || rv.files != nil && rv.files.Refreshing()).
				Class("review-refresh").
				Title("Read the worktree again").
				OnClick(func(app.Context, app.Event) { rv.refresh() }),
		),
		app.Div().Class("review-controls").Body(
			rv.renderRepoPicker(),
			rv.renderScope(),
			rv.renderTotals(),
			rv.renderSendButton(),
		),
	)
}

// renderRepoPicker lets the person choose among a task's repositories;
// with one there is nothing to choose.
func (rv *reviewView) renderRepoPicker() app.UI {
	repos := rv.info.Repositories
	if len(repos) < 2 {
		return nil
	}
	chosen, _ := rv.repository()
	return app.Span().Class("review-repo-pick").Body(
		app.Label().For(idReviewRepo).Class("visually-hidden").Text("Repository"),
		app.Select().ID(idReviewRepo).OnChange(rv.onRepo).Body(
			app.Range(repos).Slice(func(i int) app.UI {
				r := repos[i]
				o := app.Option().Value(r.RepositoryID).Text(r.Path)
				if r.RepositoryID == chosen.RepositoryID {
					o = o.Selected(true)
				}
				return o
			}),
		),
	)
}

func (rv *reviewView) onRepo(ctx app.Context, _ app.Event) {
	r := rv.Route
	r.RepositoryID, r.File = ctx.JSSrc().Get("value").String(), ""
	rv.choose(r)
}

// renderScope draws the switch between everything the task changed and
// one turn, with the turn picked among the recorded ones.
func (rv *reviewView) renderScope() app.UI {
	turn := rv.Route.Scope == shared.ReviewScopeTurn
	turns := rv.info.Turns
	last := app.Button().ID("review-scope-turn").Class("review-scope").Type("button").Aria("pressed", turn).
		OnClick(rv.onScope(shared.ReviewScopeTurn)).Text("Last turn")
	if rv.infoLoaded && len(turns) == 0 {
		// Only ever set to true (see renderNewTask).
		last = last.Disabled(true).Title("No turn of this task was recorded yet.")
	}
	return app.Span().Class("review-scopes").Body(
		app.Span().Class("review-scope-switch").Role("group").Aria("label", "Changes shown").Body(
			app.Button().ID("review-scope-task").Class("review-scope").Type("button").Aria("pressed", !turn).
				OnClick(rv.onScope(shared.ReviewScopeTask)).Text("All changes"),
			last,
		),
		app.If(turn && len(turns) > 1, func() app.UI {
			return app.Span().Class("review-turn-pick").Body(
				app.Label().For(idReviewTurn).Class("visually-hidden").Text("Turn"),
				app.Select().ID(idReviewTurn).OnChange(rv.onTurn).Body(
					app.Range(turns).Slice(func(i int) app.UI {
						tr := turns[i]
						o := app.Option().Value(tr.TurnID).Text(turnLabel(i, tr))
						if tr.TurnID == rv.Route.TurnID || rv.Route.TurnID == "" && i == 0 {
							o = o.Selected(true)
						}
						return o
					}),
				),
			)
		}),
	)
}

// turnLabel names a turn in the picker: newest first, with when it
// started and the start of its prompt.
func turnLabel(i int, tr shared.ReviewTurn) string {
	label := "Turn " + tr.StartedAt.Local().Format("15:04")
	if i == 0 {
		label = "Last turn, " + tr.StartedAt.Local().Format("15:04")
	}
	if tr.Prompt != "" {
		label += ": " + tr.Prompt
	}
	return label
}

func (rv *reviewView) onScope(scope shared.ReviewScope) app.EventHandler {
	return func(app.Context, app.Event) {
		r := rv.Route
		if scope == shared.ReviewScopeTask {
			scope = ""
		}
		if r.Scope == scope && r.TurnID == "" {
			return
		}
		r.Scope, r.TurnID, r.File = scope, "", ""
		rv.choose(r)
	}
}

func (rv *reviewView) onTurn(ctx app.Context, _ app.Event) {
	r := rv.Route
	r.TurnID, r.File = ctx.JSSrc().Get("value").String(), ""
	if len(rv.info.Turns) > 0 && r.TurnID == rv.info.Turns[0].TurnID {
		// The newest turn is "Last turn": its address names none.
		r.TurnID = ""
	}
	rv.choose(r)
}

// renderTotals says what the comparison changed in all: lines and files.
func (rv *reviewView) renderTotals() app.UI {
	if rv.files == nil || !rv.files.Loaded() {
		return app.Span().ID(idReviewTotals).Class("review-totals")
	}
	l := rv.files.Listing()
	return app.Span().ID(idReviewTotals).Class("review-totals").Body(gitTotals(l.Additions, l.Deletions, l.Total))
}

// renderBanners says what could not be read, each with a retry.
func (rv *reviewView) renderBanners() app.UI {
	repo, hasRepo := rv.repository()
	switch {
	case rv.infoReq.err != "":
		return reviewError("review-load-error", "Could not load the review: "+rv.infoReq.err, "review-retry", func(app.Context, app.Event) { rv.load(false) })
	case !rv.infoLoaded:
		return app.P().Class("review-loading", "muted").Role("status").Text("Loading the changes…")
	case !hasRepo:
		return app.P().ID("review-no-repo").Class("review-empty").Text("This task has no repository to review.")
	case repo.Error != "":
		return reviewError("review-repo-error", "Could not read "+repo.Path+": "+repo.Error, "review-retry", func(app.Context, app.Event) { rv.refresh() })
	case rv.files != nil && rv.files.Err() != "":
		return reviewError("review-files-error", "Could not list the changed files: "+rv.files.Err(), "review-retry",
			func(app.Context, app.Event) { rv.loadFiles() })
	}
	return nil
}

// reviewError is a banner that says what failed, in the server's words,
// with a retry.
func reviewError(id, text, retryID string, retry app.EventHandler) app.UI {
	return app.Div().ID(id).Class("banner", "banner-error", "review-error").Role("alert").Body(
		app.Span().Class("review-error-text").Text(text),
		app.Button().ID(retryID).Class("text-button").Type("button").OnClick(retry).Text("Retry"),
	)
}

// renderSide draws the side column: its tabs (files, comments, finishing)
// and the panel chosen.
func (rv *reviewView) renderSide() app.UI {
	panel := rv.panel
	if panel == "" {
		panel = panelFiles
	}
	files := "Files"
	if rv.files != nil && rv.files.Loaded() {
		files += " " + strconv.Itoa(rv.files.Listing().Total)
	}
	comments := "Comments" + commentCount(rv.comments)
	return app.Div().Class("review-side-inner").Body(
		app.Div().Class("review-tabs").Role("tablist").Aria("label", "Review").Body(
			rv.panelTab(panelFiles, files, panel),
			rv.panelTab(panelComments, comments, panel),
			rv.panelTab(panelFinish, "Finish", panel),
		),
		app.Div().ID("review-panel-"+panel).Class("review-panel").Role("tabpanel").Aria("labelledby", "review-tab-"+panel).Body(
			app.If(panel == panelFiles, rv.renderFiles).
				ElseIf(panel == panelComments, rv.renderComments).
				Else(rv.renderFinish),
		),
	)
}

// panelTab is one of the side column's tabs.
func (rv *reviewView) panelTab(panel, text, current string) app.UI {
	return app.Button().ID("review-tab-"+panel).Class("task-tab", "review-tab").Type("button").Role("tab").
		Aria("selected", panel == current).
		Aria("controls", "review-panel-"+panel).
		OnClick(func(app.Context, app.Event) { rv.panel = panel }).
		Text(text)
}
