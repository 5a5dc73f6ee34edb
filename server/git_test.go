package server_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// newRepoTask creates a task on a fresh repository with a worktree, and a
// running mock session of it that c follows.
func newRepoTask(t *testing.T, c *wsClient, repo string) (task, session map[string]any) {
	t.Helper()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task = c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "Fix the login page",
		"repositories": []any{map[string]any{"path": repo}},
	})
	session = c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "mock"})
	require.Equal(t, true, c.call("session.subscribe", map[string]any{"session_id": session["id"]})["joined"])
	awaitState(t, c, session["id"], "WAITING_FOR_INPUT")
	return task, session
}

func TestAgentRunsInTheTasksWorktreeAndItsTotalsReachRowAndSession(t *testing.T) {
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	repo := gittest.Init(t)
	task, session := newRepoTask(t, owner, repo)

	r := task["repositories"].([]any)[0].(map[string]any)
	short := task["id"].(string)[len(task["id"].(string))-8:]
	assert.Equal(t, "herd/"+short+"-fix-the-login-page", r["branch"])
	assert.Equal(t, "main", r["base_branch"], "the base defaults to HEAD's branch")
	worktree := r["worktree_path"].(string)
	require.DirExists(t, worktree)
	assert.Equal(t, r["branch"], gittest.Git(t, worktree, "branch", "--show-current"))

	feed := follower(t, srv, task["workspace_id"])
	owner.call("session.focus", map[string]any{"session_id": session["id"]})
	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "w-1", "content": "/scenario write notes/today.md hello"})

	// The agent wrote in the worktree, not in the repository.
	update := awaitSessionEvent(t, owner, "session.git.updated", func(n map[string]any) bool {
		g := n["repositories"].([]any)[0].(map[string]any)
		return g["changed_files"] == 1.0
	})
	g := update["repositories"].([]any)[0].(map[string]any)
	assert.Equal(t, r["id"], g["repository_id"])
	assert.Equal(t, 1.0, g["additions"])
	assert.Equal(t, 0.0, g["ahead"])
	assert.NotEmpty(t, g["observed_at"])
	assert.FileExists(t, filepath.Join(worktree, "notes", "today.md"))
	assert.NoFileExists(t, filepath.Join(repo, "notes", "today.md"))

	sum := awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		git, _ := s["git"].(map[string]any)
		return git != nil && git["changed_files"] == 1.0
	})
	assert.Equal(t, map[string]any{"additions": 1.0, "deletions": 0.0, "changed_files": 1.0, "ahead": 0.0, "behind": 0.0}, sum["git"])

	// A commit in the worktree moves it ahead of its base; a refresh
	// observes it without the agent.
	gittest.Commit(t, worktree, "notes")
	assert.Equal(t, map[string]any{}, owner.call("session.git.refresh", map[string]any{"session_id": session["id"]}))
	awaitSessionEvent(t, owner, "session.git.updated", func(n map[string]any) bool {
		return n["repositories"].([]any)[0].(map[string]any)["ahead"] == 1.0
	})
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		git, _ := s["git"].(map[string]any)
		return git != nil && git["ahead"] == 1.0 && git["changed_files"] == 1.0
	})

	// A new subscriber's snapshot carries the latest observation.
	other := MustDial(t, srv, nil)
	snap := other.call("session.subscribe", map[string]any{"session_id": session["id"]})["snapshot"].(map[string]any)
	got := snap["git"].([]any)[0].(map[string]any)
	assert.Equal(t, 1.0, got["ahead"])
	assert.Equal(t, 1.0, got["additions"])
}

