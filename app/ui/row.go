package ui

import (
	"fmt"
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// taskRow is one row of the task switcher, the same component in the
// desktop sidebar and in the phone sheet. Its exported fields are its whole
// input: go-app re-renders it only when they change.
type taskRow struct {
	app.Compo

	Row      state.Row
	Selected bool
}

// Render draws the row: state icon, title, git, pull request and queue
// details, and the error dot.
func (r *taskRow) Render() app.UI {
	row := r.Row
	button := app.Button().
		Type("button").
		Class("task-row").
		DataSet("task-id", row.TaskID).
		OnClick(r.onClick)
	if r.Selected {
		button = button.Aria("current", "true")
	}
	return app.Li().Class("task-item").Body(
		button.Body(
			stateIcon(row.Indicator),
			app.Span().Class("row-body").Body(
				app.Span().Class("row-title").Text(titleOrPlaceholder(row.Title)),
				app.If(row.HasGit || row.HasPR || row.Queued > 0, func() app.UI {
					return app.Span().Class("row-meta").Body(
						app.If(row.HasGit, func() app.UI {
							return gitTotals(row.Additions, row.Deletions, row.ChangedFiles)
						}),
						app.If(row.HasPR, func() app.UI { return prBadge(row) }),
						app.If(row.Queued > 0, func() app.UI {
							return app.Span().
								Class("queued").
								Title(plural(row.Queued, "queued prompt", "queued prompts")).
								Text(strconv.Itoa(row.Queued) + " queued")
						}),
					)
				}),
			),
			app.If(row.HasError, func() app.UI { return errorDot(row.ErrorPreview) }),
		),
	)
}

// onClick asks the shell to show this row's task.
func (r *taskRow) onClick(ctx app.Context, _ app.Event) {
	ctx.NewActionWithValue(actionSelectTask, r.Row.TaskID)
}

// stateIcon draws an indicator as a small labelled shape; its colour and
// shape come from app.css, its name from the indicator's label.
func stateIcon(i state.Indicator) app.UI {
	return app.Span().
		Class("state-icon", "state-"+string(i)).
		Role("img").
		Aria("label", i.Label()).
		Title(i.Label())
}

// errorDot marks a task with an active error, independently of its state.
func errorDot(preview string) app.UI {
	label := "Agent error"
	if preview != "" {
		label += ": " + preview
	}
	return app.Span().Class("error-dot").Role("img").Aria("label", label).Title(label)
}

// gitTotals shows "+adds −dels · N files".
func gitTotals(adds, dels, files int) app.UI {
	return app.Span().Class("git").Body(
		app.Span().Class("adds").Text("+"+strconv.Itoa(adds)),
		app.Text(" "),
		app.Span().Class("dels").Text("−"+strconv.Itoa(dels)),
		app.Text(" · "+plural(files, "file", "files")),
	)
}

// prBadge shows the task's pull request number coloured by its aggregate
// state.
func prBadge(row state.Row) app.UI {
	text := "PR"
	if row.PRNumber > 0 {
		text = "#" + strconv.Itoa(row.PRNumber)
	}
	label := fmt.Sprintf("Pull request %s, %s", text, prStateLabel(row.PRState))
	if row.PRCount > 1 {
		label += fmt.Sprintf(" (%d pull requests)", row.PRCount)
	}
	return app.Span().Class("pr", "pr-"+string(row.PRState)).Aria("label", label).Title(label).Text(text)
}

// prStateLabel turns an aggregate state into words.
func prStateLabel(s shared.PullRequestState) string {
	switch s {
	case shared.PRAwaitingReview:
		return "awaiting review"
	case "":
		return "state unknown"
	default:
		return string(s)
	}
}

// titleOrPlaceholder keeps an untitled task's row clickable and readable.
func titleOrPlaceholder(title string) string {
	if title == "" {
		return "Untitled task"
	}
	return title
}

// plural formats n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
