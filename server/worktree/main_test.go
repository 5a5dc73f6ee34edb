package worktree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/worktree"
)

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }

// MustCreate adds a worktree of repo on branch, started from HEAD's
// branch, in a fresh directory.
func MustCreate(tb testing.TB, repo, branch string) worktree.Worktree {
	tb.Helper()
	wt, err := worktree.Create(tb.Context(), worktree.Spec{
		RepoPath: repo, Branch: branch, Dir: filepath.Join(tb.TempDir(), "worktrees", "task"),
	})
	require.NoError(tb, err)
	return wt
}
