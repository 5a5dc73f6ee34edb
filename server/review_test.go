package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/shared"
)

// prompt sends a prompt to a session c follows and waits for its turn to
// settle.
func prompt(t *testing.T, c *wsClient, session map[string]any, clientID, content string) {
	t.Helper()
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": clientID, "content": content})
	require.Equal(t, "end_turn", awaitSettled(t, c), "turn of %s", clientID)
}

// reviewFiles asks for a page of a repository's changed files and returns
// it with its files as "status path" (renames "renamed old -> new").
func reviewFiles(t *testing.T, c *wsClient, req map[string]any) (page map[string]any, listed []string) {
	t.Helper()
	page = c.call("review.files", req)
	for _, f := range page["files"].([]any) {
		f := f.(map[string]any)
		name := f["path"].(string)
		if old, ok := f["old_path"].(string); ok {
			name = old + " -> " + name
		}
		listed = append(listed, f["status"].(string)+" "+name)
	}
	return page, listed
}

// repoOf returns the id and worktree of a task's only repository.
func repoOf(task map[string]any) (id, worktree string) {
	r := task["repositories"].([]any)[0].(map[string]any)
	return r["id"].(string), r["worktree_path"].(string)
}

// Two turns each write a file. Review lists the turns newest first with
// their prompts; the task's changes hold both files, the newest turn's
// only the second, the first turn's only the first; later pages repeat
// the first page's trees and continue it.
func TestReviewTellsATasksTurnsApart(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	task, session := newRepoTask(t, c, gittest.Init(t))
	repo, _ := repoOf(task)
	prompt(t, c, session, "t-1", "/scenario write a.txt one")
	prompt(t, c, session, "t-2", "/scenario write b.txt two")

	review := c.call("review.get", map[string]any{"task_id": task["id"]})
	assert.Equal(t, session["id"], review["session_id"])
	assert.Equal(t, "wrote 3 bytes to b.txt", review["draft_message"], "the agent's last message is the draft")
	assert.Equal(t, false, review["pull_requests"], "no GitHub token")
	turns := review["turns"].([]any)
	require.Len(t, turns, 2)
	newest, first := turns[0].(map[string]any), turns[1].(map[string]any)
	assert.Equal(t, "/scenario write b.txt two", newest["prompt"], "newest first")
	assert.Equal(t, "/scenario write a.txt one", first["prompt"])
	assert.Equal(t, session["id"], first["session_id"])
	repos := review["repositories"].([]any)
	require.Len(t, repos, 1)
	r := repos[0].(map[string]any)
	assert.Equal(t, repo, r["repository_id"])
	assert.Equal(t, "main", r["base_branch"])
	assert.Equal(t, task["repositories"].([]any)[0].(map[string]any)["branch"], r["branch"])
	assert.Equal(t, 2.0, r["uncommitted"])
	assert.Nil(t, r["remote"], "the repository has no remote")
	assert.Nil(t, r["error"])

	ref := map[string]any{"task_id": task["id"], "repository_id": repo}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for _, m := range []map[string]any{ref, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	all, listed := reviewFiles(t, c, with(map[string]any{"scope": "task"}))
	assert.Equal(t, []string{"added a.txt", "added b.txt"}, listed)
	assert.Equal(t, 2.0, all["total"])
	assert.Equal(t, 2.0, all["additions"])
	_, listed = reviewFiles(t, c, with(map[string]any{"scope": "turn"}))
	assert.Equal(t, []string{"added b.txt"}, listed, "the newest turn wrote b.txt")
	page, listed := reviewFiles(t, c, with(map[string]any{"scope": "turn", "turn_id": first["turn_id"]}))
	assert.Equal(t, []string{"added a.txt"}, listed, "the first turn wrote a.txt")
	assert.Equal(t, first["turn_id"], page["turn_id"])

	// Pages of one file each: the second names the first one's trees.
	one, listed := reviewFiles(t, c, with(map[string]any{"scope": "task", "limit": 1}))
	assert.Equal(t, []string{"added a.txt"}, listed)
	assert.Equal(t, true, one["more"])
	gittest.Write(t, repoDir(t, task), "c.txt", "written after the first page\n")
	two, listed := reviewFiles(t, c, with(map[string]any{"scope": "task", "limit": 1, "offset": 1, "from": one["from"], "to": one["to"]}))
	assert.Equal(t, []string{"added b.txt"}, listed, "the same comparison, however the worktree moved")
	assert.Nil(t, two["more"])
	assert.Equal(t, 1.0, two["offset"])
}

// repoDir is the worktree of a task's only repository.
func repoDir(t *testing.T, task map[string]any) string {
	t.Helper()
	_, dir := repoOf(task)
	require.DirExists(t, dir)
	return dir
}

// A task's changes list an edit, a rename, a deletion, a binary file, an
// untracked file and a 20,000-line change with their statuses and counts;
// the large file's diff is read in pages, a hunk continuing across them.
func TestReviewListsEveryKindOfChangeAndReadsALargeDiffInPages(t *testing.T) {
	const bigLines = 20_000
	repo := gittest.Init(t)
	var big, bigger strings.Builder
	for i := range bigLines {
		fmt.Fprintf(&big, "line %d\n", i)
		fmt.Fprintf(&bigger, "LINE %d\n", i)
	}
	gittest.Write(t, repo, "edit.txt", "one\ntwo\nthree\n")
	gittest.Write(t, repo, "old/name.txt", strings.Repeat("a file that only moves\n", 20))
	gittest.Write(t, repo, "gone.txt", "soon gone\n")
	gittest.Write(t, repo, "big.txt", big.String())
	gittest.Commit(t, repo, "files to change")

	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "changes",
		"repositories": []any{map[string]any{"path": repo}}})
	id, dir := repoOf(task)
	gittest.Write(t, dir, "edit.txt", "one\n2\nthree\nfour\n")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "new"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(dir, "old", "name.txt"), filepath.Join(dir, "new", "name.txt")))
	require.NoError(t, os.Remove(filepath.Join(dir, "gone.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "logo.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01"), 0o644))
	gittest.Write(t, dir, "notes/untracked.md", "not added to the index\n")
	gittest.Write(t, dir, "big.txt", bigger.String())

	page := c.call("review.files", map[string]any{"task_id": task["id"], "repository_id": id, "scope": "task"})
	files := map[string]map[string]any{}
	var order []string
	for _, f := range page["files"].([]any) {
		f := f.(map[string]any)
		files[f["path"].(string)] = f
		order = append(order, f["path"].(string))
	}
	assert.Equal(t, []string{"big.txt", "edit.txt", "gone.txt", "logo.png", "new/name.txt", "notes/untracked.md"}, order, "path order")
	status := func(path string) string { return files[path]["status"].(string) }
	assert.Equal(t, shared.FileModified, status("edit.txt"))
	assert.Equal(t, 2.0, files["edit.txt"]["additions"])
	assert.Equal(t, 1.0, files["edit.txt"]["deletions"])
	assert.Equal(t, shared.FileRenamed, status("new/name.txt"))
	assert.Equal(t, "old/name.txt", files["new/name.txt"]["old_path"])
	assert.Equal(t, shared.FileDeleted, status("gone.txt"))
	assert.Equal(t, shared.FileAdded, status("logo.png"))
	assert.Equal(t, true, files["logo.png"]["binary"])
	assert.Equal(t, shared.FileAdded, status("notes/untracked.md"))
	assert.Equal(t, shared.FileModified, status("big.txt"))
	assert.Equal(t, float64(bigLines), files["big.txt"]["additions"])
	assert.Equal(t, float64(bigLines), files["big.txt"]["deletions"])
	assert.Equal(t, 6.0, page["total"])
	assert.Equal(t, float64(bigLines+2+1), page["additions"])
	assert.Equal(t, float64(bigLines+1+1), page["deletions"])
	assert.Empty(t, gittest.Git(t, dir, "diff", "--cached", "--name-only"), "the index was not touched")

	// The big file, page by page: every line once, in order.
	var removed, added, pages int
	offset := 0.0
	for {
		req := map[string]any{"task_id": task["id"], "repository_id": id, "from": page["from"], "to": page["to"],
			"path": "big.txt", "offset": offset, "limit": shared.MaxReviewLines}
		diff := c.call("review.file", req)
		pages++
		assert.Equal(t, offset, diff["offset"])
		for i, h := range diff["hunks"].([]any) {
			h := h.(map[string]any)
			assert.Equal(t, pages > 1 && i == 0, h["continued"] == true, "page %d hunk %d continues the hunk before", pages, i)
			for _, line := range h["lines"].([]any) {
				line := line.(string)
				switch {
				case strings.HasPrefix(line, "-"):
					require.Equal(t, fmt.Sprintf("-line %d", removed), line)
					removed++
				case strings.HasPrefix(line, "+"):
					require.Equal(t, fmt.Sprintf("+LINE %d", added), line)
					added++
				}
			}
		}
		next, more := diff["next_offset"].(float64)
		if !more {
			break
		}
		require.Greater(t, next, offset)
		offset = next
	}
	assert.Equal(t, bigLines, removed)
	assert.Equal(t, bigLines, added)
	assert.Equal(t, 2*bigLines/shared.MaxReviewLines, pages, "pages of %d lines", shared.MaxReviewLines)

	binary := c.call("review.file", map[string]any{"task_id": task["id"], "repository_id": id, "from": page["from"], "to": page["to"], "path": "logo.png"})
	assert.Equal(t, true, binary["binary"])
	assert.Empty(t, binary["hunks"], "a binary file is named, not sent")
	renamed := c.call("review.file", map[string]any{"task_id": task["id"], "repository_id": id, "from": page["from"], "to": page["to"],
		"path": "new/name.txt", "old_path": "old/name.txt"})
	assert.Equal(t, shared.FileRenamed, renamed["status"])
}

// Review comments made into one prompt and sent while the session runs
// are queued, then run as one turn whose prompt the agent receives
// exactly (the mock agent answers a plain prompt with its text).
func TestReviewCommentsAreOnePromptQueuedWhileTheSessionRuns(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	task, session := newRepoTask(t, c, gittest.Init(t))
	prompt(t, c, session, "w-1", "/scenario write src/app.go package app")
	text, err := shared.ReviewPrompt([]shared.ReviewComment{
		{Path: "src/app.go", Side: shared.SideNew, StartLine: 1, EndLine: 1, Code: "+package app", Body: "Add a doc comment."},
		{Path: "README", Side: shared.SideOld, StartLine: 1, EndLine: 1, Code: " herd", Body: "Keep the README as it is."},
	})
	require.NoError(t, err)

	// The agent's turn waits for a permission: the session runs.
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "busy", "content": "/scenario permission"})
	request := awaitRequest(t, c, "permission_request")
	added := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "review-1", "content": text})
	assert.Equal(t, "queued", added["outcome"], "the session is running")
	queue := awaitSessionEvent(t, c, "session.queue.changed", func(n map[string]any) bool { return len(n["queue"].([]any)) == 1 })
	assert.Equal(t, text, queue["queue"].([]any)[0].(map[string]any)["content"])

	c.call("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": "allow"})
	require.Equal(t, "end_turn", awaitSettled(t, c), "the running turn")
	require.Equal(t, "end_turn", awaitSettled(t, c), "the review's turn ran next")
	lines := transcript(t, c, session["id"])
	assert.Equal(t, "agent:"+text, lines[len(lines)-1], "the agent received exactly the review prompt")

	turns := c.call("review.get", map[string]any{"task_id": task["id"]})["turns"].([]any)
	assert.Equal(t, "Please address these 2 review comments on your changes.", turns[0].(map[string]any)["prompt"],
		"the review's turn is the newest")
}

