package gitdiff_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/shared"
)

// repoState is what a snapshot must leave as it found it.
type repoState struct {
	index                               []byte
	status, stash, refs, head, headName string
}

func stateOf(t *testing.T, dir string) repoState {
	t.Helper()
	index, err := os.ReadFile(gittest.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	require.NoError(t, err)
	return repoState{
		index: index,
		// Without optional locks, status does not refresh and rewrite
		// the index it observes.
		status:   gittest.Git(t, dir, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all"),
		stash:    gittest.Git(t, dir, "stash", "list"),
		refs:     gittest.Git(t, dir, "for-each-ref"),
		head:     gittest.Git(t, dir, "rev-parse", "HEAD"),
		headName: gittest.Git(t, dir, "symbolic-ref", "HEAD"),
	}
}

func TestSnapshotHoldsTheWorkingTreeAndLeavesTheRepositoryAlone(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, ".gitignore", "*.log\n")
	gittest.Write(t, repo, "staged.txt", "s\n")
	gittest.Write(t, repo, "unstaged.txt", "u\n")
	gittest.Write(t, repo, "deleted.txt", "d\n")
	gittest.Write(t, repo, "stashed.txt", "before stash\n")
	gittest.Write(t, repo, "moved.txt", strings.Repeat("a line that moves with its file\n", 20))
	gittest.Commit(t, repo, "files")
	base := headTree(t, repo)
	gittest.Write(t, repo, "stashed.txt", "stashed away\n")
	gittest.Git(t, repo, "stash", "push", "--quiet")

	gittest.Write(t, repo, "staged.txt", "s\nstaged\n")
	gittest.Git(t, repo, "add", "staged.txt")
	gittest.Write(t, repo, "staged.txt", "s\nstaged\nthen changed again\n")
	gittest.Write(t, repo, "unstaged.txt", "u\nunstaged\n")
	require.NoError(t, os.Remove(filepath.Join(repo, "deleted.txt")))
	require.NoError(t, os.Rename(filepath.Join(repo, "moved.txt"), filepath.Join(repo, "renamed.txt")))
	gittest.Write(t, repo, "new/untracked.txt", "n\n")
	gittest.Write(t, repo, "debug.log", "ignored\n")
	before := stateOf(t, repo)

	tree := MustSnapshot(t, repo)

	require.Equal(t, before, stateOf(t, repo), "index bytes, status, stash, refs and HEAD are as they were")
	require.Equal(t, []string{".gitignore", "README", "new/untracked.txt", "renamed.txt", "staged.txt", "stashed.txt", "unstaged.txt"},
		strings.Split(gittest.Git(t, repo, "ls-tree", "-r", "--name-only", tree), "\n"),
		"untracked files are in, ignored and deleted ones out")
	require.Equal(t, "s\nstaged\nthen changed again", gittest.Git(t, repo, "show", tree+":staged.txt"), "files as on disk, not as staged")
	require.Equal(t, "before stash", gittest.Git(t, repo, "show", tree+":stashed.txt"))
	require.Equal(t, []shared.ReviewFile{
		{Path: "deleted.txt", Status: shared.FileDeleted, Deletions: 1},
		{Path: "new/untracked.txt", Status: shared.FileAdded, Additions: 1},
		{Path: "renamed.txt", OldPath: "moved.txt", Status: shared.FileRenamed},
		{Path: "staged.txt", Status: shared.FileModified, Additions: 2},
		{Path: "unstaged.txt", Status: shared.FileModified, Additions: 1},
	}, MustFiles(t, repo, base, tree).Files, "a file moved with plain mv shows as a rename")
}

func TestSnapshotLeavesNoTemporaryFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a.txt", "a\n")
	MustSnapshot(t, repo)
	_, _, err := gitdiff.SnapshotFiles(t.Context(), repo, headTree(t, repo), 0, 10)
	require.NoError(t, err)

	// A clean filter that fails, and is required, makes git add fail.
	gittest.Write(t, repo, ".gitattributes", "*.txt filter=broken\n")
	gittest.Git(t, repo, "config", "filter.broken.clean", "false")
	gittest.Git(t, repo, "config", "filter.broken.required", "true")
	_, err = gitdiff.Snapshot(t.Context(), repo)
	require.ErrorContains(t, err, "clean filter 'broken' failed", "git's own reason")

	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries, "the index's copy and its lock are gone after a success and a failure")
}

