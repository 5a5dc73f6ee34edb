package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderSwitcher draws the task switcher: its heading, the new task
// button and the rows. inSheet adds the sheet's close button.
func (s *shell) renderSwitcher(inSheet bool) app.UI {
	rows := s.store.Rows()
	return app.Section().Class("switcher").Aria("labelledby", "switcher-title").Body(
		app.Div().Class("switcher-head").Body(
			app.H2().ID("switcher-title").Class("switcher-title").Body(
				app.Text("Tasks"),
				app.If(s.ready, func() app.UI {
					return app.Span().Class("count").Text(strconv.Itoa(len(rows)))
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
		app.If(len(rows) == 0, func() app.UI {
			text := "Loading tasks…"
			if s.ready {
				text = "No tasks yet."
			}
			return app.P().Class("switcher-empty").Text(text)
		}).Else(func() app.UI {
			return app.Ul().Class("task-list").Body(
				app.Range(rows).Slice(func(i int) app.UI {
					return &taskRow{Row: rows[i], Selected: rows[i].TaskID == s.selectedID}
				}),
			)
		}),
	)
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
	s.selectedID = ""
	s.syncSessions(ctx)
	s.sheetOpen = false
	focus(ctx, idNewTaskTitle)
}
