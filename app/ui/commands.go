package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
)

// Element ids of the slash command completion.
const (
	idCommandList = "command-list"
	idCommandHint = "command-hint"
)

// commandOptionID is the element id of the completion's option i.
func commandOptionID(i int) string { return "command-option-" + strconv.Itoa(i) }

// renderCompletion draws the slash command list above the composer while
// it is open, in one stable slot. The list is a listbox the prompt box
// controls (aria-activedescendant names the highlighted option): focus
// stays in the box, ↑/↓ move, Enter or Tab pick, Escape closes; a tap or
// click picks too. Names, hints and descriptions are agent text, only
// ever text nodes.
func (v *sessionView) renderCompletion() app.UI {
	c := &v.completion
	matches := c.Matches()
	return app.Div().Class("completion-slot").Body(
		app.If(c.Open(), func() app.UI {
			return app.Ul().ID(idCommandList).Class("command-list").Role("listbox").Aria("label", "Slash commands").Body(
				app.Range(matches).Slice(func(i int) app.UI {
					cmd := matches[i]
					li := app.Li().ID(commandOptionID(i)).Class("command-option").Role("option").
						DataSet("command", cmd.Name).Aria("selected", i == c.Active()).
						OnClick(v.onPickCommand(i))
					return li.Body(
						app.Span().Class("command-name").Text("/"+cmd.Name),
						app.If(cmd.Hint != "", func() app.UI { return app.Span().Class("command-args").Text(cmd.Hint) }),
						app.If(cmd.Description != "", func() app.UI {
							return app.Span().Class("command-desc").Text(cmd.Description)
						}),
					)
				}),
			)
		}),
	)
}

// renderCommandHint shows, once a command's name is complete, what input
// it takes ("/debug [issue description]"), in one stable slot.
func (v *sessionView) renderCommandHint() app.UI {
	var name, hint string
	if v.detail != nil && !v.completion.Open() {
		name, hint = state.CommandHint(v.input, v.detail.Commands())
	}
	return app.Div().ID(idCommandHint).Class("command-hint").Aria("live", "polite").Body(
		app.If(hint != "", func() app.UI {
			return app.Span().Body(
				app.Span().Class("command-name").Text("/"+name),
				app.Text(" "),
				app.Span().Class("command-args").Text(hint),
			)
		}),
	)
}

// comboboxOf gives the prompt box its combobox roles for the completion.
func (v *sessionView) comboboxOf(ta app.HTMLTextarea) app.HTMLTextarea {
	c := &v.completion
	ta = ta.Aria("autocomplete", "list").Aria("expanded", c.Open()).Aria("describedby", idCommandHint)
	if c.Open() {
		ta = ta.Aria("controls", idCommandList).Aria("activedescendant", commandOptionID(c.Active()))
	}
	return ta
}

// updateCompletion refilters the list from the prompt box's text and caret.
func (v *sessionView) updateCompletion(box app.Value) {
	if v.detail == nil {
		return
	}
	caret := state.ByteOffset(v.input, box.Get("selectionStart").Int())
	v.completion.Update(v.input, caret, v.detail.Commands())
}

// onComposerKey gives the open completion the keys it takes: ↓ and ↑
// move, Escape closes, Enter and Tab pick. The browser was seen to run it
// inside the keydown event, before listenForEnter's listener on the
// document, so it keeps the key from the box itself and tells that
// listener (keyTaken), which would otherwise take a picking Enter for a
// send; should it run later, the listener has kept the key already.
func (v *sessionView) onComposerKey(_ app.Context, e app.Event) {
	key := e.Get("key").String()
	if !v.completion.Open() || !completionTakes(key) || e.Get("isComposing").Bool() {
		return
	}
	e.PreventDefault()
	v.keyTaken = true
	switch key {
	case "ArrowDown":
		v.completion.Move(1)
	case "ArrowUp":
		v.completion.Move(-1)
	case "Escape":
		v.completion.Dismiss()
	case "Enter", "Tab":
		v.pickCommand(v.completion.Active())
	}
	if el := app.Window().GetElementByID(commandOptionID(v.completion.Active())); el.Truthy() {
		el.Call("scrollIntoView", map[string]any{"block": "nearest"})
	}
}

// completionTakes reports whether key goes to the open completion.
func completionTakes(key string) bool {
	switch key {
	case "ArrowDown", "ArrowUp", "Escape", "Enter", "Tab":
		return true
	}
	return false
}

// onPickCommand is a tap or click on option i.
func (v *sessionView) onPickCommand(i int) app.EventHandler {
	return func(app.Context, app.Event) { v.pickCommand(i) }
}

// pickCommand puts "/name " in the prompt box and keeps the draft; setting
// the box's value leaves the caret at its end.
func (v *sessionView) pickCommand(i int) {
	text, ok := v.completion.Pick(i)
	if !ok {
		return
	}
	v.input = text
	v.drafts.Set(v.taskID, text)
	if el := app.Window().GetElementByID(idComposerInput); el.Truthy() {
		el.Set("value", text)
	}
}
