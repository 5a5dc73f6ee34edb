package worktree_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/worktree"
)

// listed returns the worktree paths git lists for repo.
func listed(tb testing.TB, repo string) []string {
	tb.Helper()
	var paths []string
	for line := range strings.Lines(gittest.Git(tb, repo, "worktree", "list", "--porcelain")) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "worktree "); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

func TestRemoveCleanWorktreeKeepsItsBranchAndCommits(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustCreate(t, repo, "herd/task")
	gittest.Write(t, wt.Path, "work.txt", "done\n")
	gittest.Commit(t, wt.Path, "agent work")
	head := gittest.Git(t, wt.Path, "rev-parse", "HEAD")

	require.NoError(t, worktree.Check(t.Context(), repo, wt.Path))
	require.DirExists(t, wt.Path, "Check removes nothing")
	require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, false))
	require.NoDirExists(t, wt.Path)
	require.Len(t, listed(t, repo), 1)
	require.Equal(t, head, gittest.Git(t, repo, "rev-parse", "herd/task"), "the branch and its commit survive")
}

func TestRemoveRefusesDirtyWorktreeUnlessForced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dirty func(t *testing.T, dir string)
		first string
	}{
		{"modified file", func(t *testing.T, dir string) { gittest.Write(t, dir, "README", "changed\n") }, " M README"},
		{"staged file", func(t *testing.T, dir string) {
			gittest.Write(t, dir, "staged.txt", "s\n")
			gittest.Git(t, dir, "add", "staged.txt")
		}, "A  staged.txt"},
		{"untracked file", func(t *testing.T, dir string) { gittest.Write(t, dir, "notes/new.txt", "n\n") }, "?? notes/new.txt"},
		{"deleted file", func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "README"))) }, " D README"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.Init(t)
			wt := MustCreate(t, repo, "herd/task")
			tc.dirty(t, wt.Path)

			require.ErrorIs(t, worktree.Check(t.Context(), repo, wt.Path), worktree.ErrDirty)
			err := worktree.Remove(t.Context(), repo, wt.Path, false)
			require.ErrorIs(t, err, worktree.ErrDirty)
			require.ErrorContains(t, err, "worktree "+wt.Path+": worktree has uncommitted changes or untracked files (first: "+tc.first+")")
			require.DirExists(t, wt.Path)
			require.Len(t, listed(t, repo), 2)

			require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, true))
			require.NoDirExists(t, wt.Path)
			require.Len(t, listed(t, repo), 1)
			gittest.Git(t, repo, "rev-parse", "--verify", "herd/task")
		})
	}
}

func TestRemoveIgnoresIgnoredFiles(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, ".gitignore", "build/\n")
	gittest.Commit(t, repo, "ignore build")
	wt := MustCreate(t, repo, "herd/task")
	gittest.Write(t, wt.Path, "build/out.bin", "artefact")

	require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, false))
	require.NoDirExists(t, wt.Path)
}

func TestRemoveRefusesLockedWorktreeUnlessForced(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustCreate(t, repo, "herd/task")
	gittest.Git(t, repo, "worktree", "lock", "--reason", "on a USB disk", wt.Path)

	require.ErrorIs(t, worktree.Check(t.Context(), repo, wt.Path), worktree.ErrLocked)
	err := worktree.Remove(t.Context(), repo, wt.Path, false)
	require.ErrorIs(t, err, worktree.ErrLocked)
	require.ErrorContains(t, err, "worktree "+wt.Path+": worktree is locked (on a USB disk); unlock it")
	require.DirExists(t, wt.Path)

	require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, true))
	require.NoDirExists(t, wt.Path)
	require.Len(t, listed(t, repo), 1)
}

