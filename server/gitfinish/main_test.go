package gitfinish_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/worktree"
	"github.com/herd-dev/herd/shared"
)

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }

// MustWorktree adds a worktree of repo on branch herd/task, started from
// main, as a task's, and returns its path.
func MustWorktree(tb testing.TB, repo string) string {
	tb.Helper()
	wt, err := worktree.Create(tb.Context(), worktree.Spec{
		RepoPath: repo, BaseBranch: "main", Branch: "herd/task", Dir: filepath.Join(tb.TempDir(), "task"),
	})
	require.NoError(tb, err)
	return wt.Path
}

// MustBare creates a bare repository to push to and returns its path.
func MustBare(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "remote.git")
	gittest.Git(tb, tb.TempDir(), "init", "--quiet", "--bare", "--initial-branch=main", dir)
	return dir
}

// RequireCode fails tb unless err is a coded error with code whose message
// holds each of words.
func RequireCode(tb testing.TB, err error, code shared.Code, words ...string) {
	tb.Helper()
	require.Error(tb, err)
	require.Equal(tb, code, shared.ErrorCode(err), "error: %v", err)
	for _, w := range words {
		require.Contains(tb, err.Error(), w)
	}
}

// WriteScript writes an executable shell script to path.
func WriteScript(tb testing.TB, path, body string) {
	tb.Helper()
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(tb, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755))
}

// Hook writes the hook name of the repository of the working tree dir.
func Hook(tb testing.TB, dir, name, body string) {
	tb.Helper()
	hooks := gittest.Git(tb, dir, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	WriteScript(tb, filepath.Join(hooks, name), body)
}