func TestArchiveGuardsUncommittedWorkInTheWorktree(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	repo := gittest.Init(t)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "guarded", "repositories": []any{map[string]any{"path": repo}},
	})
	r := task["repositories"].([]any)[0].(map[string]any)
	worktree, branch := r["worktree_path"].(string), r["branch"].(string)
	gittest.Write(t, worktree, "draft.txt", "unsaved work\n")

	e := c.callErr("task.archive", map[string]any{"task_id": task["id"]}, "conflict")
	assert.Contains(t, e["message"], "uncommitted changes")
	assert.FileExists(t, filepath.Join(worktree, "draft.txt"), "a refused archive removes nothing")
	assert.Equal(t, false, c.call("task.get", map[string]any{"task_id": task["id"]})["archived"])

	gittest.Commit(t, worktree, "keep the draft")
	archived := c.call("task.archive", map[string]any{"task_id": task["id"]})
	assert.Equal(t, true, archived["archived"])
	assert.NoDirExists(t, worktree)
	assert.Equal(t, branch, gittest.Git(t, repo, "branch", "--list", branch, "--format=%(refname:short)"), "the branch and its commit stay")
	assert.Equal(t, "keep the draft", gittest.Git(t, repo, "log", "-1", "--format=%s", branch))

	// Forced: the worktree goes with its uncommitted work.
	forced := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "forced", "repositories": []any{map[string]any{"path": repo}},
	})
	dir := forced["repositories"].([]any)[0].(map[string]any)["worktree_path"].(string)
	gittest.Write(t, dir, "scratch.txt", "throwaway\n")
	assert.Equal(t, true, c.call("task.archive", map[string]any{"task_id": forced["id"], "force": true})["archived"])
	assert.NoDirExists(t, dir)
}

func TestTaskCreateRefusesBadRepositoriesAndLeavesNothing(t *testing.T) {
	dataDir := t.TempDir()
	srv := MustStart(t, func(cfg *server.Config, _ *server.Options) { cfg.DataDir = dataDir })
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	repo := gittest.Init(t)
	plain := t.TempDir()
	tests := []struct {
		name  string
		repos []any
		code  string
		says  string
	}{
		{"not a repository", []any{map[string]any{"path": plain}}, "bad_request", "not a git repository"},
		{"missing base branch", []any{map[string]any{"path": repo, "base_branch": "release"}}, "bad_request", "base branch \"release\" not found"},
		{"a good repository, then a bad one", []any{map[string]any{"path": repo}, map[string]any{"path": plain}}, "bad_request", "repositories[1]"},
		{"empty repository", []any{map[string]any{"path": gittest.InitEmpty(t)}}, "bad_request", "no commits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := c.callErr("task.create", map[string]any{"workspace_id": ws["id"], "title": "t", "repositories": tt.repos}, tt.code)
			assert.Contains(t, e["message"], tt.says)
		})
	}
	assert.Empty(t, c.call("task.list", map[string]any{"workspace_id": ws["id"]})["tasks"], "no task was created")
	assert.Equal(t, "main", gittest.Git(t, repo, "branch", "--format=%(refname:short)"), "no branch was left behind")
	assert.Equal(t, 1, strings.Count(gittest.Git(t, repo, "worktree", "list", "--porcelain"), "worktree "), "no worktree was left behind")
	entries, err := os.ReadDir(filepath.Join(dataDir, "worktrees"))
	if err == nil {
		assert.Empty(t, entries, "no worktree directory was left behind")
	}

	inPlace := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "in place", "repositories": []any{map[string]any{"path": repo, "run_in_place": true}},
	})
	r := inPlace["repositories"].([]any)[0].(map[string]any)
	assert.Equal(t, true, r["run_in_place"])
	assert.Nil(t, r["worktree_path"])
	assert.Equal(t, "main", r["base_branch"])
}

