package worktree_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/worktree"
)

func TestMain(m *testing.M) {
	cleanup, err := gittest.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "isolate git:", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

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
