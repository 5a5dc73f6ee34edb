package ui

import (
	"fmt"
	"strconv"
	"time"

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
	// Now is today's local date (time.DateOnly): activity of today shows
	// its time, older activity its date.
	Now string
	// Edit is the row's open actions (menu, rename, archive), if any.
	Edit rowEdit
	// Shell is the page, for the row's actions; it never changes.
	Shell *shell
}

// Render draws the row: state icon, title, git, pull request and queue
// details, and the error dot.
func (r *taskRow) Render() app.UI {
	row := r.Row
	// A link, so the server-rendered list works before the app runs (the
	// server renders the task's page) and opens in a new tab on request;
	// in the running app go-app turns the click into in-page navigation.
	button := app.A().
		Href(state.Route{TaskID: row.TaskID}.Path()).
		Class("task-row").
		DataSet("task-id", row.TaskID)
	if r.Selected {
		button = button.Aria("current", "page")
	}
	title := app.Span().Class("row-title").Text(titleOrPlaceholder(row.Title))
	if app.IsClient {
		// The whole title as a tooltip for one cut short; see renderHead.
		title = title.Title(titleOrPlaceholder(row.Title))
	}
	return app.Li().Class("task-item").Body(
		button.Body(
			stateIcon(row.Indicator),
			app.Span().Class("row-body").Body(
				app.Span().Class("row-line").Body(
					title,
					activityTime(row.LastActivity, r.Now),
				),
				app.If(row.Preview != "", func() app.UI {
					// Agent text: only ever a text node.
					return app.Span().Class("row-preview").Text(row.Preview)
				}),
				app.If(row.HasGit || row.HasPR || row.Queued > 0 || !row.Cost.Empty(), func() app.UI {
					return app.Span().Class("row-meta").Body(
						app.If(row.HasGit, func() app.UI {
							return gitTotals(row.Additions, row.Deletions, row.ChangedFiles)
						}),
						app.If(row.NoBase, noBaseMark),
						app.If(row.HasPR, func() app.UI { return prBadge(row) }),
						app.If(row.Queued > 0, func() app.UI { return queuedCount(row.Queued) }),
						app.If(!row.Cost.Empty(), func() app.UI { return rowCost(row.Cost) }),
					)
				}),
			),
			app.If(row.HasError, errorDot),
		),
		// A stable slot: the link comes and goes with the totals and the
		// row's open actions, and the actions after it keep their place.
		app.Span().Class("row-review-slot").Body(
			app.If(row.HasGit && r.Edit.mode == "", func() app.UI { return reviewLink(row) }),
		),
		r.renderRowActions(),
	)
}

// reviewLink opens the task's review from its git totals. A link cannot
// sit inside the row's own link, so it lies over the totals the row
// shows, beside it in the markup (app.css, "Review"), with the same text
// so it covers them exactly.
func reviewLink(row state.Row) app.UI {
	return app.A().Class("row-review").
		Href(state.Route{TaskID: row.TaskID, Review: true}.Path()).
		DataSet("task-id", row.TaskID).
		Aria("label", "Review the changes: "+gitLabel(row.Additions, row.Deletions, row.ChangedFiles)).
		Title("Review the changes").
		Body(app.Span().Aria("hidden", "true").Text(gitText(row.Additions, row.Deletions, row.ChangedFiles)))
}

// gitText is the text of gitTotals.
func gitText(adds, dels, files int) string {
	return "+" + strconv.Itoa(adds) + " −" + strconv.Itoa(dels) + " · " + plural(files, "file", "files")
}

// activityTime shows when a task last did something: the time for
// today's activity, the date for older.
func activityTime(ms int64, today string) app.UI {
	if ms <= 0 {
		return nil
	}
	at := time.UnixMilli(ms)
	text := at.Format("2 Jan")
	if at.Format(time.DateOnly) == today {
		text = at.Format("15:04")
	}
	stamp := at.UTC().Format(time.RFC3339)
	return app.Time().Class("row-time").DateTime(stamp).Title("Last activity " + stamp).Text(text)
}

// stateIcon draws an indicator as a small labelled shape; its colour and
// shape come from app.css, its name from the indicator's label.
func stateIcon(i state.Indicator) app.UI {
	return namedSpan(i.Label()).Class("state-icon", "state-"+string(i))
}

// stateIconBeside draws an indicator next to its label in words: the
// words name it, so the icon keeps only its tooltip.
func stateIconBeside(i state.Indicator) app.UI {
	return app.Span().
		Class("state-icon", "state-"+string(i)).
		Aria("hidden", "true").
		Title(i.Label())
}

// errorDot marks a task with an active error, independently of its state.
// Its name is fixed: the preview is agent text, and go-app writes
// attributes with Go quoting, so the preview is shown only as text, in the
// task's detail.
func errorDot() app.UI {
	const label = "Agent error"
	return namedSpan(label).Class("error-dot")
}

// queuedCount shows "N queued", named in full for assistive technology and
// in its tooltip.
func queuedCount(n int) app.UI {
	return namedSpan(queuedPrompts(n)).Class("queued").Text(strconv.Itoa(n) + " queued")
}

// gitTotals shows "+adds −dels · N files", named in words ("10 additions,
// 2 deletions in 3 files") for assistive technology and in its tooltip.
func gitTotals(adds, dels, files int) app.HTMLSpan {
	return namedSpan(gitLabel(adds, dels, files)).Class("git").Body(
		app.Span().Class("adds").Text("+"+strconv.Itoa(adds)),
		app.Text(" "),
		app.Span().Class("dels").Text("−"+strconv.Itoa(dels)),
		app.Text(" · "+plural(files, "file", "files")),
	)
}

// noBaseMark is the small sign that a task's totals could not be compared
// with some repository's base branch.
func noBaseMark() app.UI {
	const label = "base branch unavailable"
	return namedSpan(label).Class("git-no-base-mark").Text("≠")
}

// gitLabel says a task's git totals in words.
func gitLabel(adds, dels, files int) string {
	return plural(adds, "addition", "additions") + ", " + plural(dels, "deletion", "deletions") +
		" in " + plural(files, "file", "files")
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
	return namedSpan(label).Class("pr", "pr-"+string(row.PRState)).Text(text)
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

// namedSpan is a span that assistive technology reads as one image named
// label, with the same words as its tooltip: the short marks of a row
// (state, error, git totals, pull request, queue) say themselves in full.
func namedSpan(label string) app.HTMLSpan {
	return app.Span().Role("img").Aria("label", label).Title(label)
}

// queuedPrompts counts queued prompts in words.
func queuedPrompts(n int) string {
	return plural(n, "queued prompt", "queued prompts")
}

// plural formats n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
