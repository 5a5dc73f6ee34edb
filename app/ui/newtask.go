package ui

import (
	"context"
	"errors"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// draft is the new task form's state.
type draft struct {
	title       string
	description string
	// busy is set while task.create is in flight.
	busy bool
	// err is the last failure, shown under the form; empty when none.
	err string
}

// canSubmit reports whether the form may be sent: a title, a workspace to
// create it in, and no request already in flight.
func (s *shell) canSubmit() bool {
	return strings.TrimSpace(s.draft.title) != "" && s.store.WorkspaceID() != "" && !s.draft.busy
}

// renderNewTask draws the new task form.
func (s *shell) renderNewTask() app.UI {
	ws, hasWorkspace := s.store.Workspace()
	submitText := "Create task"
	if s.draft.busy {
		submitText = "Creating…"
	}
	submit := app.Button().ID("new-task-submit").Class("primary-button").Type("submit").Text(submitText)
	if !s.canSubmit() {
		// Only ever set to true: go-app writes a false boolean into the
		// server's HTML as disabled="false", which HTML reads as disabled.
		submit = submit.Disabled(true)
	}
	return app.Form().
		ID("new-task-form").
		Class("new-task").
		Aria("labelledby", "new-task-heading").
		OnSubmit(s.onCreate).
		Body(
			app.H1().ID("new-task-heading").Text("New task"),
			app.If(hasWorkspace, func() app.UI {
				return app.P().Class("muted").Text("In workspace " + ws.Name + ".")
			}).ElseIf(s.ready, func() app.UI {
				return app.P().Class("muted").Text("There is no workspace to create tasks in yet.")
			}),
			app.Div().Class("field").Body(
				app.Label().For(idNewTaskTitle).Text("Title"),
				app.Input().
					ID(idNewTaskTitle).
					Type("text").
					Name("title").
					AutoComplete(false).
					Value(s.draft.title).
					Aria("describedby", "new-task-error").
					OnInput(s.onTitleInput),
			),
			app.Div().Class("field").Body(
				app.Label().For("new-task-description").Body(
					app.Text("Description "),
					app.Span().Class("muted").Text("(optional)"),
				),
				app.Textarea().
					ID("new-task-description").
					Name("description").
					Rows(4).
					Attr("value", s.draft.description).
					OnInput(s.onDescriptionInput),
			),
			app.P().ID("new-task-error").Class("form-error").Role("alert").Text(s.draft.err),
			app.Div().Class("form-actions").Body(submit),
		)
}

// onTitleInput keeps the draft title in step with the input.
func (s *shell) onTitleInput(ctx app.Context, _ app.Event) {
	s.draft.title = ctx.JSSrc().Get("value").String()
}

// onDescriptionInput keeps the draft description in step with the input.
func (s *shell) onDescriptionInput(ctx app.Context, _ app.Event) {
	s.draft.description = ctx.JSSrc().Get("value").String()
}

// onCreate sends task.create for the draft in the selected workspace. On
// success the new task is stored and shown; on failure the form keeps the
// draft and shows why.
func (s *shell) onCreate(ctx app.Context, e app.Event) {
	e.PreventDefault()
	if !s.canSubmit() {
		return
	}
	req := shared.TaskCreateRequest{
		WorkspaceID: s.store.WorkspaceID(),
		Title:       strings.TrimSpace(s.draft.title),
		Description: strings.TrimSpace(s.draft.description),
	}
	s.draft.busy = true
	s.draft.err = ""
	client := s.link.client
	sent := s.store.Mark()
	ctx.Async(func() {
		var created shared.Task
		err := client.Request(context.Background(), shared.ActionTaskCreate, req, &created)
		ctx.Dispatch(func(ctx app.Context) {
			s.created(created, sent, err)
			s.syncSessions(ctx)
		})
	})
}

// created applies the answer to task.create, sent when the store was at
// sent: a task.updated that overtook the answer stays.
func (s *shell) created(t shared.Task, sent state.Mark, err error) {
	s.draft.busy = false
	if err != nil {
		s.draft.err = describe(err)
		return
	}
	s.store.Apply(state.ResponseWrite(t, sent))
	s.draft = draft{}
	s.selectedID = t.ID
}

// describe turns a request failure into a sentence a person can act on.
func describe(err error) string {
	var coded *shared.Error
	switch {
	case errors.As(err, &coded):
		return coded.Message
	case errors.Is(err, wsclient.ErrNotConnected):
		return "Not connected to the server. Try again once the status shows online."
	case errors.Is(err, wsclient.ErrClosed), errors.Is(err, wsclient.ErrTimeout):
		return "The server did not confirm in time, so the task may or may not exist. Check the task list before trying again."
	default:
		return err.Error()
	}
}
