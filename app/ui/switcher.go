package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
)

// idTaskSearch is the switcher's search field; Ctrl/Cmd-K focuses it.
const idTaskSearch = "task-search"

// renderSwitcher draws the task switcher: its heading, the new task
// button, the search field and the rows in triage order (needs you,
// running, finished since you looked, the rest). inSheet adds the sheet's
// close button.
func (s *shell) renderSwitcher(inSheet bool) app.UI {
	rows := s.store.Rows()
	sections := state.Triage(rows, s.seen, s.query)
	searchID := idTaskSearch
	if inSheet {
		searchID += "-sheet"
	}
	return app.Section().Class("switcher").Aria("labelledby", "switcher-title").Body(
		app.Div().Class("switcher-head").Body(
			app.H2().ID("switcher-title").Class("switcher-title").Body(
				app.Text("Tasks"),
				app.If(s.ready, func() app.UI {
					return app.Span().Class("count").Text(strconv.Itoa(len(rows)))
				}),
				app.If(s.ready && !state.WorkspaceCost(rows).Empty(), func() app.UI {
					return workspaceCost(state.WorkspaceCost(rows))
				}),
			),
			app.Button().
				ID("new-task-open").
				Class("text-button").
				Type("button").
				OnClick(s.onNewTask).
				Text("New task"),
			app.If(inSheet, func() app.UI {
				return app.Button().
					ID(idSwitcherClose).
					Class("icon-button").
					Type("button").
					Aria("label", "Close tasks").
					OnClick(s.onCloseSheet).
					Body(app.Span().Class("close-mark").Aria("hidden", "true"))
			}),
		),
		app.Div().Class("switcher-search").Body(
			app.Label().For(searchID).Class("visually-hidden").Text("Search tasks by title"),
			app.Input().ID(searchID).Class("task-search").Type("search").
				Placeholder("Search tasks (Ctrl+K)").
				AutoComplete(false).
				Spellcheck(false).
				OnInput(s.onSearch).
				OnKeyDown(s.onSearchKey),
		),
		app.If(len(rows) == 0, func() app.UI {
			text := "Loading tasks…"
			if s.ready {
				text = "No tasks yet."
			}
			return app.P().Class("switcher-empty").Text(text)
		}).ElseIf(len(sections) == 0, func() app.UI {
			return app.P().Class("switcher-empty").Text("No task title matches.")
		}).Else(func() app.UI {
			return app.Div().Class("task-sections").Body(
				app.Range(sections).Slice(func(i int) app.UI {
					sec := sections[i]
					headingID := "group-" + string(sec.Group)
					if inSheet {
						headingID += "-sheet"
					}
					return app.Div().Class("task-group", "task-group-"+string(sec.Group)).Body(
						app.H3().ID(headingID).Class("task-group-title").Text(sec.Group.Title()),
						app.Ul().Class("task-list").Aria("labelledby", headingID).Body(
							app.Range(sec.Rows).Slice(func(j int) app.UI {
								r := sec.Rows[j]
								return &taskRow{Row: r, Selected: r.TaskID == s.route.TaskID, Now: s.today, Edit: s.editOf(r.TaskID), Shell: s}
							}),
						),
					)
				}),
			)
		}),
	)
}

// onSearch filters the rows by the typed title.
func (s *shell) onSearch(ctx app.Context, _ app.Event) {
	s.query = ctx.JSSrc().Get("value").String()
}

// onSearchKey makes the search field a switcher: Enter opens the first
// match, the arrow keys move into the list, Escape clears it.
func (s *shell) onSearchKey(ctx app.Context, e app.Event) {
	switch e.Get("key").String() {
	case "Enter":
		e.PreventDefault()
		if rows := state.Flatten(state.Triage(s.store.Rows(), s.seen, s.query)); len(rows) > 0 {
			s.clearSearch(ctx)
			s.selectTask(ctx, rows[0].TaskID)
		}
	case "ArrowDown":
		e.PreventDefault()
		focusFirstRow(ctx.JSSrc())
	case "Escape":
		s.clearSearch(ctx)
	}
}

// clearSearch empties the search field.
func (s *shell) clearSearch(ctx app.Context) {
	s.query = ""
	for _, id := range []string{idTaskSearch, idTaskSearch + "-sheet"} {
		if el := app.Window().GetElementByID(id); el.Truthy() {
			el.Set("value", "")
		}
	}
}

// focusFirstRow moves focus from the search field to the first row of
// its switcher.
func focusFirstRow(from app.Value) {
	sw := from.Call("closest", ".switcher")
	if !sw.Truthy() {
		return
	}
	if row := sw.Call("querySelector", ".task-row"); row.Truthy() {
		row.Call("focus")
	}
}

// renderSheet draws the phone's switcher sheet over a backdrop. A closed
// sheet stays in the page, hidden, so opening it costs no re-mount.
func (s *shell) renderSheet() app.UI {
	layer := app.Div().Class("sheet-layer")
	if !s.sheetOpen {
		// Only ever set to true; see the submit button in newtask.go.
		layer = layer.Hidden(true)
	}
	return layer.Body(
		app.Div().
			ID("switcher-backdrop").
			Class("sheet-backdrop").
			Aria("hidden", "true").
			OnClick(s.onCloseSheet),
		app.Div().
			ID("switcher-sheet").
			Class("sheet").
			Role("dialog").
			Aria("modal", "true").
			Aria("labelledby", "switcher-title").
			OnKeyDown(s.onSheetKey).
			Body(s.renderSwitcher(true)),
	)
}

// onOpenSheet opens the phone sheet and moves focus into it.
func (s *shell) onOpenSheet(ctx app.Context, _ app.Event) {
	s.sheetOpen = true
	focus(ctx, idSwitcherClose)
}

// onCloseSheet closes the phone sheet.
func (s *shell) onCloseSheet(ctx app.Context, _ app.Event) {
	s.closeSheet(ctx)
}

// onSheetKey closes the sheet on Escape.
func (s *shell) onSheetKey(ctx app.Context, e app.Event) {
	if e.Get("key").String() == "Escape" {
		s.closeSheet(ctx)
	}
}

// closeSheet closes the phone sheet and returns focus to its button.
func (s *shell) closeSheet(ctx app.Context) {
	s.sheetOpen = false
	focus(ctx, idSwitcherToggle)
}

// onNewTask shows the new task form.
func (s *shell) onNewTask(ctx app.Context, _ app.Event) {
	s.navigate(ctx, state.Route{})
	s.sheetOpen = false
	focus(ctx, idNewTaskTitle)
}