// sign signs a webhook payload as GitHub does.
func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// deliver posts a webhook delivery and returns the status.
func deliver(t *testing.T, srv *server.Server, id, event, signature string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+srv.Addr()+"/api/v1/github/webhook", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-GitHub-Event", event)
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestSignedWebhookFlipsTheRowsPullRequestBadge(t *testing.T) {
	const secret = "s3cret"
	srv := MustStart(t, func(cfg *server.Config, _ *server.Options) { cfg.GitHubWebhookSecret = secret })
	c := MustDial(t, srv, nil)
	repo := gittest.Init(t)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "PR task", "repositories": []any{map[string]any{"path": repo}},
	})
	branch := task["repositories"].([]any)[0].(map[string]any)["branch"].(string)
	feed := follower(t, srv, ws["id"])

	recorded, err := os.ReadFile("github/testdata/pull_request_opened.json")
	require.NoError(t, err)
	body := bytes.ReplaceAll(recorded, []byte(`"ref": "herd/0190a1b2-fix-login"`), []byte(`"ref": "`+branch+`"`))
	require.NotEqual(t, recorded, body, "the recorded payload names a head branch")

	// A wrongly signed delivery is refused and changes nothing.
	assert.Equal(t, http.StatusUnauthorized, deliver(t, srv, "d-1", "pull_request", sign("wrong", body), body))
	assert.Equal(t, http.StatusUnauthorized, deliver(t, srv, "d-1", "pull_request", "", body))
	got := c.call("task.get", map[string]any{"task_id": task["id"]})["status_summary"].(map[string]any)
	assert.Nil(t, got["pull_request"])

	assert.Equal(t, http.StatusOK, deliver(t, srv, "d-1", "pull_request", sign(secret, body), body))
	sum := awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["pull_request"] != nil })
	pr := sum["pull_request"].(map[string]any)
	assert.Equal(t, 42.0, pr["number"])
	assert.Equal(t, 1.0, pr["open_count"])
	assert.Equal(t, "https://github.com/octo-org/herd-demo/pull/42", pr["url"])

	// A replay of the same delivery is accepted and applied once.
	assert.Equal(t, http.StatusOK, deliver(t, srv, "d-1", "pull_request", sign(secret, body), body))
}

func TestWebhookIsMissingWithoutASecret(t *testing.T) {
	srv := MustStart(t, nil)
	body := []byte(`{"zen":"hi"}`)
	assert.Equal(t, http.StatusNotFound, deliver(t, srv, "d-1", "ping", sign("x", body), body))
}

func TestRowTotalsAggregateEveryRepositoryOfTheTask(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	first, second := gittest.Init(t), gittest.Init(t)
	gittest.Git(t, second, "branch", "feature")
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	feed := follower(t, srv, ws["id"])
	task := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "two repos",
		"repositories": []any{map[string]any{"path": first}, map[string]any{"path": second, "base_branch": "feature"}},
	})
	repos := task["repositories"].([]any)
	a, b := repos[0].(map[string]any)["worktree_path"].(string), repos[1].(map[string]any)["worktree_path"].(string)
	session := c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "mock"})
	refresh := func() { c.call("session.git.refresh", map[string]any{"session_id": session["id"]}) }
	gitOf := func(s map[string]any) map[string]any { g, _ := s["git"].(map[string]any); return g }

	gittest.Write(t, a, "one.txt", "1\n2\n")
	gittest.Write(t, b, "two.txt", "1\n")
	gittest.Commit(t, b, "two")
	// Observations may catch the trees mid-change (the one made at
	// creation runs meanwhile): wait for the totals of the final trees.
	awaitGit := func(want map[string]any) {
		t.Helper()
		refresh()
		awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return assert.ObjectsAreEqual(want, gitOf(s)) })
	}
	awaitGit(map[string]any{"additions": 3.0, "deletions": 0.0, "changed_files": 2.0, "ahead": 1.0, "behind": 0.0})

	// Only the first repository changes: the second one's totals stay in.
	gittest.Write(t, a, "README", "herd\nmore\n")
	awaitGit(map[string]any{"additions": 4.0, "deletions": 0.0, "changed_files": 3.0, "ahead": 1.0, "behind": 0.0})

	// The second repository's base disappears: its comparison is
	// unavailable, its uncommitted work (none) still counts, ahead and
	// behind leave it out.
	gittest.Git(t, second, "branch", "--delete", "--force", "feature")
	awaitGit(map[string]any{"additions": 3.0, "deletions": 0.0, "changed_files": 2.0, "ahead": 0.0, "behind": 0.0, "comparison_unavailable": true})
}

