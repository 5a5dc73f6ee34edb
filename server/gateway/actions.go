package gateway

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

// Input bounds for the workspace and task actions.
const (
	maxNameBytes        = 200
	maxTitleBytes       = 500
	maxDescriptionBytes = 64 << 10
	maxRepositories     = 16
)

func (g *Gateway) ping(context.Context, *conn, shared.Empty) (any, error) {
	return shared.Empty{}, nil
}

// boot answers with the first screen and joins the connection to the
// selected workspace's feed before reading its tasks, so no task event
// committed after the read can be missed.
func (g *Gateway) boot(ctx context.Context, c *conn, req shared.BootRequest) (any, error) {
	return g.Boot(ctx, req.WorkspaceID, c.join)
}

// Boot loads the first screen: the workspace named by workspaceID (empty
// selects the oldest), its first page of tasks with their summaries, and
// the agent profiles. join, when not nil, runs with the selected workspace
// before its tasks are read. The server also uses Boot to render the web
// app's first screen with data.
func (g *Gateway) Boot(ctx context.Context, workspaceID string, join func(workspaceID string) error) (shared.BootResponse, error) {
	workspaces, err := g.cfg.Store.ListWorkspaces(ctx)
	if err != nil {
		return shared.BootResponse{}, err
	}
	resp := shared.BootResponse{
		Server: shared.ServerInfo{
			Version:         g.cfg.Version,
			ProtocolVersion: shared.ProtocolVersion,
			Features:        nonNil(g.cfg.Features),
		},
		Workspaces: workspaces,
		Tasks:      []shared.Task{},
	}
	switch {
	case workspaceID != "":
		if !containsWorkspace(workspaces, workspaceID) {
			return shared.BootResponse{}, shared.Errorf(shared.CodeNotFound, "workspace %q not found", workspaceID)
		}
		resp.WorkspaceID = workspaceID
	case len(workspaces) > 0:
		resp.WorkspaceID = workspaces[0].ID
	}
	if resp.WorkspaceID != "" {
		if join != nil {
			if err := join(resp.WorkspaceID); err != nil {
				return shared.BootResponse{}, err
			}
		}
		page, err := g.cfg.Store.ListTasks(ctx, shared.TaskListRequest{WorkspaceID: resp.WorkspaceID})
		if err != nil {
			return shared.BootResponse{}, err
		}
		resp.Tasks, resp.NextCursor = page.Tasks, page.NextCursor
	}
	if resp.AgentProfiles, err = g.cfg.Profiles.ListProfiles(ctx); err != nil {
		return shared.BootResponse{}, err
	}
	return resp, nil
}

func (g *Gateway) workspaceList(ctx context.Context, _ *conn, _ shared.Empty) (any, error) {
	workspaces, err := g.cfg.Store.ListWorkspaces(ctx)
	if err != nil {
		return nil, err
	}
	return shared.WorkspaceListResponse{Workspaces: workspaces}, nil
}

func (g *Gateway) workspaceCreate(ctx context.Context, _ *conn, req shared.WorkspaceCreateRequest) (any, error) {
	name, err := boundedText("name", req.Name, maxNameBytes, true)
	if err != nil {
		return nil, err
	}
	return g.cfg.Store.CreateWorkspace(ctx, name)
}

func (g *Gateway) workspaceSubscribe(ctx context.Context, c *conn, req shared.WorkspaceRef) (any, error) {
	if err := g.requireWorkspace(ctx, req.WorkspaceID); err != nil {
		return nil, err
	}
	if err := c.join(req.WorkspaceID); err != nil {
		return nil, err
	}
	return shared.Empty{}, nil
}

func (g *Gateway) workspaceUnsubscribe(_ context.Context, c *conn, req shared.WorkspaceRef) (any, error) {
	if err := requireID("workspace_id", req.WorkspaceID); err != nil {
		return nil, err
	}
	c.leave(req.WorkspaceID)
	return shared.Empty{}, nil
}

func (g *Gateway) taskList(ctx context.Context, _ *conn, req shared.TaskListRequest) (any, error) {
	if err := requireID("workspace_id", req.WorkspaceID); err != nil {
		return nil, err
	}
	if req.Limit < 0 || req.Limit > shared.MaxTaskPage {
		return nil, shared.Errorf(shared.CodeBadRequest, "limit must be between 1 and %d (0 means %d)", shared.MaxTaskPage, shared.DefaultTaskPage)
	}
	if _, err := g.cfg.Store.GetWorkspace(ctx, req.WorkspaceID); err != nil {
		return nil, err
	}
	return g.cfg.Store.ListTasks(ctx, req)
}

func (g *Gateway) taskCreate(ctx context.Context, _ *conn, req shared.TaskCreateRequest) (any, error) {
	if err := requireID("workspace_id", req.WorkspaceID); err != nil {
		return nil, err
	}
	title, err := boundedText("title", req.Title, maxTitleBytes, true)
	if err != nil {
		return nil, err
	}
	req.Title = title
	if _, err := boundedText("description", req.Description, maxDescriptionBytes, false); err != nil {
		return nil, err
	}
	if req.Prompt != "" {
		return nil, shared.Errorf(shared.CodeUnavailable, "starting a session from task.create is not available in this server version; create the task without a prompt")
	}
	// Last, as the only check that runs git.
	if err := resolveRepositories(ctx, req.Repositories); err != nil {
		return nil, err
	}
	task, err := g.cfg.Tasks.CreateTask(ctx, req)
	if err != nil {
		return nil, err
	}
	g.publishTask(shared.NotifyTaskCreated, task)
	if task.StatusSummary != nil {
		g.publishWorkspace(task.WorkspaceID, shared.NotifyTaskStatusSummaryUpdated, shared.StatusSummaryEvent{
			TaskID: task.ID, WorkspaceID: task.WorkspaceID, StatusSummary: *task.StatusSummary,
		})
	}
	return task, nil
}

