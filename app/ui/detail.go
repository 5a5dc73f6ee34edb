package ui

import (
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// renderDetail draws the selected task: what it is, its active error, its
// session pane (nil in the server's render, which then says what the
// summary knows), where it works, and what its summary says.
func (s *shell) renderDetail(t shared.Task, sessions app.UI) app.UI {
	row := state.RowOf(t)
	sum := t.StatusSummary
	return app.Article().Class("task-detail").Aria("labelledby", "detail-title").Body(
		app.Header().Class("detail-head").Body(
			app.H1().ID("detail-title").Class("detail-title").Text(titleOrPlaceholder(t.Title)),
			app.Span().Class("state-chip").Body(
				stateIconBeside(row.Indicator),
				app.Span().Text(row.Indicator.Label()),
			),
		),
		app.P().Class("detail-created").Body(
			app.Text("Created "),
			app.Time().
				DateTime(t.CreatedAt.UTC().Format(time.RFC3339)).
				Title(t.CreatedAt.UTC().Format(time.RFC3339)).
				Text(t.CreatedAt.Local().Format("2 Jan 2006, 15:04")),
		),
		app.If(sum != nil && sum.ActiveError != nil, func() app.UI { return s.renderErrorBanner(t.ID, *sum.ActiveError) }),
		app.Section().Class("detail-section", "detail-sessions").Aria("labelledby", "detail-session").Body(
			app.H2().ID("detail-session").Class("visually-hidden").Text("Session"),
			app.If(sessions != nil, func() app.UI { return sessions }).
				Else(func() app.UI { return renderSession(row) }),
		),
		app.Section().Class("detail-section").Aria("labelledby", "detail-description").Body(
			app.H2().ID("detail-description").Text("Description"),
			app.If(t.Description != "", func() app.UI {
				return app.P().Class("description").Text(t.Description)
			}).Else(func() app.UI {
				return app.P().Class("muted").Text("No description.")
			}),
		),
		app.Section().Class("detail-section").Aria("labelledby", "detail-repositories").Body(
			app.H2().ID("detail-repositories").Text("Repositories"),
			renderRepositories(t.Repositories),
			app.If(row.HasGit, func() app.UI {
				return app.P().Class("detail-git").Body(
					app.Text("Changes: "),
					gitTotals(row.Additions, row.Deletions, row.ChangedFiles),
				)
			}),
			app.If(sum != nil && sum.PullRequest != nil, func() app.UI { return renderPullRequest(row, sum.PullRequest) }),
		),
	)
}

// renderRepositories lists the task's repositories with their branches.
func renderRepositories(repos []shared.TaskRepository) app.UI {
	if len(repos) == 0 {
		return app.P().Class("muted").Text("No repositories.")
	}
	return app.Ul().Class("repo-list").Body(
		app.Range(repos).Slice(func(i int) app.UI {
			r := repos[i]
			return app.Li().Class("repo").Body(
				app.Code().Class("repo-path").Text(r.Path),
				app.If(r.BaseBranch != "", func() app.UI {
					return app.Span().Class("repo-branch").Text("base " + r.BaseBranch)
				}),
				app.If(r.Branch != "", func() app.UI {
					return app.Span().Class("repo-branch").Text("branch " + r.Branch)
				}),
			)
		}),
	)
}

// renderPullRequest links the task's representative pull request.
func renderPullRequest(row state.Row, pr *shared.PullRequestSummary) app.UI {
	badge := prBadge(row)
	return app.P().Class("detail-pr").Body(
		app.Text("Pull request: "),
		app.If(pr.URL != "", func() app.UI {
			return app.A().Href(pr.URL).Target("_blank").Rel("noopener noreferrer").Body(badge)
		}).Else(func() app.UI { return badge }),
	)
}

// renderSession says honestly what is known about the task's session.
func renderSession(row state.Row) app.UI {
	if row.Indicator == state.IndicatorNoSession {
		return app.P().Class("muted").Text("No session yet.")
	}
	return app.Div().Body(
		app.P().Body(
			app.Text("Primary session: "),
			app.Strong().Text(row.Indicator.Label()),
			app.If(row.Queued > 0, func() app.UI {
				return app.Text(" · " + plural(row.Queued, "queued prompt", "queued prompts"))
			}),
		),
	)
}