func TestSnapshotOfALinkedWorktreeUsesItsOwnIndex(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustWorktree(t, repo)
	gittest.Write(t, repo, "in-main.txt", "m\n")
	gittest.Git(t, repo, "add", "in-main.txt")
	gittest.Write(t, wt, "in-task.txt", "t\n")
	gittest.Git(t, wt, "add", "in-task.txt")
	gittest.Git(t, wt, "rm", "--quiet", "--cached", "README") // staged deletion, the file still on disk
	mainBefore, taskBefore := stateOf(t, repo), stateOf(t, wt)

	tree := MustSnapshot(t, wt)

	require.Equal(t, "README\nin-task.txt", gittest.Git(t, wt, "ls-tree", "--name-only", tree))
	require.Equal(t, mainBefore, stateOf(t, repo))
	require.Equal(t, taskBefore, stateOf(t, wt))
}

func TestSnapshotWritesNothingIntoTheRepositorysDirectory(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Git(t, repo, "config", "core.splitIndex", "true")
	gittest.Write(t, repo, "a.txt", "a\n")
	gittest.Commit(t, repo, "split index")
	gittest.Write(t, repo, "a.txt", "a\nb\n")
	gittest.Write(t, repo, "new.txt", "n\n")
	// The agent's git is adding: the index is locked.
	lock := filepath.Join(repo, ".git", "index.lock")
	require.NoError(t, os.WriteFile(lock, []byte("held"), 0o644))
	before := gitDirEntries(t, repo)

	tree := MustSnapshot(t, repo)

	require.Equal(t, "README\na.txt\nnew.txt", gittest.Git(t, repo, "ls-tree", "--name-only", tree))
	require.Equal(t, before, gitDirEntries(t, repo), "no shared index, no lock taken or removed")
}

// gitDirEntries lists the files of dir's git directory, objects aside.
func gitDirEntries(t *testing.T, dir string) []string {
	t.Helper()
	gitDir := filepath.Join(dir, ".git")
	var names []string
	err := filepath.WalkDir(gitDir, func(path string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() && d.Name() == "objects" {
			return filepath.SkipDir
		}
		names = append(names, path)
		return err
	})
	require.NoError(t, err)
	return names
}

func TestSnapshotOfADirectoryThatIsNoRepository(t *testing.T) {
	_, err := gitdiff.Snapshot(t.Context(), t.TempDir())
	require.ErrorContains(t, err, "not a git repository")
}

func TestSnapshotBeforeTheFirstAdd(t *testing.T) {
	repo := gittest.InitEmpty(t)
	gittest.Write(t, repo, "first.txt", "1\n")

	tree := MustSnapshot(t, repo)

	require.Equal(t, "first.txt", gittest.Git(t, repo, "ls-tree", "--name-only", tree))
	require.NoFileExists(t, filepath.Join(repo, ".git", "index"), "the repository still has no index")
}

func TestSnapshotSkipsWhatGitCannotAdd(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "README", "edited\n")
	// A nested repository without a commit cannot be added as a
	// submodule: plain git add -A fails on it.
	nested := filepath.Join(repo, "nested")
	gittest.Git(t, repo, "init", "--quiet", nested)
	gittest.Write(t, nested, "inner.txt", "i\n")

	tree := MustSnapshot(t, repo)

	require.Equal(t, "README", gittest.Git(t, repo, "ls-tree", "--name-only", tree))
	require.Equal(t, "edited", gittest.Git(t, repo, "show", tree+":README"))
}

func TestSnapshotSeesAChangeMadeInTheSecondTheIndexWasWritten(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Git(t, repo, "config", "core.trustctime", "false")
	file := filepath.Join(repo, "racy.txt")
	then := time.Now().Add(-time.Hour).Truncate(time.Second)
	gittest.Write(t, repo, "racy.txt", "aaaa\n")
	require.NoError(t, os.Chtimes(file, then, then))
	gittest.Git(t, repo, "add", "racy.txt")
	require.NoError(t, os.Chtimes(filepath.Join(repo, ".git", "index"), then, then))
	// Same size, same inode, same modification time as the index holds:
	// only the index's own time tells git to read the file again.
	require.NoError(t, os.WriteFile(file, []byte("bbbb\n"), 0o644))
	require.NoError(t, os.Chtimes(file, then, then))

	tree := MustSnapshot(t, repo)

	require.Equal(t, "bbbb", gittest.Git(t, repo, "show", tree+":racy.txt"))
}

