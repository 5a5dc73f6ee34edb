package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// fakeReview records the requests the review actions pass on and how long
// each one's context had left.
type fakeReview struct {
	mu    sync.Mutex
	calls []reviewCall
}

// reviewCall is one request a fakeReview received.
type reviewCall struct {
	action string
	req    any
	left   time.Duration // until the context's deadline
}

func (f *fakeReview) record(ctx context.Context, action string, req any) {
	deadline, _ := ctx.Deadline()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, reviewCall{action: action, req: req, left: time.Until(deadline)})
}

func (f *fakeReview) taken() []reviewCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

func (f *fakeReview) Get(ctx context.Context, req shared.ReviewGetRequest) (shared.ReviewGetResponse, error) {
	f.record(ctx, shared.ActionReviewGet, req)
	return shared.ReviewGetResponse{TaskID: req.TaskID}, nil
}

func (f *fakeReview) Files(ctx context.Context, req shared.ReviewFilesRequest) (shared.ReviewFilesResponse, error) {
	f.record(ctx, shared.ActionReviewFiles, req)
	return shared.ReviewFilesResponse{TaskID: req.TaskID}, nil
}

func (f *fakeReview) File(ctx context.Context, req shared.ReviewFileRequest) (shared.ReviewFileResponse, error) {
	f.record(ctx, shared.ActionReviewFile, req)
	return shared.ReviewFileResponse{Path: req.Path}, nil
}

func (f *fakeReview) Commit(ctx context.Context, req shared.ReviewCommitRequest) (shared.ReviewCommitResponse, error) {
	f.record(ctx, shared.ActionReviewCommit, req)
	return shared.ReviewCommitResponse{Commit: "c0ffee"}, nil
}

func (f *fakeReview) Push(ctx context.Context, req shared.ReviewPushRequest) (shared.ReviewPushResponse, error) {
	f.record(ctx, shared.ActionReviewPush, req)
	return shared.ReviewPushResponse{Output: "pushed"}, nil
}

func (f *fakeReview) CreatePullRequest(ctx context.Context, req shared.ReviewPullRequestCreateRequest) (shared.ReviewPullRequestCreateResponse, error) {
	f.record(ctx, shared.ActionReviewPullRequestCreate, req)
	return shared.ReviewPullRequestCreateResponse{URL: "https://github.com/o/r/pull/7", Number: 7}, nil
}

// exchange sends one request and returns the envelope answering it.
func exchange(t *testing.T, c *websocket.Conn, id, action string, payload any) shared.Envelope {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Write(ctx, websocket.MessageText, request(id, action, payload)))
	for {
		_, data, err := c.Read(ctx)
		require.NoError(t, err)
		var env shared.Envelope
		require.NoError(t, json.Unmarshal(data, &env))
		if env.ID == id {
			return env
		}
	}
}

// errorCode returns the code of an error envelope, or "" for another.
func errorCode(t *testing.T, env shared.Envelope) shared.Code {
	t.Helper()
	if env.Type != shared.TypeError {
		return ""
	}
	var e shared.Error
	require.NoError(t, json.Unmarshal(env.Payload, &e))
	return e.Code
}

var (
	treeA = strings.Repeat("a", 40)
	treeB = strings.Repeat("b", 40)
)