func (g *Gateway) taskGet(ctx context.Context, _ *conn, req shared.TaskRef) (any, error) {
	if err := requireID("task_id", req.TaskID); err != nil {
		return nil, err
	}
	return g.cfg.Store.GetTask(ctx, req.TaskID)
}

func (g *Gateway) taskUpdate(ctx context.Context, _ *conn, req shared.TaskUpdateRequest) (any, error) {
	if err := requireID("task_id", req.TaskID); err != nil {
		return nil, err
	}
	if req.Title != nil {
		title, err := boundedText("title", *req.Title, maxTitleBytes, true)
		if err != nil {
			return nil, err
		}
		req.Title = &title
	}
	if req.Description != nil {
		if _, err := boundedText("description", *req.Description, maxDescriptionBytes, false); err != nil {
			return nil, err
		}
	}
	if req.PullRequestURL != nil {
		link, err := pullRequestURL(*req.PullRequestURL)
		if err != nil {
			return nil, err
		}
		req.PullRequestURL = &link
	}
	task, err := g.cfg.Store.UpdateTask(ctx, req)
	if err != nil {
		return nil, err
	}
	g.publishTask(shared.NotifyTaskUpdated, task)
	marks := []string{task.ID}
	if req.PullRequestURL != nil {
		// The link moves stored pull requests between tasks.
		losers, err := g.cfg.Store.RelinkPullRequests(ctx, task.ID)
		if err != nil {
			return nil, err
		}
		marks = append(marks, losers...)
	}
	if g.cfg.Summaries != nil && (req.PrimarySessionID != nil || req.PullRequestURL != nil) {
		// The summary shows the primary session and the pull requests.
		for _, id := range marks {
			g.cfg.Summaries.Mark(id)
		}
	}
	return task, nil
}

// pullRequestURL checks an explicit pull request link: empty (no link), or
// an https URL whose path is /OWNER/REPO/pull/NUMBER, as GitHub and
// GitHub Enterprise name pull requests.
func pullRequestURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err == nil && u.Scheme == "https" && u.Host != "" && u.RawQuery == "" && u.Fragment == "" {
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if len(parts) == 4 && parts[0] != "" && parts[1] != "" && parts[2] == "pull" {
			if n, err := strconv.Atoi(parts[3]); err == nil && n > 0 {
				return s, nil
			}
		}
	}
	return "", shared.Errorf(shared.CodeBadRequest, "pull_request_url %q is not a pull request link such as https://github.com/OWNER/REPO/pull/17", s)
}

// taskArchive archives a task, removes its worktrees and ends its
// sessions; uncommitted work in a worktree, or a running session, refuses
// it unless forced. Archived tasks leave the default task list; the feed
// reports the change as task.updated with archived set.
func (g *Gateway) taskArchive(ctx context.Context, _ *conn, req shared.TaskArchiveRequest) (any, error) {
	if err := requireID("task_id", req.TaskID); err != nil {
		return nil, err
	}
	task, err := g.cfg.Tasks.ArchiveTask(ctx, req)
	if err != nil {
		return nil, err
	}
	if g.cfg.Sessions != nil {
		// Nothing is left for the task's agents to work in.
		if err := g.cfg.Sessions.EndTask(ctx, task.ID); err != nil {
			return nil, err
		}
	}
	g.publishTask(shared.NotifyTaskUpdated, task)
	return task, nil
}

func (g *Gateway) agentProfileList(ctx context.Context, _ *conn, _ shared.Empty) (any, error) {
	profiles, err := g.cfg.Profiles.ListProfiles(ctx)
	if err != nil {
		return nil, err
	}
	return shared.AgentProfileListResponse{AgentProfiles: profiles}, nil
}

// publishTask sends a task event with the task's coarse fields only.
func (g *Gateway) publishTask(action string, task shared.Task) {
	task.StatusSummary = nil
	g.publishWorkspace(task.WorkspaceID, action, task)
}

func requireID(field, value string) error {
	if strings.TrimSpace(value) == "" {
		return shared.Errorf(shared.CodeBadRequest, "%s is required", field)
	}
	return nil
}

// requireWorkspace checks that a workspace id is given and exists.
func (g *Gateway) requireWorkspace(ctx context.Context, id string) error {
	if err := requireID("workspace_id", id); err != nil {
		return err
	}
	_, err := g.cfg.Store.GetWorkspace(ctx, id)
	return err
}

// boundedText trims s and checks it against a byte bound.
func boundedText(field, s string, maxBytes int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case required && s == "":
		return "", shared.Errorf(shared.CodeBadRequest, "%s is required", field)
	case len(s) > maxBytes:
		return "", shared.Errorf(shared.CodeBadRequest, "%s is %d bytes; the limit is %d", field, len(s), maxBytes)
	case !utf8.ValidString(s):
		return "", shared.Errorf(shared.CodeBadRequest, "%s is not valid UTF-8", field)
	}
	return s, nil
}

func containsWorkspace(ws []shared.Workspace, id string) bool {
	for _, w := range ws {
		if w.ID == id {
			return true
		}
	}
	return false
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