func TestSnapshotsOfTurnsCompareOnlyWhatEachTurnChanged(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "first.txt", "turn one\n")
	start2 := MustSnapshot(t, wt) // the second turn starts
	gittest.Write(t, wt, "second.txt", "turn two\n")
	gittest.Write(t, wt, "first.txt", "turn one\nand two\n")
	end2 := MustSnapshot(t, wt)

	require.Equal(t, []shared.ReviewFile{
		{Path: "first.txt", Status: shared.FileModified, Additions: 1},
		{Path: "second.txt", Status: shared.FileAdded, Additions: 1},
	}, MustFiles(t, wt, start2, end2).Files)
	require.Equal(t, end2, MustSnapshot(t, wt), "an unchanged working tree snapshots to the same tree")
}

func TestBaseTreeIsTheMergeBasesTree(t *testing.T) {
	repo := gittest.Init(t)
	forked := headTree(t, repo)
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "task.txt", "t\n")
	gittest.Commit(t, wt, "task work")
	gittest.Write(t, repo, "main.txt", "main moved on\n")
	gittest.Commit(t, repo, "main work")

	tree, comparable, err := gitdiff.BaseTree(t.Context(), wt, "main")
	require.NoError(t, err)
	require.True(t, comparable)
	require.Equal(t, forked, tree, "the base's later commits are not the task's work")
}

func TestBaseTreeWithoutABaseToCompareWithIsHeads(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Git(t, repo, "switch", "--quiet", "--orphan", "unrelated")
	gittest.Write(t, repo, "other.txt", "o\n")
	gittest.Commit(t, repo, "unrelated history")
	gittest.Git(t, repo, "switch", "--quiet", "main")
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "committed.txt", "c\n")
	gittest.Commit(t, wt, "committed")
	head := headTree(t, wt)

	for _, base := range []string{"", "release", "unrelated", "--all", "HEAD~5"} {
		t.Run("base "+base, func(t *testing.T) {
			tree, comparable, err := gitdiff.BaseTree(t.Context(), wt, base)
			require.NoError(t, err)
			require.False(t, comparable)
			require.Equal(t, head, tree)
		})
	}
}

func TestBaseTreeBeforeTheFirstCommitIsTheEmptyTree(t *testing.T) {
	for format, empty := range map[string]string{
		"sha1":   gitdiff.EmptyTree,
		"sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
	} {
		t.Run(format, func(t *testing.T) {
			repo := t.TempDir()
			gittest.Git(t, repo, "init", "--quiet", "--object-format="+format)
			gittest.Write(t, repo, "new.txt", "n\n")

			tree, comparable, err := gitdiff.BaseTree(t.Context(), repo, "main")
			require.NoError(t, err)
			require.False(t, comparable)
			require.Equal(t, empty, tree)
			require.NoError(t, gitdiff.CheckTree(t.Context(), repo, tree))
			require.Equal(t, []shared.ReviewFile{{Path: "new.txt", Status: shared.FileAdded, Additions: 1}},
				MustFiles(t, repo, tree, MustSnapshot(t, repo)).Files)
		})
	}
}

func TestCheckTree(t *testing.T) {
	repo := gittest.Init(t)
	tree := headTree(t, repo)
	commit := gittest.Git(t, repo, "rev-parse", "HEAD")
	blob := gittest.Git(t, repo, "rev-parse", "HEAD:README")
	require.NoError(t, gitdiff.CheckTree(t.Context(), repo, tree))
	for name, id := range map[string]string{
		"short":        tree[:12],
		"upper case":   strings.ToUpper(tree),
		"a name":       "HEAD",
		"an option":    "--output=/tmp/x",
		"a revision":   tree[:39] + "^",
		"one too many": tree + "0",
		"very long":    strings.Repeat("a", 10_000),
		"empty":        "",
	} {
		t.Run(name, func(t *testing.T) { requireCode(t, shared.CodeBadRequest, gitdiff.CheckTree(t.Context(), repo, id)) })
	}
	for name, id := range map[string]string{
		"unknown":  strings.Repeat("0", 39) + "1",
		"a commit": commit,
		"a blob":   blob,
		"sha256":   strings.Repeat("ab", 32),
	} {
		t.Run(name, func(t *testing.T) { requireCode(t, shared.CodeNotFound, gitdiff.CheckTree(t.Context(), repo, id)) })
	}
	t.Run("not a repository", func(t *testing.T) {
		err := gitdiff.CheckTree(t.Context(), t.TempDir(), tree)
		require.ErrorContains(t, err, "not a git repository")
		require.Equal(t, shared.CodeInternal, shared.ErrorCode(err))
	})
}

func TestCancelledContextStopsTreesWork(t *testing.T) {
	repo := gittest.Init(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := gitdiff.Snapshot(ctx, repo)
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = gitdiff.BaseTree(ctx, repo, "main")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, gitdiff.CheckTree(ctx, repo, headTree(t, repo)), context.Canceled)
}
