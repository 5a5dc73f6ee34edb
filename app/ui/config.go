package ui

import (
	"context"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// configEdit is the open session's configuration changes on their way to
// the agent, by option id, and the last one the agent refused.
type configEdit struct {
	setting map[string]string
	err     string
}

// configControlID is the element id of an option's control.
func configControlID(optionID string) string { return "config-" + optionID }

// renderConfig draws the session's configuration as the agent reports it:
// a select per choice and a switch per yes/no option, model and mode
// first. It renders nothing while the agent has reported none.
func (v *sessionView) renderConfig(sess shared.Session) app.UI {
	controls := state.ConfigControls(sess.Config, v.config.setting)
	return app.Div().ID("session-config").Class("session-config").Aria("label", "Agent settings").Body(
		app.Range(controls).Slice(func(i int) app.UI {
			return v.renderConfigControl(controls[i])
		}),
		app.If(v.config.err != "", func() app.UI {
			return app.P().ID("config-error").Class("config-error").Role("alert").Text(v.config.err)
		}),
	)
}

func (v *sessionView) renderConfigControl(c state.ConfigControl) app.UI {
	o := c.Option
	id := configControlID(o.ID)
	label := app.Span().Class("config-name").Text(o.Name)
	if o.Type == shared.ConfigBoolean {
		return app.Label().Class("config-control", "config-boolean").DataSet("option", o.ID).Title(o.Description).Body(
			app.Input().ID(id).Type("checkbox").Role("switch").Checked(c.Value == "true").Disabled(c.Busy).
				OnChange(v.onConfigToggle(o.ID), app.EventScope(o.ID)),
			label,
		)
	}
	choices := state.Choices(o)
	return app.Label().Class("config-control").DataSet("option", o.ID).DataSet("category", o.Category).Title(o.Description).Body(
		label,
		app.Select().ID(id).Class("config-select").Disabled(c.Busy).Aria("busy", c.Busy).
			OnChange(v.onConfigSelect(o.ID), app.EventScope(o.ID)).
			Body(app.Range(choices).Slice(func(i int) app.UI {
				ch := choices[i]
				return app.Option().Value(ch.Value).Selected(ch.Value == c.Value).Title(ch.Description).Text(ch.Name)
			})),
	)
}

// onConfigSelect sends the value chosen in an option's select.
func (v *sessionView) onConfigSelect(optionID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		v.setConfig(optionID, ctx.JSSrc().Get("value").String())
	}
}

// onConfigToggle sends a switch's new state.
func (v *sessionView) onConfigToggle(optionID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		value := "false"
		if ctx.JSSrc().Get("checked").Bool() {
			value = "true"
		}
		v.setConfig(optionID, value)
	}
}

// setConfig asks the agent, through session.config.set, to change one
// option. The control shows the choice, disabled, until the answer: the
// configuration it carries (the same the session stream brings) is then
// in force, or the agent's refusal is shown and the control goes back to
// the value in force.
func (v *sessionView) setConfig(optionID, value string) {
	d := v.detail
	if d == nil {
		return
	}
	ctx := v.ui()
	if v.config.setting == nil {
		v.config.setting = make(map[string]string)
	}
	v.config.setting[optionID] = value
	v.config.err = ""
	req := shared.SessionConfigSetRequest{SessionID: d.ID(), OptionID: optionID, Value: value}
	ctx.Async(func() {
		var got shared.SessionConfigEvent
		err := v.client().Request(context.Background(), shared.ActionSessionConfigSet, req, &got)
		dispatch(ctx, func(app.Context) {
			if v.detail != d {
				return // another session opened meanwhile
			}
			delete(v.config.setting, optionID)
			if err == nil {
				d.SetConfig(got.Config)
			} else {
				name := optionID
				if o, ok := d.Session().Config.Option(optionID); ok {
					name = o.Name
				}
				v.config.err = "Could not change " + name + ": " + describeAction(err)
			}
			v.syncConfigControls()
		})
	})
}

// syncConfigControls sets every control not waiting for an answer to the
// value in force. An element keeps what the person picked until told
// otherwise (a select's options are no longer selected by their attribute
// once the person has used it), so a refused change, an agent that chose
// another value or a change from elsewhere would leave it showing a value
// not in force.
func (v *sessionView) syncConfigControls() {
	if v.detail == nil {
		return
	}
	c := v.detail.Session().Config
	if c == nil {
		return
	}
	for _, o := range c.Options {
		if _, busy := v.config.setting[o.ID]; busy {
			continue
		}
		el := app.Window().GetElementByID(configControlID(o.ID))
		if !el.Truthy() {
			continue
		}
		if o.Type == shared.ConfigBoolean {
			el.Set("checked", o.CurrentValue == "true")
			continue
		}
		el.Set("value", o.CurrentValue)
	}
}