// Review requests whose ids, scope, trees, paths, pages or texts are
// wrong are refused as bad_request before the review service sees them.
func TestReviewActionsRefuseBadInputBeforeReviewing(t *testing.T) {
	review := &fakeReview{}
	_, _, url := lanesGateway(t, func(c *Config) { c.Review = review })
	client := dial(t, url, nil)
	repo := map[string]any{"task_id": "t", "repository_id": "r"}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range repo {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	file := func(extra map[string]any) map[string]any {
		base := with(map[string]any{"from": treeA, "to": treeB, "path": "a.go"})
		for k, v := range extra {
			base[k] = v
		}
		return base
	}
	tests := []struct {
		name    string
		action  string
		payload any
	}{
		{"get without a task", shared.ActionReviewGet, map[string]any{}},
		{"files without a repository", shared.ActionReviewFiles, map[string]any{"task_id": "t", "scope": "task"}},
		{"files without a scope", shared.ActionReviewFiles, repo},
		{"files of an unknown scope", shared.ActionReviewFiles, with(map[string]any{"scope": "week"})},
		{"files of the task naming a turn", shared.ActionReviewFiles, with(map[string]any{"scope": "task", "turn_id": "m1"})},
		{"files with from but no to", shared.ActionReviewFiles, with(map[string]any{"scope": "task", "from": treeA})},
		{"files with an oversize tree", shared.ActionReviewFiles, with(map[string]any{"scope": "task", "from": treeA + treeA, "to": treeB})},
		{"files at a negative offset", shared.ActionReviewFiles, with(map[string]any{"scope": "task", "offset": -1})},
		{"files page too large", shared.ActionReviewFiles, with(map[string]any{"scope": "task", "limit": shared.MaxReviewFiles + 1})},
		{"files with a wrong payload", shared.ActionReviewFiles, with(map[string]any{"scope": "task", "limit": "ten"})},
		{"file without trees", shared.ActionReviewFile, with(map[string]any{"path": "a.go"})},
		{"file without a path", shared.ActionReviewFile, file(map[string]any{"path": ""})},
		{"file with an oversize path", shared.ActionReviewFile, file(map[string]any{"path": strings.Repeat("p", shared.MaxReviewPathBytes+1)})},
		{"file with a NUL in its path", shared.ActionReviewFile, file(map[string]any{"path": "a\x00b"})},
		{"file with an oversize old path", shared.ActionReviewFile, file(map[string]any{"old_path": strings.Repeat("p", shared.MaxReviewPathBytes+1)})},
		{"file page too large", shared.ActionReviewFile, file(map[string]any{"limit": shared.MaxReviewLines + 1})},
		{"commit without a message", shared.ActionReviewCommit, with(map[string]any{"message": " \n"})},
		{"commit with an oversize message", shared.ActionReviewCommit, with(map[string]any{"message": strings.Repeat("m", shared.MaxCommitMessageBytes+1)})},
		{"push without a task", shared.ActionReviewPush, map[string]any{"repository_id": "r"}},
		{"pull request without a title", shared.ActionReviewPullRequestCreate, repo},
		{"pull request with an oversize title", shared.ActionReviewPullRequestCreate, with(map[string]any{"title": strings.Repeat("t", shared.MaxPullRequestTitleBytes+1)})},
		{"pull request with an oversize body", shared.ActionReviewPullRequestCreate, with(map[string]any{"title": "t", "body": strings.Repeat("b", shared.MaxPullRequestBodyBytes+1)})},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := exchange(t, client, fmt.Sprint(i), tt.action, tt.payload)
			assert.Equal(t, shared.CodeBadRequest, errorCode(t, env), "%s", env.Payload)
		})
	}
	assert.Empty(t, review.taken(), "no bad request reached the review service")
}

