package server

import (
	"context"
	"log/slog"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// demoTasks are the tasks of the demo workspace a first start creates, so
// a newcomer sees a working switcher at once.
var demoTasks = []shared.TaskCreateRequest{
	{Title: "Fix the flaky login test", Description: "TestLogin fails about one run in twenty on CI. Find the race and fix it."},
	{Title: "Add dark mode to settings", Description: "Follow the system colour scheme and allow an override in settings."},
	{Title: "Upgrade to Go 1.26", Description: "Bump the toolchain, run the tests, and fix any vet findings."},
	{Title: "Write the onboarding guide", Description: "A page that gets a new contributor from clone to first pull request."},
	{Title: "Investigate the memory spike in the worker", Description: "RSS doubles after a few hours under load; profile and find the cause."},
	{Title: "Speed up the task list query", Description: "Loading 10,000 tasks should take one query per table, not one per task."},
}

// DemoTaskCount is the number of tasks in the demo workspace.
var DemoTaskCount = len(demoTasks)

// seedDemo creates the demo workspace and its tasks when the database has
// no workspace at all; otherwise it does nothing.
func seedDemo(ctx context.Context, st *store.Store, log *slog.Logger) error {
	existing, err := st.ListWorkspaces(ctx)
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		return nil
	}
	ws, err := st.CreateWorkspace(ctx, "Demo")
	if err != nil {
		return err
	}
	// Created oldest first so the list, newest first, reads top to bottom.
	for i := len(demoTasks) - 1; i >= 0; i-- {
		t := demoTasks[i]
		t.WorkspaceID = ws.ID
		if _, err := st.CreateTask(ctx, t); err != nil {
			return err
		}
	}
	log.Info("seeded demo workspace", "workspace", ws.ID, "tasks", len(demoTasks))
	return nil
}