func TestRemoveVanishedWorktreeClearsGitsRecord(t *testing.T) {
	t.Run("unlocked", func(t *testing.T) {
		repo := gittest.Init(t)
		wt := MustCreate(t, repo, "herd/task")
		require.NoError(t, os.RemoveAll(wt.Path))

		require.NoError(t, worktree.Check(t.Context(), repo, wt.Path))
		require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, false))
		require.Len(t, listed(t, repo), 1)
		require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, false), "removing twice is not an error")
		gittest.Git(t, repo, "rev-parse", "--verify", "herd/task")
	})
	t.Run("locked", func(t *testing.T) {
		repo := gittest.Init(t)
		wt := MustCreate(t, repo, "herd/task")
		gittest.Git(t, repo, "worktree", "lock", wt.Path)
		require.NoError(t, os.RemoveAll(wt.Path))

		require.ErrorIs(t, worktree.Remove(t.Context(), repo, wt.Path, false), worktree.ErrLocked)
		require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, true))
		require.Len(t, listed(t, repo), 1)
	})
}

func TestRemoveThroughASymbolicLink(t *testing.T) {
	repo := gittest.Init(t)
	target := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(target, link))
	wt, err := worktree.Create(t.Context(), worktree.Spec{RepoPath: repo, Branch: "herd/task", Dir: filepath.Join(link, "task")})
	require.NoError(t, err)

	require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, false))
	require.NoDirExists(t, filepath.Join(target, "task"))
	require.Len(t, listed(t, repo), 1)
}

func TestRemoveRefusesWhatIsNotALinkedWorktree(t *testing.T) {
	repo := gittest.Init(t)
	MustCreate(t, repo, "herd/task")
	other := t.TempDir()

	require.ErrorIs(t, worktree.Check(t.Context(), repo, other), worktree.ErrNotWorktree)
	err := worktree.Remove(t.Context(), repo, other, true)
	require.ErrorIs(t, err, worktree.ErrNotWorktree)
	require.ErrorContains(t, err, "directory "+other+" in "+repo)
	require.DirExists(t, other)

	err = worktree.Remove(t.Context(), repo, repo, true)
	require.ErrorIs(t, err, worktree.ErrNotWorktree)
	require.ErrorContains(t, err, "is the main working tree of "+repo)
	require.FileExists(t, filepath.Join(repo, "README"))

	err = worktree.Remove(t.Context(), other, filepath.Join(other, "task"), true)
	require.ErrorIs(t, err, worktree.ErrNotRepository)
	require.ErrorIs(t, worktree.Check(t.Context(), other, filepath.Join(other, "task")), worktree.ErrNotRepository)
}

func TestDeleteBranchUndoesABranchWithoutCommitsOfItsOwn(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustCreate(t, repo, "herd/task")
	require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, true))

	require.NoError(t, worktree.DeleteBranch(t.Context(), repo, "herd/task"))
	require.Equal(t, "main", gittest.Git(t, repo, "branch", "--format=%(refname:short)"))
	require.NoError(t, worktree.DeleteBranch(t.Context(), repo, "herd/task"), "deleting twice is not an error")
}

func TestDeleteBranchKeepsCommits(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustCreate(t, repo, "herd/task")
	gittest.Write(t, wt.Path, "work.txt", "w\n")
	gittest.Commit(t, wt.Path, "work")
	head := gittest.Git(t, wt.Path, "rev-parse", "HEAD")

	err := worktree.DeleteBranch(t.Context(), repo, "herd/task")
	require.Error(t, err, "a checked-out branch stays")
	require.NoError(t, worktree.Remove(t.Context(), repo, wt.Path, false))

	err = worktree.DeleteBranch(t.Context(), repo, "herd/task")
	require.ErrorIs(t, err, worktree.ErrUnmerged)
	require.ErrorContains(t, err, `branch "herd/task" in `+repo)
	require.Equal(t, head, gittest.Git(t, repo, "rev-parse", "herd/task"))

	gittest.Git(t, repo, "tag", "kept", "herd/task")
	require.NoError(t, worktree.DeleteBranch(t.Context(), repo, "herd/task"), "a tag keeps the commits")
}