// bareRemote makes a bare repository on disk the origin of repo and
// returns its path.
func bareRemote(t *testing.T, repo string) string {
	t.Helper()
	bare := t.TempDir()
	gittest.Git(t, bare, "init", "--quiet", "--bare", "--initial-branch=main")
	gittest.Git(t, repo, "remote", "add", "origin", bare)
	return bare
}

// The agent's work is committed with the person's message and pushed to
// a bare repository: a clone of it holds the commit, its message and the
// file; the branch then tracks its upstream, and the row's totals follow
// the commit.
func TestReviewCommitsAndPushesToABareRepository(t *testing.T) {
	repo := gittest.Init(t)
	bare := bareRemote(t, repo)
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	task, session := newRepoTask(t, c, repo)
	feed := follower(t, srv, task["workspace_id"])
	id, _ := repoOf(task)
	branch := task["repositories"].([]any)[0].(map[string]any)["branch"].(string)
	prompt(t, c, session, "w-1", "/scenario write notes.md remember the milk")
	ref := map[string]any{"task_id": task["id"], "repository_id": id}

	before := c.call("review.get", ref)["repositories"].([]any)[0].(map[string]any)
	assert.Equal(t, "origin", before["remote"])
	assert.Nil(t, before["upstream"], "not pushed yet")
	assert.Equal(t, 1.0, before["uncommitted"])

	const message = "Write the notes\n\nThe agent wrote them; review kept them.\n"
	committed := c.call("review.commit", map[string]any{"task_id": task["id"], "repository_id": id, "message": message})
	assert.Len(t, committed["commit"], 40)
	repoAfter := committed["repository"].(map[string]any)
	assert.Equal(t, 0.0, repoAfter["uncommitted"])
	assert.Equal(t, 1.0, repoAfter["ahead"])
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		git, _ := s["git"].(map[string]any)
		return git != nil && git["ahead"] == 1.0
	})

	pushed := c.call("review.push", ref)
	assert.NotEmpty(t, pushed["output"])
	after := pushed["repository"].(map[string]any)
	assert.Equal(t, "origin/"+branch, after["upstream"])
	assert.Equal(t, 0.0, after["upstream_ahead"])

	clone := t.TempDir()
	gittest.Git(t, clone, "clone", "--quiet", "--branch", branch, bare, ".")
	assert.Equal(t, committed["commit"], gittest.Git(t, clone, "rev-parse", "HEAD"), "the commit landed")
	assert.Equal(t, message, gittest.Git(t, clone, "log", "-1", "--format=%B"), "the message as written")
	body, err := os.ReadFile(filepath.Join(clone, "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "remember the milk", string(body))

	again := c.callErr("review.commit", map[string]any{"task_id": task["id"], "repository_id": id, "message": "nothing"}, "conflict")
	assert.Contains(t, again["message"], "nothing to commit")
}

// A push that git refuses answers git's own reason.
func TestReviewPushShowsGitsReason(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	create := func(repo string) map[string]any {
		return c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "push", "repositories": []any{map[string]any{"path": repo}}})
	}
	lonely := create(gittest.Init(t))
	id, _ := repoOf(lonely)
	e := c.callErr("review.push", map[string]any{"task_id": lonely["id"], "repository_id": id}, "conflict")
	assert.Contains(t, e["message"], "remote")

	repo := gittest.Init(t)
	gittest.Git(t, repo, "remote", "add", "origin", filepath.Join(t.TempDir(), "missing.git"))
	lost := create(repo)
	id, _ = repoOf(lost)
	e = c.callErr("review.push", map[string]any{"task_id": lost["id"], "repository_id": id}, "conflict")
	assert.Contains(t, e["message"], "does not appear to be a git repository", "git's own words")
}

