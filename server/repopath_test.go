package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// A relative repository path, as the README's "./data/demo-repo", is taken
// from the server's working directory: the task keeps the absolute path.
// One that does not name a git repository there is refused at once, with
// the path as resolved in the message and, for the form's field, in the
// error's details.
func TestTaskCreateTakesARelativeRepositoryPathFromTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "data", "demo-repo")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	gittest.Git(t, repo, "init", "--quiet", "--initial-branch=main")
	gittest.Write(t, repo, "README", "demo\n")
	gittest.Commit(t, repo, "initial commit")
	plain := filepath.Join(dir, "data", "plain")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	t.Chdir(dir)

	dataDir := t.TempDir()
	srv := MustStart(t, func(cfg *server.Config, _ *server.Options) { cfg.DataDir = dataDir })
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "Relative",
		"repositories": []any{map[string]any{"path": "./data/../data/demo-repo", "run_in_place": true}},
	})
	r := task["repositories"].([]any)[0].(map[string]any)
	assert.Equal(t, repo, r["path"], "absolute and clean")

	missing := filepath.Join(dir, "data", "missing")
	tests := []struct {
		name     string
		repo     map[string]any
		field    string
		resolved string
		says     string
	}{
		{"a relative path to nothing", map[string]any{"path": "data/missing"}, "repositories[1].path", missing, "does not exist"},
		{"a relative path to a plain directory", map[string]any{"path": "./data/plain"}, "repositories[1].path", plain, "not a git repository"},
		{"an absolute path to nothing", map[string]any{"path": missing}, "repositories[1].path", missing, "does not exist"},
		{"a missing base branch", map[string]any{"path": "./data/demo-repo", "base_branch": "release"}, "repositories[1].base_branch", repo, `base branch "release" not found`},
		{"no path", map[string]any{"path": " "}, "repositories[1].path", "", "is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := c.callErr("task.create", map[string]any{
				"workspace_id": ws["id"], "title": "t",
				"repositories": []any{map[string]any{"path": repo}, tt.repo},
			}, "bad_request")
			assert.Contains(t, e["message"], tt.field)
			assert.Contains(t, e["message"], tt.says)
			want := map[string]any{"field": tt.field}
			if tt.resolved != "" {
				assert.Contains(t, e["message"], tt.resolved, "the message names the path as resolved")
				want["resolved"] = tt.resolved
			}
			assert.Equal(t, want, e["details"])
		})
	}
	tasks := c.call("task.list", map[string]any{"workspace_id": ws["id"]})["tasks"].([]any)
	assert.Len(t, tasks, 1, "no refused task was created")
	assert.NoDirExists(t, filepath.Join(dataDir, "worktrees"), "no worktree was made for the good repository of a refused task")
	assert.Equal(t, 1, strings.Count(gittest.Git(t, repo, "worktree", "list", "--porcelain"), "worktree "))
}
