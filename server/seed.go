package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/worktree"
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

// demoRepoTask is the demo task that gets a worktree of the demo
// repository, so that a newcomer can watch an agent's writes reach its
// row's git totals.
const demoRepoTask = "Write the onboarding guide"

// demoPrompt tells a newcomer how to try the demo repository.
const demoPrompt = "\n\nThis task works in a git worktree of a demo repository: ask the Mock agent `/scenario write docs/onboarding.md Welcome` and watch the row's git totals."

// taskCreator creates tasks, with worktrees for their repositories.
type taskCreator interface {
	CreateTask(ctx context.Context, in shared.TaskCreateRequest) (shared.Task, error)
}

// seedDemo creates the demo workspace and its tasks when the database has
// no workspace at all; otherwise it does nothing. One task works on a demo
// git repository made in repoDir, when git is there to make it.
func seedDemo(ctx context.Context, st *store.Store, tasks taskCreator, repoDir string, log *slog.Logger) error {
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
		if t.Title == demoRepoTask {
			if err := makeDemoRepository(ctx, repoDir); err != nil {
				log.Warn("demo task without a repository", "err", err)
			} else {
				t.Description += demoPrompt
				t.Repositories = []shared.RepositoryInput{{Path: repoDir}}
			}
		}
		if _, err := tasks.CreateTask(ctx, t); err != nil {
			return err
		}
	}
	log.Info("seeded demo workspace", "workspace", ws.ID, "tasks", len(demoTasks))
	return nil
}

// makeDemoRepository creates a git repository in dir with one commit on
// main, unless dir already holds one.
func makeDemoRepository(ctx context.Context, dir string) error {
	if _, err := worktree.ResolveBase(ctx, dir, ""); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create demo repository: %w", err)
	}
	readme := "# Demo project\n\nA repository herd created for its demo workspace.\n"
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o600); err != nil {
		return fmt.Errorf("create demo repository: %w", err)
	}
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"add", "README.md"},
		{"-c", "user.name=herd", "-c", "user.email=demo@herd.invalid", "commit", "--quiet", "--message", "Start the demo project"},
	} {
		if _, err := gitcli.Run(ctx, dir, args...); err != nil {
			return fmt.Errorf("create demo repository: %w", err)
		}
	}
	return nil
}
