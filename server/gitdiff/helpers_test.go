package gitdiff_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/shared"
)

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }

// MustSnapshot snapshots dir's working tree, which must succeed.
func MustSnapshot(tb testing.TB, dir string) string {
	tb.Helper()
	tree, err := gitdiff.Snapshot(tb.Context(), dir)
	require.NoError(tb, err)
	require.Regexp(tb, "^([0-9a-f]{40}|[0-9a-f]{64})$", tree)
	return tree
}

// MustWorktree adds a linked worktree of repo on branch herd/task, started
// from main, and returns its path.
func MustWorktree(tb testing.TB, repo string) string {
	tb.Helper()
	wt := filepath.Join(tb.TempDir(), "task")
	gittest.Git(tb, repo, "worktree", "add", "--quiet", "-b", "herd/task", wt, "main")
	return wt
}

// headTree returns the tree of dir's HEAD.
func headTree(tb testing.TB, dir string) string {
	tb.Helper()
	return gittest.Git(tb, dir, "rev-parse", "HEAD^{tree}")
}

// MustFiles returns every file changed from from to to, in one page.
func MustFiles(tb testing.TB, dir, from, to string) gitdiff.Listing {
	tb.Helper()
	l, err := gitdiff.Files(tb.Context(), dir, from, to, 0, shared.MaxReviewFiles)
	require.NoError(tb, err)
	return l
}

// MustFile returns one page of a file's diff, which must succeed.
func MustFile(tb testing.TB, dir string, p gitdiff.FilePage) shared.ReviewFileResponse {
	tb.Helper()
	resp, err := gitdiff.File(tb.Context(), dir, p)
	require.NoError(tb, err)
	return resp
}

// requireCode fails tb unless err is a shared error of code.
func requireCode(tb testing.TB, code shared.Code, err error) {
	tb.Helper()
	require.Error(tb, err)
	require.Equal(tb, code, shared.ErrorCode(err), "error: %v", err)
}
