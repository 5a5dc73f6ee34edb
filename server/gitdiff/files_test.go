package gitdiff_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/shared"
)

// taskRepo is a task's worktree with every kind of change, and the trees
// to compare: its base and a snapshot of its working tree.
type taskRepo struct {
	dir, base, tree string
}

func newTaskRepo(t *testing.T) taskRepo {
	t.Helper()
	repo := gittest.Init(t)
	gittest.Write(t, repo, "edited.go", "package a\n\nfunc A() {}\n")
	gittest.Write(t, repo, "deleted.txt", "gone\nsoon\n")
	gittest.Write(t, repo, "old/name.txt", strings.Repeat("moved, not changed\n", 10))
	gittest.Write(t, repo, "image.png", "\x89PNG\x00\x01\x02")
	gittest.Write(t, repo, "link", "a regular file, then a link\n")
	gittest.Commit(t, repo, "files")
	wt := MustWorktree(t, repo)

	gittest.Write(t, wt, "edited.go", "package a\n\nfunc A() { B() }\n\nfunc B() {}\n")
	gittest.Commit(t, wt, "committed edit")
	require.NoError(t, os.Remove(filepath.Join(wt, "deleted.txt")))
	require.NoError(t, os.MkdirAll(filepath.Join(wt, "new"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(wt, "old", "name.txt"), filepath.Join(wt, "new", "name.txt")))
	gittest.Write(t, wt, "image.png", "\x89PNG\x00\x03\x04")
	require.NoError(t, os.Remove(filepath.Join(wt, "link")))
	require.NoError(t, os.Symlink("edited.go", filepath.Join(wt, "link")))
	gittest.Write(t, wt, "untracked.txt", "one\ntwo\n")

	base, comparable, err := gitdiff.BaseTree(t.Context(), wt, "main")
	require.NoError(t, err)
	require.True(t, comparable)
	return taskRepo{dir: wt, base: base, tree: MustSnapshot(t, wt)}
}

func TestFilesOfATaskWithEveryKindOfChange(t *testing.T) {
	r := newTaskRepo(t)
	require.Equal(t, gitdiff.Listing{
		Files: []shared.ReviewFile{
			{Path: "deleted.txt", Status: shared.FileDeleted, Deletions: 2},
			{Path: "edited.go", Status: shared.FileModified, Additions: 3, Deletions: 1},
			{Path: "image.png", Status: shared.FileModified, Binary: true},
			{Path: "link", Status: shared.FileTypeChanged, Additions: 1, Deletions: 1},
			{Path: "new/name.txt", OldPath: "old/name.txt", Status: shared.FileRenamed},
			{Path: "untracked.txt", Status: shared.FileAdded, Additions: 2},
		},
		Total: 6, Additions: 6, Deletions: 4,
	}, MustFiles(t, r.dir, r.base, r.tree))
}

func TestSnapshotFilesIsSnapshotThenFiles(t *testing.T) {
	r := newTaskRepo(t)
	before := stateOf(t, r.dir)
	for _, page := range [][2]int{{0, 1000}, {0, 2}, {2, 2}, {5, 2}} {
		tree, l, err := gitdiff.SnapshotFiles(t.Context(), r.dir, r.base, page[0], page[1])
		require.NoError(t, err)
		require.Equal(t, r.tree, tree)
		want, err := gitdiff.Files(t.Context(), r.dir, r.base, r.tree, page[0], page[1])
		require.NoError(t, err)
		require.Equal(t, want, l)
	}
	require.Equal(t, before, stateOf(t, r.dir))

	_, _, err := gitdiff.SnapshotFiles(t.Context(), r.dir, "main", 0, 10)
	requireCode(t, shared.CodeBadRequest, err)
	_, _, err = gitdiff.SnapshotFiles(t.Context(), r.dir, strings.Repeat("0", 39)+"1", 0, 10)
	requireCode(t, shared.CodeNotFound, err)
	_, _, err = gitdiff.SnapshotFiles(t.Context(), r.dir, r.base, 0, -1)
	requireCode(t, shared.CodeBadRequest, err)
}

func TestFilesPagesListOneComparison(t *testing.T) {
	repo := gittest.Init(t)
	base := headTree(t, repo)
	var want []shared.ReviewFile
	for i := range 25 {
		name := fmt.Sprintf("f%02d.txt", i)
		gittest.Write(t, repo, name, strings.Repeat("x\n", i+1))
		want = append(want, shared.ReviewFile{Path: name, Status: shared.FileAdded, Additions: i + 1})
	}
	tree := MustSnapshot(t, repo)
	const additions = 25 * 26 / 2

	var got []shared.ReviewFile
	for offset := 0; offset < 30; offset += 10 {
		l, err := gitdiff.Files(t.Context(), repo, base, tree, offset, 10)
		require.NoError(t, err)
		require.Equal(t, 25, l.Total, "totals count the whole comparison on every page")
		require.Equal(t, additions, l.Additions)
		require.Zero(t, l.Deletions)
		require.Len(t, l.Files, min(10, 25-offset))
		got = append(got, l.Files...)
	}
	require.Equal(t, want, got)

	l, err := gitdiff.Files(t.Context(), repo, base, tree, 25, 10)
	require.NoError(t, err)
	require.Equal(t, gitdiff.Listing{Files: []shared.ReviewFile{}, Total: 25, Additions: additions}, l, "past the end: no files, the totals")
}

func TestFilesLimitDefaultsAndBounds(t *testing.T) {
	repo := gittest.Init(t)
	base := headTree(t, repo)
	for i := range shared.DefaultReviewFiles + 1 {
		gittest.Write(t, repo, fmt.Sprintf("f%03d", i), "x\n")
	}
	tree := MustSnapshot(t, repo)

	l, err := gitdiff.Files(t.Context(), repo, base, tree, 0, 0)
	require.NoError(t, err)
	require.Len(t, l.Files, shared.DefaultReviewFiles, "a zero limit is the default page")
	require.Equal(t, shared.DefaultReviewFiles+1, l.Total)

	for name, bounds := range map[string][2]int{"negative offset": {-1, 10}, "negative limit": {0, -1}} {
		t.Run(name, func(t *testing.T) {
			_, err := gitdiff.Files(t.Context(), repo, base, tree, bounds[0], bounds[1])
			requireCode(t, shared.CodeBadRequest, err)
		})
	}
}

// awkwardNames are file names that must reach git and come back as they
// are: no quoting, no pathspec magic, no option.
var awkwardNames = []string{
	"with space.txt", "ünïcødé/файл.txt", "new\nline.txt", "tab\there.txt", "-p", "--output=x",
	":(top)magic", "*", "[ab].txt", `back\slash`, `"quoted"`, "trailing space ",
}

func TestFilesNamesAreBytesNotPatterns(t *testing.T) {
	repo := gittest.Init(t)
	base := headTree(t, repo)
	var want []shared.ReviewFile
	for _, name := range awkwardNames {
		gittest.Write(t, repo, name, name+"\n")
		want = append(want, shared.ReviewFile{Path: name, Status: shared.FileAdded, Additions: strings.Count(name, "\n") + 1})
	}
	gittest.Commit(t, repo, "awkward names")
	committed := headTree(t, repo)

	l := MustFiles(t, repo, base, committed)
	require.ElementsMatch(t, want, l.Files)
	for i := 1; i < len(l.Files); i++ {
		require.Less(t, l.Files[i-1].Path, l.Files[i].Path, "path order")
	}

	// A rename between two awkward names spells numstat's paths apart.
	require.NoError(t, os.Rename(filepath.Join(repo, "with space.txt"), filepath.Join(repo, "-->\tmoved")))
	require.Equal(t, []shared.ReviewFile{{Path: "-->\tmoved", OldPath: "with space.txt", Status: shared.FileRenamed}},
		MustFiles(t, repo, committed, MustSnapshot(t, repo)).Files)
}

func TestFilesOfBadTrees(t *testing.T) {
	repo := gittest.Init(t)
	tree := headTree(t, repo)
	unknown := strings.Repeat("0", 39) + "1"
	for name, c := range map[string]struct {
		from, to string
		code     shared.Code
	}{
		"malformed from": {"HEAD", tree, shared.CodeBadRequest},
		"malformed to":   {tree, "--output=/tmp/x", shared.CodeBadRequest},
		"unknown from":   {unknown, tree, shared.CodeNotFound},
		"unknown to":     {tree, unknown, shared.CodeNotFound},
		"a blob":         {tree, gittest.Git(t, repo, "rev-parse", "HEAD:README"), shared.CodeNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gitdiff.Files(t.Context(), repo, c.from, c.to, 0, 10)
			requireCode(t, c.code, err)
		})
	}
}

func TestFilesStopWithTheirContext(t *testing.T) {
	r := newTaskRepo(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := gitdiff.Files(ctx, r.dir, r.base, r.tree, 0, 10)
	require.ErrorIs(t, err, context.Canceled)
}