// Review refuses what names no task, another task's repository, trees
// that are not trees of the repository, an oversize message, a turn herd
// has no record of and an archived task, each with a coded error.
func TestReviewRefusesBadRequests(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	create := func() map[string]any {
		return c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "bad", "repositories": []any{map[string]any{"path": gittest.Init(t)}}})
	}
	task, other := create(), create()
	id, _ := repoOf(task)
	otherID, _ := repoOf(other)
	page := c.call("review.files", map[string]any{"task_id": task["id"], "repository_id": id, "scope": "task"})
	unknownTree := strings.Repeat("0", 40)
	tests := []struct {
		name    string
		action  string
		payload map[string]any
		code    string
		says    string
	}{
		{"unknown task", "review.get", map[string]any{"task_id": "no-such-task"}, "not_found", "no-such-task"},
		{"another task's repository", "review.files", map[string]any{"task_id": task["id"], "repository_id": otherID, "scope": "task"}, "not_found", otherID},
		{"a malformed tree", "review.files", map[string]any{"task_id": task["id"], "repository_id": id, "scope": "task", "from": "HEAD~1", "to": page["to"]}, "bad_request", "not a tree id"},
		{"an unknown tree", "review.file", map[string]any{"task_id": task["id"], "repository_id": id, "from": unknownTree, "to": page["to"], "path": "README"}, "not_found", unknownTree},
		{"a file that did not change", "review.file", map[string]any{"task_id": task["id"], "repository_id": id, "from": page["from"], "to": page["to"], "path": "README"}, "not_found", "README"},
		{"an oversize message", "review.commit", map[string]any{"task_id": task["id"], "repository_id": id, "message": strings.Repeat("m", shared.MaxCommitMessageBytes+1)}, "bad_request", "limit"},
		{"no turn recorded", "review.files", map[string]any{"task_id": task["id"], "repository_id": id, "scope": "turn"}, "not_found", "turn"},
		{"no token for a pull request", "review.pull_request.create", map[string]any{"task_id": task["id"], "repository_id": id, "title": "t"}, "conflict", "GitHub token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := c.callErr(tt.action, tt.payload, tt.code)
			assert.Contains(t, e["message"], tt.says)
		})
	}

	archived := c.call("task.archive", map[string]any{"task_id": other["id"]})
	require.Equal(t, true, archived["archived"])
	e := c.callErr("review.get", map[string]any{"task_id": other["id"]}, "conflict")
	assert.Contains(t, e["message"], "archived")
}

