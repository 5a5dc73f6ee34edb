package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// renderSessionFacts draws the open session's context bar and its cost in
// the session header, in one stable slot: both appear only once the agent
// reported usage, and go-app matches children by position.
func renderSessionFacts(sess shared.Session) app.UI {
	bar, hasBar := state.ContextBarOf(sess.Usage)
	cost := state.SessionCost(sess)
	return app.Div().Class("session-facts").Body(
		app.If(hasBar, func() app.UI {
			// A meter that says itself in words: the label is the
			// visible text too, so a phone (no tooltips) reads the same.
			m := app.Div().ID("context-bar").Class("context-bar").Role("meter").
				Aria("label", "Context window").Aria("valuemin", 0).Aria("valuemax", 100).
				Aria("valuetext", bar.Label)
			fill := 0
			if bar.Percent >= 0 {
				m, fill = m.Aria("valuenow", bar.Percent), bar.Percent
			}
			if fill >= 90 {
				m = m.Class("context-bar-full")
			}
			return m.Body(
				app.Span().Class("context-track").Aria("hidden", "true").Body(
					app.Span().Class("context-fill").Style("width", strconv.Itoa(fill)+"%"),
				),
				app.Span().Class("context-label").Text(bar.Label),
			)
		}),
		app.If(!cost.Empty(), func() app.UI {
			return namedSpan("Session " + state.CostLabel(cost)).ID("session-cost").Class("session-cost").Text(cost.String())
		}),
	)
}

// rowCost shows a task's cost on its row, named in full ("cost $0.42", or
// in mixed currencies) for assistive technology and in its tooltip.
func rowCost(c state.Costs) app.UI {
	cls := "row-cost"
	if c.Mixed() {
		cls = "row-cost row-cost-mixed"
	}
	return namedSpan("Task " + state.CostLabel(c)).Class(cls).Text(c.String())
}

// workspaceCost shows the total cost of the tasks the switcher lists.
func workspaceCost(c state.Costs) app.UI {
	return namedSpan("Total " + state.CostLabel(c) + " for the tasks listed").ID("workspace-cost").Class("workspace-cost").Text(c.String())
}
