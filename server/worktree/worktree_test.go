package worktree_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/worktree"
)

func TestCreateChecksOutANewBranchTheAgentCanWriteIn(t *testing.T) {
	repo := gittest.Init(t)
	branch := worktree.BranchName("0190f3a2-7c1e-7d4a-9b3f-5e2a1c0d8f64", "Fix the flaky login test")
	dir := filepath.Join(t.TempDir(), "worktrees", "task")

	wt, err := worktree.Create(t.Context(), worktree.Spec{RepoPath: repo, Branch: branch, Dir: dir})
	require.NoError(t, err)
	require.Equal(t, worktree.Worktree{Path: dir, Branch: "herd/1c0d8f64-fix-the-flaky-login-test", BaseBranch: "main"}, wt)

	require.Equal(t, branch, gittest.Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"))
	require.Equal(t, gittest.Git(t, repo, "rev-parse", "main"), gittest.Git(t, dir, "rev-parse", "HEAD"))
	require.FileExists(t, filepath.Join(dir, "README"))
	require.Error(t, exec.Command("git", "-C", dir, "config", "--get", "branch."+branch+".merge").Run(),
		"the new branch tracks nothing")

	gittest.Write(t, dir, "agent.txt", "written by the agent\n")
	gittest.Commit(t, dir, "agent work")
	require.NoFileExists(t, filepath.Join(repo, "agent.txt"), "the person's checkout is untouched")
	require.Equal(t, "main", gittest.Git(t, repo, "rev-parse", "--abbrev-ref", "HEAD"))
}

func TestCreateStartsFromTheNamedBaseBranch(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Git(t, repo, "switch", "--quiet", "--create", "develop")
	gittest.Write(t, repo, "develop.txt", "d\n")
	gittest.Commit(t, repo, "on develop")
	gittest.Git(t, repo, "switch", "--quiet", "main")

	wt, err := worktree.Create(t.Context(), worktree.Spec{
		RepoPath: repo, BaseBranch: "develop", Branch: "herd/task", Dir: filepath.Join(t.TempDir(), "task"),
	})
	require.NoError(t, err)
	require.Equal(t, "develop", wt.BaseBranch)
	require.Equal(t, gittest.Git(t, repo, "rev-parse", "develop"), gittest.Git(t, wt.Path, "rev-parse", "HEAD"))
	require.FileExists(t, filepath.Join(wt.Path, "develop.txt"))
}

func TestCreateIntoAnEmptyExistingDirectory(t *testing.T) {
	repo := gittest.Init(t)
	dir := t.TempDir()
	wt, err := worktree.Create(t.Context(), worktree.Spec{RepoPath: repo, Branch: "herd/task", Dir: dir})
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(wt.Path, "README"))
}

func TestCreateRefusesWithAnErrorAPersonCanActOn(t *testing.T) {
	plainDir := t.TempDir()
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	busyDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(busyDir, "keep"), []byte("x"), 0o644))
	missing := filepath.Join(t.TempDir(), "missing")

	repo := gittest.Init(t)
	gittest.Git(t, repo, "branch", "herd/taken")
	empty := gittest.InitEmpty(t)
	detached := gittest.Init(t)
	gittest.Git(t, detached, "switch", "--quiet", "--detach")

	for _, tc := range []struct {
		name    string
		spec    worktree.Spec
		want    error
		message string
	}{
		{"repository path does not exist", worktree.Spec{RepoPath: missing},
			worktree.ErrNotRepository, "repository " + missing + " does not exist: not a git repository"},
		{"repository path is a plain directory", worktree.Spec{RepoPath: plainDir},
			worktree.ErrNotRepository, "repository " + plainDir + ": not a git repository: git rev-parse --git-dir: fatal: not a git repository"},
		{"repository path is a file", worktree.Spec{RepoPath: file},
			worktree.ErrNotRepository, "repository " + file + " is not a directory"},
		{"repository has no commits", worktree.Spec{RepoPath: empty},
			worktree.ErrNoCommits, "repository " + empty + ": repository has no commits; commit once before starting a task"},
		{"repository has no commits and a base is named", worktree.Spec{RepoPath: empty, BaseBranch: "main"},
			worktree.ErrNoCommits, empty},
		{"base branch missing", worktree.Spec{RepoPath: repo, BaseBranch: "release"},
			worktree.ErrBaseBranchMissing, `base branch "release" not found in ` + repo},
		{"base branch looks like an option", worktree.Spec{RepoPath: repo, BaseBranch: "--all"},
			worktree.ErrBaseBranchMissing, `base branch "--all" not found`},
		{"HEAD detached and no base named", worktree.Spec{RepoPath: detached},
			worktree.ErrBaseBranchMissing, "HEAD of " + detached + " is detached"},
		{"branch name invalid", worktree.Spec{RepoPath: repo, Branch: "herd/a..b"},
			worktree.ErrInvalidBranch, `branch "herd/a..b": invalid branch name`},
		{"branch name is a shorthand", worktree.Spec{RepoPath: repo, Branch: "@{-1}"},
			worktree.ErrInvalidBranch, `branch "@{-1}"`},
		{"branch name is an option", worktree.Spec{RepoPath: repo, Branch: "-f"},
			worktree.ErrInvalidBranch, `branch "-f"`},
		{"branch exists", worktree.Spec{RepoPath: repo, Branch: "herd/taken"},
			worktree.ErrBranchExists, `branch "herd/taken" in ` + repo + ": branch already exists"},
		{"directory not empty", worktree.Spec{RepoPath: repo, Dir: busyDir},
			worktree.ErrDirExists, "worktree directory " + busyDir + ": directory exists and is not empty"},
		{"directory is a file", worktree.Spec{RepoPath: repo, Dir: file},
			worktree.ErrDirExists, "worktree directory " + file},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec.Branch == "" {
				spec.Branch = "herd/new"
			}
			if spec.Dir == "" {
				spec.Dir = filepath.Join(t.TempDir(), "task")
			}
			_, err := worktree.Create(t.Context(), spec)
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.message)
			if spec.Dir != busyDir && spec.Dir != file {
				require.NoDirExists(t, spec.Dir, "a refused worktree leaves nothing behind")
			}
		})
	}
	require.Equal(t, "herd/taken\nmain", gittest.Git(t, repo, "branch", "--format=%(refname:short)"),
		"refusals create no branch")
}

