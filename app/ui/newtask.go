package ui

import (
	"context"
	"errors"
	"slices"
	"strconv"
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
	// repos are the repository rows, in the order shown.
	repos []repoDraft
	// busy is set while task.create is in flight.
	busy bool
	// err is the last failure, shown under the form; empty when none.
	err string
	// field names the input the server refused ("repositories[0].path"),
	// where the failure shows instead; resolved is the absolute path the
	// server resolved that repository's path to.
	field    string
	resolved string
}

// repoDraft is one repository row of the new task form.
type repoDraft struct {
	path       string
	baseBranch string
	// inPlace runs the agent in path itself; by default herd makes the
	// task a worktree of its own.
	inPlace bool
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
			s.renderRepoInputs(),
			app.P().ID("new-task-error").Class("form-error").Role("alert").Body(
				app.If(s.draft.field == "", func() app.UI { return app.Text(s.draft.err) }),
			),
			app.Div().Class("form-actions").Body(submit),
		)
}

// idNewTaskRepoAdd is the new task form's "Add repository" button.
const idNewTaskRepoAdd = "new-task-repo-add"

// repoInputID is the id of row i's input of kind ("path", "base" or
// "in-place").
func repoInputID(kind string, i int) string {
	return "new-task-repo-" + kind + "-" + strconv.Itoa(i)
}

// renderRepoInputs draws the repository rows with their add and remove
// buttons. A task may have none: its agent then works in a scratch
// directory.
func (s *shell) renderRepoInputs() app.UI {
	repos := s.draft.repos
	return app.FieldSet().Class("new-task-repos").Body(
		app.Legend().Body(
			app.Text("Repositories "),
			app.Span().Class("muted").Text("(optional)"),
		),
		app.If(len(repos) == 0, func() app.UI {
			return app.P().Class("muted", "field-hint").Text("Without one the agent works in a scratch directory.")
		}),
		app.Range(repos).Slice(func(i int) app.UI { return s.renderRepoInput(i) }),
		app.Button().ID(idNewTaskRepoAdd).Class("text-button").Type("button").OnClick(s.onAddRepo).Text("Add repository"),
	)
}

// renderRepoInput draws repository row i: its path, base branch and
// whether the agent runs in place.
func (s *shell) renderRepoInput(i int) app.UI {
	r := s.draft.repos[i]
	n := strconv.Itoa(i + 1)
	inPlace := app.Input().ID(repoInputID("in-place", i)).Type("checkbox").Name("run_in_place").OnChange(s.onRepoInPlace(i))
	if r.inPlace {
		// Only ever set to true, like disabled; onRemoveRepo resets the
		// property when a row takes another's place.
		inPlace = inPlace.Checked(true)
	}
	return app.FieldSet().Class("repo-input").Body(
		app.Legend().Class("repo-input-legend").Text("Repository "+n),
		s.repoField(i, "path", "Path", r.path, "/path/to/repository (relative to the server's directory)", s.onRepoPath(i)),
		app.Div().Class("repo-input-options").Body(
			s.repoField(i, "base", "Base branch (optional)", r.baseBranch, "", s.onRepoBase(i)),
			app.Label().Class("check").For(repoInputID("in-place", i)).Body(
				inPlace,
				app.Text(" Run in place (no worktree)"),
			),
			app.Button().
				Class("text-button", "repo-input-remove").
				Type("button").
				Aria("label", "Remove repository "+n).
				OnClick(s.onRemoveRepo(i)).
				Text("Remove"),
		),
	)
}

// repoFields maps an input kind of a repository row to the field name the
// server's errors use for it.
var repoFields = map[string]string{"path": "path", "base": "base_branch"}

// repoField draws one text input of repository row i, with the server's
// refusal of it, if any, beside it: its message and the path it resolved.
func (s *shell) repoField(i int, kind, label, value, placeholder string, onInput app.EventHandler) app.UI {
	id := repoInputID(kind, i)
	refused := s.draft.field == "repositories["+strconv.Itoa(i)+"]."+repoFields[kind]
	input := app.Input().ID(id).Type("text").Name("repository_" + repoFields[kind]).
		AutoComplete(false).Value(value).OnInput(onInput)
	if placeholder != "" {
		input = input.Placeholder(placeholder)
	}
	if refused {
		input = input.Aria("invalid", "true").Aria("describedby", id+"-error")
	}
	return app.Div().Class("field").Body(
		app.Label().For(id).Text(label),
		input,
		app.If(refused, func() app.UI {
			return app.Div().ID(id+"-error").Class("field-error").Role("alert").Body(
				app.P().Text(s.draft.err),
				app.If(s.draft.resolved != "", func() app.UI {
					return app.P().Class("field-resolved").Body(app.Text("Resolved to "), app.Code().Text(s.draft.resolved))
				}),
			)
		}),
	)
}