// Good review requests reach the review service as sent (a commit
// message exactly, spaces and all), within the action's bound: the
// request timeout, or the longer bound of an action whose steps take
// longer.
func TestReviewActionsPassRequestsOnWithinTheirBounds(t *testing.T) {
	review := &fakeReview{}
	const requestTimeout = 5 * time.Second
	g, workspace, url := lanesGateway(t, func(c *Config) { c.Review = review; c.RequestTimeout = requestTimeout })
	task, err := g.cfg.Store.CreateTask(t.Context(), shared.TaskCreateRequest{WorkspaceID: workspace, Title: "t"})
	require.NoError(t, err)
	client := dial(t, url, nil)
	const message = "  Fix the login page\n\nThe form posts twice.\n"
	tests := []struct {
		action  string
		payload any
		want    any
		bound   time.Duration
	}{
		{shared.ActionReviewGet, map[string]any{"task_id": task.ID}, shared.ReviewGetRequest{TaskID: task.ID}, requestTimeout},
		{shared.ActionReviewFiles, map[string]any{"task_id": task.ID, "repository_id": "r", "scope": "turn", "from": treeA, "to": treeB, "offset": 200},
			shared.ReviewFilesRequest{TaskID: task.ID, RepositoryID: "r", Scope: shared.ReviewScopeTurn, From: treeA, To: treeB, Offset: 200}, shared.ReviewFilesTimeout},
		{shared.ActionReviewFile, map[string]any{"task_id": task.ID, "repository_id": "r", "from": treeA, "to": treeB, "path": "b.go", "old_path": "a.go", "limit": 10},
			shared.ReviewFileRequest{TaskID: task.ID, RepositoryID: "r", From: treeA, To: treeB, Path: "b.go", OldPath: "a.go", Limit: 10}, requestTimeout},
		{shared.ActionReviewCommit, map[string]any{"task_id": task.ID, "repository_id": "r", "message": message},
			shared.ReviewCommitRequest{TaskID: task.ID, RepositoryID: "r", Message: message}, shared.ReviewCommitTimeout},
		{shared.ActionReviewPush, map[string]any{"task_id": task.ID, "repository_id": "r"},
			shared.ReviewPushRequest{TaskID: task.ID, RepositoryID: "r"}, shared.ReviewPushTimeout},
		{shared.ActionReviewPullRequestCreate, map[string]any{"task_id": task.ID, "repository_id": "r", "title": "Fix it", "draft": true},
			shared.ReviewPullRequestCreateRequest{TaskID: task.ID, RepositoryID: "r", Title: "Fix it", Draft: true}, shared.ReviewPullRequestTimeout},
	}
	for i, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			env := exchange(t, client, fmt.Sprint(i), tt.action, tt.payload)
			require.Equal(t, shared.TypeResponse, env.Type, "%s", env.Payload)
			calls := review.taken()
			require.Len(t, calls, 1)
			assert.Equal(t, tt.action, calls[0].action)
			assert.Equal(t, tt.want, calls[0].req)
			assert.LessOrEqual(t, calls[0].left, tt.bound)
			// The bound was not cut to the request timeout: what is left
			// is well beyond the time a request takes here.
			assert.Greater(t, calls[0].left, tt.bound-requestTimeout/2, "bound %v", tt.bound)
		})
	}
}

// Opening a pull request changes the task (it links the pull request):
// the workspace's followers get task.updated.
func TestAPullRequestOpenedFromReviewUpdatesTheTaskForFollowers(t *testing.T) {
	review := &fakeReview{}
	g, workspace, url := lanesGateway(t, func(c *Config) { c.Review = review })
	task, err := g.cfg.Store.CreateTask(t.Context(), shared.TaskCreateRequest{WorkspaceID: workspace, Title: "t"})
	require.NoError(t, err)
	follower := dialFollower(t, url, workspace)
	client := dial(t, url, nil)
	env := exchange(t, client, "1", shared.ActionReviewPullRequestCreate,
		map[string]any{"task_id": task.ID, "repository_id": "r", "title": "Fix it"})
	require.Equal(t, shared.TypeResponse, env.Type, "%s", env.Payload)
	var created shared.ReviewPullRequestCreateResponse
	require.NoError(t, json.Unmarshal(env.Payload, &created))
	assert.Equal(t, 7, created.Number)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, data, err := follower.Read(ctx)
	require.NoError(t, err)
	var note shared.Envelope
	require.NoError(t, json.Unmarshal(data, &note))
	assert.Equal(t, shared.NotifyTaskUpdated, note.Action)
	assert.Contains(t, string(note.Payload), task.ID)
}

// Without a review service the review actions are unknown.
func TestReviewActionsAreUnknownWithoutAReviewService(t *testing.T) {
	_, _, url := lanesGateway(t, nil)
	client := dial(t, url, nil)
	env := exchange(t, client, "1", shared.ActionReviewGet, map[string]any{"task_id": "t"})
	assert.Equal(t, shared.CodeUnknownAction, errorCode(t, env))
}