// fakePulls is GitHub's REST API as far as opening pull requests goes:
// the first POST to a repository's pulls opens number 7, later ones are
// refused as GitHub refuses a second pull request of a branch.
type fakePulls struct {
	mu    sync.Mutex
	posts []pullPost
}

// pullPost is a request to open a pull request, as the fake received it.
type pullPost struct {
	path, auth string
	body       map[string]any
}

func (f *fakePulls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/pulls") {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"Not Found"}`)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.posts = append(f.posts, pullPost{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
	first := len(f.posts) == 1
	f.mu.Unlock()
	if !first {
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprintf(w, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for octo-org:%s."}]}`, body["head"])
		return
	}
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"number":7,"html_url":"https://github.com/octo-org/herd-demo/pull/7","state":"open","draft":%v,
		"updated_at":"2026-12-01T10:00:00Z","head":{"ref":%q,"sha":"0123456789abcdef0123456789abcdef01234567"},
		"base":{"ref":"main","repo":{"full_name":"octo-org/herd-demo"}}}`, body["draft"], body["head"])
}

func (f *fakePulls) taken() []pullPost {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pullPost(nil), f.posts...)
}

// A pull request opened from review goes to GitHub from the pushed
// branch into the base branch with the person's title and body; the task
// links it and its row shows it; GitHub's refusal of a second one is a
// conflict in GitHub's words. Before the push there is none to open.
func TestReviewOpensAPullRequestThatTheTaskRowShows(t *testing.T) {
	gh := &fakePulls{}
	api := httptest.NewServer(gh)
	t.Cleanup(api.Close)
	srv := MustStart(t, func(cfg *server.Config, _ *server.Options) {
		cfg.GitHubToken, cfg.GitHubAPIURL, cfg.GitHubPollInterval = "ghp_t0ken", api.URL, time.Hour
	})
	repo := gittest.Init(t)
	bare := bareRemote(t, repo)
	// The remote is named on the fake's host; pushes go to the bare
	// repository on disk.
	gittest.Git(t, repo, "remote", "set-url", "origin", "https://127.0.0.1/octo-org/herd-demo.git")
	gittest.Git(t, repo, "config", "remote.origin.pushurl", bare)
	c := MustDial(t, srv, nil)
	task, session := newRepoTask(t, c, repo)
	feed := follower(t, srv, task["workspace_id"])
	id, _ := repoOf(task)
	branch := task["repositories"].([]any)[0].(map[string]any)["branch"].(string)
	ref := map[string]any{"task_id": task["id"], "repository_id": id}
	prompt(t, c, session, "w-1", "/scenario write notes.md the notes")

	review := c.call("review.get", ref)
	assert.Equal(t, true, review["pull_requests"], "the server holds a token")
	r := review["repositories"].([]any)[0].(map[string]any)
	assert.Equal(t, "octo-org/herd-demo", r["github_repository"])
	assert.Nil(t, r["pull_request_url"])

	open := map[string]any{"task_id": task["id"], "repository_id": id, "title": "Write the notes", "body": "The agent wrote them.", "draft": true}
	e := c.callErr("review.pull_request.create", open, "conflict")
	assert.Contains(t, e["message"], "push the branch first")
	assert.Empty(t, gh.taken(), "nothing was sent to GitHub")

	c.call("review.commit", map[string]any{"task_id": task["id"], "repository_id": id, "message": "Write the notes"})
	c.call("review.push", ref)
	created := c.call("review.pull_request.create", open)
	assert.Equal(t, "https://github.com/octo-org/herd-demo/pull/7", created["url"])
	assert.Equal(t, 7.0, created["number"])
	posts := gh.taken()
	require.Len(t, posts, 1)
	assert.Equal(t, "/repos/octo-org/herd-demo/pulls", posts[0].path)
	assert.Equal(t, "Bearer ghp_t0ken", posts[0].auth)
	assert.Equal(t, map[string]any{"title": "Write the notes", "body": "The agent wrote them.", "head": branch, "base": "main", "draft": true}, posts[0].body)

	sum := awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["pull_request"] != nil })
	pr := sum["pull_request"].(map[string]any)
	assert.Equal(t, created["url"], pr["url"])
	assert.Equal(t, 7.0, pr["number"])
	assert.Equal(t, "draft", pr["aggregate_state"])
	assert.Equal(t, created["url"], c.call("task.get", map[string]any{"task_id": task["id"]})["pull_request_url"], "the task links its pull request")
	listed := c.call("task.list", map[string]any{"workspace_id": task["workspace_id"]})["tasks"].([]any)[0].(map[string]any)
	assert.Equal(t, created["url"], listed["status_summary"].(map[string]any)["pull_request"].(map[string]any)["url"])
	r = c.call("review.get", ref)["repositories"].([]any)[0].(map[string]any)
	assert.Equal(t, created["url"], r["pull_request_url"])

	e = c.callErr("review.pull_request.create", open, "conflict")
	assert.Contains(t, e["message"], "A pull request already exists for octo-org:"+branch, "GitHub's own words")
}

// A repository that cannot be read carries its error in the review; the
// task's other repositories are answered all the same.
func TestReviewOfATaskWithAnUnreadableRepositoryAnswersTheOthers(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "two",
		"repositories": []any{map[string]any{"path": gittest.Init(t)}, map[string]any{"path": gittest.Init(t)}}})
	gone := task["repositories"].([]any)[1].(map[string]any)["worktree_path"].(string)
	require.NoError(t, os.RemoveAll(gone))

	repos := c.call("review.get", map[string]any{"task_id": task["id"]})["repositories"].([]any)
	require.Len(t, repos, 2)
	first, second := repos[0].(map[string]any), repos[1].(map[string]any)
	assert.Nil(t, first["error"])
	assert.Equal(t, "main", first["base_branch"])
	assert.NotEmpty(t, first["branch"])
	assert.Contains(t, second["error"], gone, "git's reason names the worktree")
	assert.Equal(t, gone, second["dir"])
}