// onAddRepo adds an empty repository row and moves focus to its path.
func (s *shell) onAddRepo(ctx app.Context, _ app.Event) {
	s.draft.repos = append(s.draft.repos, repoDraft{})
	focus(ctx, repoInputID("path", len(s.draft.repos)-1))
}

// onRemoveRepo removes repository row i. go-app updates the rows after it
// in place, and it clears a value or a check by removing the attribute,
// which leaves what the person typed; so once rendered, every row's inputs
// are set from the draft. It reports through the shell's context because
// the clicked button may be the element that left the page.
func (s *shell) onRemoveRepo(i int) app.EventHandler {
	return func(app.Context, app.Event) {
		if s.link == nil || i >= len(s.draft.repos) {
			return
		}
		s.draft.repos = slices.Delete(s.draft.repos, i, i+1)
		repos := slices.Clone(s.draft.repos)
		s.link.ui.Defer(func(app.Context) {
			for j, r := range repos {
				setProperty(repoInputID("path", j), "value", r.path)
				setProperty(repoInputID("base", j), "value", r.baseBranch)
				setProperty(repoInputID("in-place", j), "checked", r.inPlace)
			}
		})
		focus(s.link.ui, idNewTaskRepoAdd)
	}
}

// setProperty sets a DOM property of the element with id, if present.
func setProperty(id, name string, v any) {
	if el := app.Window().GetElementByID(id); el.Truthy() {
		el.Set(name, v)
	}
}

// onRepoPath keeps row i's path in step with its input.
func (s *shell) onRepoPath(i int) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		if i < len(s.draft.repos) {
			s.draft.repos[i].path = ctx.JSSrc().Get("value").String()
		}
	}
}

// onRepoBase keeps row i's base branch in step with its input.
func (s *shell) onRepoBase(i int) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		if i < len(s.draft.repos) {
			s.draft.repos[i].baseBranch = ctx.JSSrc().Get("value").String()
		}
	}
}

// onRepoInPlace keeps row i's run-in-place choice in step with its box.
func (s *shell) onRepoInPlace(i int) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		if i < len(s.draft.repos) {
			s.draft.repos[i].inPlace = ctx.JSSrc().Get("checked").Bool()
		}
	}
}

// repositories returns the draft's rows as task.create takes them, or
// names the row that still needs a path.
func (d draft) repositories() ([]shared.RepositoryInput, string) {
	var out []shared.RepositoryInput
	for i, r := range d.repos {
		path := strings.TrimSpace(r.path)
		if path == "" {
			return nil, "Repository " + strconv.Itoa(i+1) + " needs a path: enter one or remove the row."
		}
		out = append(out, shared.RepositoryInput{Path: path, BaseBranch: strings.TrimSpace(r.baseBranch), RunInPlace: r.inPlace})
	}
	return out, ""
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
	repos, problem := s.draft.repositories()
	if problem != "" {
		s.draft.err = problem
		return
	}
	req := shared.TaskCreateRequest{
		WorkspaceID:  s.store.WorkspaceID(),
		Title:        strings.TrimSpace(s.draft.title),
		Description:  strings.TrimSpace(s.draft.description),
		Repositories: repos,
	}
	s.draft.busy = true
	s.draft.err = ""
	client := s.link.client
	sent := s.store.Mark()
	ctx.Async(func() {
		var created shared.Task
		err := client.Request(context.Background(), shared.ActionTaskCreate, req, &created)
		dispatch(ctx, func(ctx app.Context) {
			if s.created(created, sent, err) {
				// The next step: put an agent to work on it. The task view
				// that shows the button mounts with the new address.
				s.focusOnOpen = "session-start"
				s.selectTask(ctx, created.ID)
			}
		})
	})
}

// created applies the answer to task.create, sent when the store was at
// sent (a task.updated that overtook the answer stays), and reports
// whether the task was created.
func (s *shell) created(t shared.Task, sent state.Mark, err error) bool {
	s.draft.busy = false
	if err != nil {
		s.draft.err = describe(err)
		s.draft.field, s.draft.resolved = refusedField(err)
		return false
	}
	s.store.Apply(state.ResponseWrite(t, sent))
	s.draft = draft{}
	return true
}

// refusedField reads, from a refusal of task.create, the field it names
// and the path the server resolved; empty for any other failure.
func refusedField(err error) (field, resolved string) {
	var coded *shared.Error
	if !errors.As(err, &coded) || coded.Code != shared.CodeBadRequest {
		return "", ""
	}
	field, _ = coded.Details["field"].(string)
	resolved, _ = coded.Details["resolved"].(string)
	return field, resolved
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
