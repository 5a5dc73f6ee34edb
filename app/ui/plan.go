package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// idPlanCard is the docked checklist of the session's current plan.
const idPlanCard = "plan-card"

// renderPlan docks the session's current plan above the composer as a
// checklist: a head with its count ("Plan 3/7") that folds it, and its
// steps with the one in progress emphasised. It renders in place from the
// newest plan message, so a new plan from the agent updates it rather
// than adding another. It is absent when state.Plan.Visible says so.
func (v *sessionView) renderPlan(msgs []shared.Message, sess shared.Session) app.UI {
	p := state.CurrentPlan(msgs)
	if !p.Visible(sess.State) {
		return nil
	}
	folded := v.planFold.Folded(v.openID)
	current := ""
	if p.Current >= 0 {
		current = p.Entries[p.Current].Content
	}
	return app.Section().ID(idPlanCard).Class("plan-card").
		DataSet("message-id", p.MessageID).
		DataSet("done", p.Done).
		DataSet("total", len(p.Entries)).
		DataSet("folded", folded).
		Aria("label", "Plan").
		Body(
			app.Button().ID("plan-toggle").Class("plan-toggle").Type("button").
				Aria("expanded", !folded).Aria("controls", "plan-steps").
				OnClick(v.onPlanFold(!folded), app.EventScope(!folded)).
				Body(
					app.Span().Class("plan-caret").Aria("hidden", true).Text(caret(folded)),
					app.Span().Class("plan-count").Text(p.Label()),
					// Folded, the head still names the step under way.
					app.Span().Class("plan-now").Text(current),
				),
			app.If(!folded, func() app.UI {
				return app.Ol().ID("plan-steps").Class("plan-steps").Body(
					app.Range(p.Entries).Slice(func(i int) app.UI {
						e := p.Entries[i]
						return app.Li().Class("plan-step", "plan-"+e.Status).
							DataSet("status", e.Status).
							DataSet("priority", e.Priority).
							Aria("current", strconv.FormatBool(i == p.Current)).
							Body(
								app.Span().Class("plan-mark").Aria("label", stepWords(e.Status)).Text(stepMark(e.Status)),
								app.Span().Class("plan-step-text").Text(e.Content),
							)
					}),
				)
			}),
		)
}

func caret(folded bool) string {
	if folded {
		return "▸"
	}
	return "▾"
}

// stepMark is a plan step's checkbox.
func stepMark(status string) string {
	switch status {
	case state.PlanCompleted:
		return "☑"
	case state.PlanInProgress:
		return "◐"
	}
	return "☐"
}

// stepWords names a step's status for screen readers.
func stepWords(status string) string {
	switch status {
	case state.PlanCompleted:
		return "done"
	case state.PlanInProgress:
		return "in progress"
	}
	return "to do"
}

func (v *sessionView) onPlanFold(folded bool) app.EventHandler {
	return func(app.Context, app.Event) {
		v.planFold.Set(v.openID, folded)
	}
}
