package ui

import (
	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
)

// keyListener holds the page's keyboard shortcuts:
//
//   - Ctrl+K (Cmd+K on a Mac) focuses the task search, the switcher; on a
//     phone it opens the sheet first.
//   - Alt+↓ and Alt+↑ show the next and the previous task in the
//     switcher's order.
//   - Alt+Shift+↓ shows the next task that needs you.
//   - Alt+Shift+I opens the inbox of everything that needs you. It is
//     read by its physical key (code), since on a Mac Alt changes the
//     character the key types.
//
// The Alt keys are left alone inside a text field or a list box, where
// they already mean something (moving by paragraph, opening the list,
// typing a character).
type keyListener struct {
	fn app.Func
}

// listenForKeys registers the shortcuts; release removes them.
func listenForKeys(s *shell) *keyListener {
	k := &keyListener{}
	k.fn = app.FuncOf(func(_ app.Value, args []app.Value) any {
		if len(args) == 0 {
			return nil
		}
		e := args[0]
		if e.Get("repeat").Bool() {
			return nil
		}
		key := e.Get("key").String()
		mod := e.Get("ctrlKey").Bool() || e.Get("metaKey").Bool()
		alt := e.Get("altKey").Bool()
		switch {
		case mod && !alt && (key == "k" || key == "K"):
			e.Call("preventDefault")
			dispatch(s.link.ui, s.openSwitcher)
		case alt && !mod && (key == "ArrowDown" || key == "ArrowUp") && !editing(e.Get("target")):
			e.Call("preventDefault")
			step, needsYou := 1, e.Get("shiftKey").Bool()
			if key == "ArrowUp" {
				step = -1
			}
			dispatch(s.link.ui, func(ctx app.Context) { s.moveSelection(ctx, step, needsYou) })
		case alt && !mod && e.Get("shiftKey").Bool() && e.Get("code").String() == "KeyI" && !editing(e.Get("target")):
			e.Call("preventDefault")
			dispatch(s.link.ui, s.openInbox)
		}
		return nil
	})
	app.Window().Call("addEventListener", "keydown", k.fn)
	return k
}

// release removes the listener and frees its function.
func (k *keyListener) release() {
	app.Window().Call("removeEventListener", "keydown", k.fn)
	k.fn.Release()
}

// openSwitcher focuses the task search (opening the phone's sheet first).
func (s *shell) openSwitcher(ctx app.Context) {
	id := idTaskSearch
	if s.phone {
		s.sheetOpen = true
		id += "-sheet"
	}
	ctx.Defer(func(app.Context) {
		if el := app.Window().GetElementByID(id); el.Truthy() {
			el.Call("focus")
			el.Call("select")
		}
	})
}

// moveSelection shows the task step rows away from the selected one in
// the switcher's order, or with needsYou the next task whose agent waits
// on the person (wrapping around).
func (s *shell) moveSelection(ctx app.Context, step int, needsYou bool) {
	rows := state.Flatten(state.Triage(s.store.Rows(), s.seen, s.query))
	if len(rows) == 0 {
		return
	}
	// With no task shown, start just outside the list on the side the
	// step comes from, so the first step lands on its first or last row.
	at := -1
	if step < 0 {
		at = len(rows)
	}
	for i, r := range rows {
		if r.TaskID == s.route.TaskID {
			at = i
		}
	}
	for n := 1; n <= len(rows); n++ {
		r := rows[((at+step*n)%len(rows)+len(rows))%len(rows)]
		if needsYou && r.Indicator != state.IndicatorPermission && r.Indicator != state.IndicatorClarification {
			continue
		}
		s.selectTask(ctx, r.TaskID)
		return
	}
}

// editing reports whether el takes the arrow keys itself: a text field,
// a text area, a list box or editable content.
func editing(el app.Value) bool {
	if !el.Truthy() {
		return false
	}
	switch el.Get("tagName").String() {
	case "TEXTAREA", "SELECT":
		return true
	case "INPUT":
		return el.Get("type").String() != "checkbox" && el.Get("type").String() != "button"
	}
	return el.Get("isContentEditable").Bool()
}
