package ui

import (
	"context"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// Modes of a row's actions.
const (
	rowMenu    = "menu"
	rowRename  = "rename"
	rowArchive = "archive"
)

// rowEdit is the actions of one task row: its menu, renaming it or
// confirming its archive, with the last request's state. One row at a time
// has any; the others get the zero rowEdit. It lives only in the browser,
// so the title being typed never goes into the server's markup.
type rowEdit struct {
	taskID string
	mode   string
	// title is the new title being typed.
	title string
	// force is offered once an archive failed on uncommitted work.
	force bool
	request
}

// editOf returns the actions of task taskID's row.
func (s *shell) editOf(taskID string) rowEdit {
	if s.rowEdit.taskID != taskID {
		return rowEdit{}
	}
	return s.rowEdit
}

// renderRowActions draws the row's action button and, when open, its menu,
// rename form or archive confirmation. They sit beside the row's link,
// never inside it.
func (r *taskRow) renderRowActions() app.UI {
	e, id := r.Edit, r.Row.TaskID
	menuID := "row-menu-" + id
	return app.Div().Class("row-actions").Body(
		app.Button().Class("row-menu-button").Type("button").
			Aria("label", "Task actions").
			Aria("haspopup", "true").
			Aria("expanded", e.mode != "").
			Aria("controls", menuID).
			DataSet("task-id", id).
			OnClick(r.onMenu).
			Text("⋯"),
		app.If(e.mode == rowMenu, func() app.UI {
			return app.Div().ID(menuID).Class("row-menu").Role("group").Aria("label", "Task actions").Body(
				app.Button().Class("text-button", "row-rename").Type("button").OnClick(r.onStartRename).Text("Rename"),
				app.Button().Class("text-button", "row-archive").Type("button").OnClick(r.onStartArchive).Text("Archive"),
			)
		}),
		app.If(e.mode == rowRename, func() app.UI {
			return app.Form().ID(menuID).Class("row-menu", "row-rename-form").OnSubmit(r.onRename).Body(
				app.Label().For("row-title-"+id).Class("visually-hidden").Text("New title"),
				app.Input().ID("row-title-"+id).Class("row-title-input").Type("text").
					Value(e.title).
					OnInput(r.onRenameInput).
					OnKeyDown(r.onEditKey),
				busyButton("row-rename-save-"+id, "Save", "Saving…", e.busy).Class("row-rename-save").Type("submit"),
				app.Button().Class("text-button").Type("button").OnClick(r.onCancel).Text("Cancel"),
				rowEditError(e),
			)
		}),
		app.If(e.mode == rowArchive, func() app.UI {
			label := "Archive"
			question := "Archive this task? Its worktrees are removed; the task leaves the list."
			if e.force {
				label = "Archive anyway"
				question = "Its worktree has uncommitted work. Archive anyway, discarding it?"
			}
			return app.Div().ID(menuID).Class("row-menu", "row-archive-confirm").Role("group").Aria("label", "Archive task").Body(
				app.P().Class("row-archive-question").Text(question),
				busyButton("row-archive-yes-"+id, label, "Archiving…", e.busy).Class("danger", "row-archive-yes").OnClick(r.onArchive),
				app.Button().Class("text-button").Type("button").OnClick(r.onCancel).Text("Cancel"),
				rowEditError(e),
			)
		}),
	)
}

// rowEditError shows why the row's last request failed.
func rowEditError(e rowEdit) app.UI {
	if e.err == "" {
		return nil
	}
	verb := "rename"
	if e.mode == rowArchive {
		verb = "archive"
	}
	return app.P().Class("row-edit-error").Role("alert").Text("Could not " + verb + ": " + e.err)
}

func (r *taskRow) onMenu(ctx app.Context, _ app.Event) {
	s := r.Shell
	if s.rowEdit.taskID == r.Row.TaskID && s.rowEdit.mode != "" {
		s.rowEdit = rowEdit{}
		return
	}
	s.rowEdit = rowEdit{taskID: r.Row.TaskID, mode: rowMenu}
}

func (r *taskRow) onStartRename(ctx app.Context, _ app.Event) {
	r.Shell.rowEdit = rowEdit{taskID: r.Row.TaskID, mode: rowRename, title: r.Row.Title}
	id := "row-title-" + r.Row.TaskID
	// Through the shell's context: the menu this click came from is gone
	// once rendered, and go-app drops a deferred call whose source left.
	r.Shell.link.ui.Defer(func(app.Context) {
		if el := app.Window().GetElementByID(id); el.Truthy() {
			el.Call("focus")
			el.Call("select")
		}
	})
}

func (r *taskRow) onStartArchive(ctx app.Context, _ app.Event) {
	r.Shell.rowEdit = rowEdit{taskID: r.Row.TaskID, mode: rowArchive}
	focus(r.Shell.link.ui, "row-archive-yes-"+r.Row.TaskID)
}

func (r *taskRow) onRenameInput(ctx app.Context, _ app.Event) {
	if r.Shell.rowEdit.taskID == r.Row.TaskID {
		r.Shell.rowEdit.title = ctx.JSSrc().Get("value").String()
	}
}

// onEditKey closes the rename form on Escape.
func (r *taskRow) onEditKey(ctx app.Context, e app.Event) {
	if e.Get("key").String() == "Escape" {
		r.onCancel(ctx, e)
	}
}

func (r *taskRow) onCancel(ctx app.Context, _ app.Event) {
	r.Shell.rowEdit = rowEdit{}
}

// onRename sends task.update with the typed title; the row shows it once
// the answer (or task.updated) is stored.
func (r *taskRow) onRename(ctx app.Context, e app.Event) {
	e.PreventDefault()
	s := r.Shell
	ed := s.editOf(r.Row.TaskID)
	title := strings.TrimSpace(ed.title)
	if ed.busy || ed.mode != rowRename {
		return
	}
	if title == "" {
		s.rowEdit.err = "a task needs a title."
		return
	}
	if title == r.Row.Title {
		s.rowEdit = rowEdit{}
		return
	}
	req := shared.TaskUpdateRequest{TaskID: r.Row.TaskID, Title: &title}
	s.rowRequest(req.TaskID, shared.ActionTaskUpdate, req)
}

// onArchive sends task.archive, with force once the person confirmed
// discarding uncommitted work.
func (r *taskRow) onArchive(ctx app.Context, _ app.Event) {
	s := r.Shell
	ed := s.editOf(r.Row.TaskID)
	if ed.busy || ed.mode != rowArchive {
		return
	}
	req := shared.TaskArchiveRequest{TaskID: r.Row.TaskID, Force: ed.force}
	s.rowRequest(req.TaskID, shared.ActionTaskArchive, req)
}

// rowRequest sends a row action whose answer is the task, and stores the
// answer the way every answer holding a task is stored. Success closes the
// row's actions; a failure stays in them, and an archive refused for
// uncommitted work offers to archive anyway.
func (s *shell) rowRequest(taskID, action string, req any) {
	if s.link == nil {
		return
	}
	s.rowEdit.busy, s.rowEdit.err = true, ""
	ctx, client, sent := s.link.ui, s.link.client, s.store.Mark()
	ctx.Async(func() {
		var t shared.Task
		err := client.Request(context.Background(), action, req, &t)
		dispatch(ctx, func(ctx app.Context) {
			if err == nil {
				s.store.Apply(state.ResponseWrite(t, sent))
			}
			if s.rowEdit.taskID != taskID {
				return
			}
			s.rowEdit.answered(err)
			switch {
			case err == nil:
				s.rowEdit = rowEdit{}
				if action == shared.ActionTaskArchive && s.route.TaskID == taskID {
					s.navigate(ctx, state.Route{})
				}
			case action == shared.ActionTaskArchive && shared.ErrorCode(err) == shared.CodeConflict:
				s.rowEdit.force = true
			}
		})
	})
}