func TestExplicitPullRequestLinkMovesThePullRequest(t *testing.T) {
	const secret = "s3cret"
	srv := MustStart(t, func(cfg *server.Config, _ *server.Options) { cfg.GitHubWebhookSecret = secret })
	c := MustDial(t, srv, nil)
	repo := gittest.Init(t)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	feed := follower(t, srv, ws["id"])
	byBranch := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "branch owner", "repositories": []any{map[string]any{"path": repo}},
	})
	other := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "linked by hand"})
	branch := byBranch["repositories"].([]any)[0].(map[string]any)["branch"].(string)
	recorded, err := os.ReadFile("github/testdata/pull_request_opened.json")
	require.NoError(t, err)
	body := bytes.ReplaceAll(recorded, []byte(`"ref": "herd/0190a1b2-fix-login"`), []byte(`"ref": "`+branch+`"`))
	require.Equal(t, http.StatusOK, deliver(t, srv, "d-1", "pull_request", sign(secret, body), body))
	awaitSummary(t, feed, byBranch["id"], func(s map[string]any) bool { return s["pull_request"] != nil })

	c.callErr("task.update", map[string]any{"task_id": other["id"], "pull_request_url": "http://github.com/o/r/pull/1"}, "bad_request")
	c.callErr("task.update", map[string]any{"task_id": other["id"], "pull_request_url": "https://github.com/o/r/issues/1"}, "bad_request")
	const link = "https://github.com/octo-org/herd-demo/pull/42"
	updated := c.call("task.update", map[string]any{"task_id": other["id"], "pull_request_url": link})
	assert.Equal(t, link, updated["pull_request_url"])

	// The link wins over the branch: the pull request moves at once, and
	// both rows change.
	awaitSummary(t, feed, other["id"], func(s map[string]any) bool {
		pr, _ := s["pull_request"].(map[string]any)
		return pr != nil && pr["number"] == 42.0
	})
	require.Eventually(t, func() bool {
		got := c.call("task.get", map[string]any{"task_id": byBranch["id"]})["status_summary"].(map[string]any)
		return got["pull_request"] == nil
	}, 5*time.Second, 10*time.Millisecond, "the branch's task loses the pull request")
}

func TestDemoWorkspaceHasATaskOnADemoRepository(t *testing.T) {
	dataDir := t.TempDir()
	srv := MustStart(t, func(cfg *server.Config, _ *server.Options) { cfg.DataDir, cfg.Demo = dataDir, true })
	c := MustDial(t, srv, nil)
	boot := c.call("boot", nil)
	var repos []any
	for _, task := range boot["tasks"].([]any) {
		task := task.(map[string]any)
		if rs := task["repositories"].([]any); len(rs) > 0 {
			require.Nil(t, repos, "one demo task has a repository")
			repos = rs
			assert.Contains(t, task["description"], "/scenario write")
		}
	}
	require.Len(t, repos, 1)
	r := repos[0].(map[string]any)
	assert.Equal(t, filepath.Join(dataDir, "demo-repo"), r["path"])
	assert.Equal(t, "main", r["base_branch"])
	assert.DirExists(t, r["worktree_path"].(string))
	assert.Equal(t, "Start the demo project", gittest.Git(t, r["path"].(string), "log", "-1", "--format=%s"))
}

func TestArchiveEndsTheTasksSessionsAndStopsTheirAgents(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	before := agentProcesses(t)
	task, _ := newRepoTask(t, c, gittest.Init(t)) // a session waiting for input
	busy := c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "mock"})
	c.call("session.subscribe", map[string]any{"session_id": busy["id"]})
	awaitState(t, c, busy["id"], "WAITING_FOR_INPUT")
	c.call("message.add", map[string]any{"session_id": busy["id"], "client_message_id": "long", "content": "/scenario sleep 60000"})
	awaitState(t, c, busy["id"], "RUNNING")
	require.Equal(t, before+2, agentProcesses(t))

	e := c.callErr("task.archive", map[string]any{"task_id": task["id"]}, "conflict")
	assert.Contains(t, e["message"], "running session")

	assert.Equal(t, true, c.call("task.archive", map[string]any{"task_id": task["id"], "force": true})["archived"])
	sessions := c.call("session.list", map[string]any{"task_id": task["id"]})["sessions"].([]any)
	for _, s := range sessions {
		s := s.(map[string]any)
		assert.Equal(t, "COMPLETED", s["state"], "session %s", s["id"])
	}
	require.Eventually(t, func() bool { return agentProcesses(t) == before }, 10*time.Second, 20*time.Millisecond,
		"the archived task's agents stop")
}