func TestCreateRequiresEveryPath(t *testing.T) {
	for _, spec := range []worktree.Spec{
		{Branch: "b", Dir: "d"},
		{RepoPath: "r", Dir: "d"},
		{RepoPath: "r", Branch: "b"},
	} {
		_, err := worktree.Create(t.Context(), spec)
		require.ErrorContains(t, err, "is empty")
	}
}

func TestBranchName(t *testing.T) {
	const id = "0190f3a2-7c1e-7d4a-9b3f-5e2a1c0d8f64"
	for _, tc := range []struct {
		name, taskID, title, want string
	}{
		{"words are lowercased and joined", id, "Fix the Login bug", "herd/1c0d8f64-fix-the-login-bug"},
		{"punctuation runs become one dash", id, "  feat: add --verbose (CLI)!! ", "herd/1c0d8f64-feat-add-verbose-cli"},
		{"non-ASCII letters are dropped", id, "Résumé für Ünïcode", "herd/1c0d8f64-r-sum-f-r-n-code"},
		{"empty title", id, "", "herd/1c0d8f64"},
		{"title without letters or digits", id, "¿…?", "herd/1c0d8f64"},
		{"long title is cut at the end of a word", id,
			"Refactor the session manager so that queued prompts survive a restart",
			"herd/1c0d8f64-refactor-the-session-manager-so-that"},
		{"long title cut right before a word", id,
			"Refactor the session manager so that que and more",
			"herd/1c0d8f64-refactor-the-session-manager-so-that-que"},
		{"one long word is cut", id, strings.Repeat("a", 50), "herd/1c0d8f64-" + strings.Repeat("a", 40)},
		{"short task id", "42", "x", "herd/42-x"},
		{"tasks created in the same minute differ", "0190f3a2-7c1e-7d4a-9b3f-aaaaaaaaaaaa", "x", "herd/aaaaaaaa-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := worktree.BranchName(tc.taskID, tc.title)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), len("herd/")+8+1+40)
			gittest.Git(t, t.TempDir(), "check-ref-format", "--branch", got)
		})
	}
}

func TestResolveBase(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Git(t, repo, "branch", "develop")
	empty := gittest.InitEmpty(t)
	for _, tc := range []struct {
		name, repo, base, want string
		err                    error
	}{
		{"HEAD's branch", repo, "", "main", nil},
		{"named branch", repo, "develop", "develop", nil},
		{"missing branch", repo, "release", "", worktree.ErrBaseBranchMissing},
		{"no commits", empty, "", "", worktree.ErrNoCommits},
		{"not a repository", t.TempDir(), "", "", worktree.ErrNotRepository},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := worktree.ResolveBase(t.Context(), tc.repo, tc.base)
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.want, got)
		})
	}
}
