package gitwatch_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/worktree"
)

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }

// MustWorktree adds a worktree of repo on branch herd/task, started from
// main, and returns its path.
func MustWorktree(tb testing.TB, repo string) string {
	tb.Helper()
	wt, err := worktree.Create(tb.Context(), worktree.Spec{
		RepoPath: repo, BaseBranch: "main", Branch: "herd/task", Dir: filepath.Join(tb.TempDir(), "task"),
	})
	require.NoError(tb, err)
	return wt.Path
}
