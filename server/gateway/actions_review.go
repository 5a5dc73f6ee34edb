package gateway

import (
	"context"
	"strings"

	"github.com/herd-dev/herd/shared"
)

// Review reads what a task's agents changed and finishes the work; the
// review actions call it once their input is checked.
type Review interface {
	Get(ctx context.Context, req shared.ReviewGetRequest) (shared.ReviewGetResponse, error)
	Files(ctx context.Context, req shared.ReviewFilesRequest) (shared.ReviewFilesResponse, error)
	File(ctx context.Context, req shared.ReviewFileRequest) (shared.ReviewFileResponse, error)
	Commit(ctx context.Context, req shared.ReviewCommitRequest) (shared.ReviewCommitResponse, error)
	Push(ctx context.Context, req shared.ReviewPushRequest) (shared.ReviewPushResponse, error)
	// CreatePullRequest opens a pull request and links it to the task.
	CreatePullRequest(ctx context.Context, req shared.ReviewPullRequestCreateRequest) (shared.ReviewPullRequestCreateResponse, error)
}

// maxTreeIDBytes bounds a tree id: 40 hex digits for SHA-1, 64 for
// SHA-256; gitdiff checks the id itself.
const maxTreeIDBytes = 64

// reviewActions lists the review actions, served when a Review is
// configured.
func (g *Gateway) reviewActions() map[string]action {
	return map[string]action{
		shared.ActionReviewGet:               {run: handle(g.reviewGet)},
		shared.ActionReviewFiles:             {run: handle(g.reviewFiles), timeout: shared.ReviewFilesTimeout},
		shared.ActionReviewFile:              {run: handle(g.reviewFile)},
		shared.ActionReviewCommit:            {run: handle(g.reviewCommit), timeout: shared.ReviewCommitTimeout},
		shared.ActionReviewPush:              {run: handle(g.reviewPush), timeout: shared.ReviewPushTimeout},
		shared.ActionReviewPullRequestCreate: {run: handle(g.reviewPullRequestCreate), timeout: shared.ReviewPullRequestTimeout},
	}
}

func (g *Gateway) reviewGet(ctx context.Context, _ *conn, req shared.ReviewGetRequest) (any, error) {
	if err := requireID("task_id", req.TaskID); err != nil {
		return nil, err
	}
	return g.cfg.Review.Get(ctx, req)
}

func (g *Gateway) reviewFiles(ctx context.Context, _ *conn, req shared.ReviewFilesRequest) (any, error) {
	if err := requireRepository(req.TaskID, req.RepositoryID); err != nil {
		return nil, err
	}
	switch req.Scope {
	case shared.ReviewScopeTask:
		if req.TurnID != "" {
			return nil, shared.Errorf(shared.CodeBadRequest, "turn_id goes with scope %q only", shared.ReviewScopeTurn)
		}
	case shared.ReviewScopeTurn:
	default:
		return nil, shared.Errorf(shared.CodeBadRequest, "scope is %q or %q, not %q", shared.ReviewScopeTask, shared.ReviewScopeTurn, req.Scope)
	}
	if (req.From == "") != (req.To == "") {
		return nil, shared.Errorf(shared.CodeBadRequest, "from and to go together: both from an earlier page, or neither")
	}
	if err := checkTrees(req.From, req.To, false); err != nil {
		return nil, err
	}
	if err := checkPage(req.Offset, req.Limit, shared.MaxReviewFiles, "files"); err != nil {
		return nil, err
	}
	return g.cfg.Review.Files(ctx, req)
}

func (g *Gateway) reviewFile(ctx context.Context, _ *conn, req shared.ReviewFileRequest) (any, error) {
	if err := requireRepository(req.TaskID, req.RepositoryID); err != nil {
		return nil, err
	}
	if err := checkTrees(req.From, req.To, true); err != nil {
		return nil, err
	}
	if err := checkPath("path", req.Path, true); err != nil {
		return nil, err
	}
	if err := checkPath("old_path", req.OldPath, false); err != nil {
		return nil, err
	}
	if err := checkPage(req.Offset, req.Limit, shared.MaxReviewLines, "lines"); err != nil {
		return nil, err
	}
	return g.cfg.Review.File(ctx, req)
}

func (g *Gateway) reviewCommit(ctx context.Context, _ *conn, req shared.ReviewCommitRequest) (any, error) {
	if err := requireRepository(req.TaskID, req.RepositoryID); err != nil {
		return nil, err
	}
	// The message is kept as written; only its size is checked here.
	if err := checkText("message", req.Message, shared.MaxCommitMessageBytes, true); err != nil {
		return nil, err
	}
	return g.cfg.Review.Commit(ctx, req)
}

func (g *Gateway) reviewPush(ctx context.Context, _ *conn, req shared.ReviewPushRequest) (any, error) {
	if err := requireRepository(req.TaskID, req.RepositoryID); err != nil {
		return nil, err
	}
	return g.cfg.Review.Push(ctx, req)
}

func (g *Gateway) reviewPullRequestCreate(ctx context.Context, _ *conn, req shared.ReviewPullRequestCreateRequest) (any, error) {
	if err := requireRepository(req.TaskID, req.RepositoryID); err != nil {
		return nil, err
	}
	if err := checkText("title", req.Title, shared.MaxPullRequestTitleBytes, true); err != nil {
		return nil, err
	}
	if err := checkText("body", req.Body, shared.MaxPullRequestBodyBytes, false); err != nil {
		return nil, err
	}
	created, err := g.cfg.Review.CreatePullRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	// The task now links the pull request; its followers learn it as
	// from task.update (the summary follows through the projector).
	if task, err := g.cfg.Store.GetTask(ctx, req.TaskID); err == nil {
		g.publishTask(shared.NotifyTaskUpdated, task)
	} else {
		g.log.Warn("load task after opening its pull request", "task", req.TaskID, "err", err)
	}
	return created, nil
}

// requireRepository checks that a review request names its task and
// repository.
func requireRepository(taskID, repositoryID string) error {
	if err := requireID("task_id", taskID); err != nil {
		return err
	}
	return requireID("repository_id", repositoryID)
}

// checkTrees checks the size of the tree ids a request names; required
// says they must be named.
func checkTrees(from, to string, required bool) error {
	for _, t := range []struct{ field, id string }{{"from", from}, {"to", to}} {
		switch {
		case required && t.id == "":
			return shared.Errorf(shared.CodeBadRequest, "%s is required: the tree a files page answered", t.field)
		case len(t.id) > maxTreeIDBytes:
			return shared.Errorf(shared.CodeBadRequest, "%s is %d bytes; a tree id is at most %d", t.field, len(t.id), maxTreeIDBytes)
		}
	}
	return nil
}

// checkPath checks a path a review request names.
func checkPath(field, path string, required bool) error {
	switch {
	case required && path == "":
		return shared.Errorf(shared.CodeBadRequest, "%s is required", field)
	case len(path) > shared.MaxReviewPathBytes:
		return shared.Errorf(shared.CodeBadRequest, "%s is %d bytes; the limit is %d", field, len(path), shared.MaxReviewPathBytes)
	case strings.ContainsRune(path, 0):
		return shared.Errorf(shared.CodeBadRequest, "%s holds a NUL byte", field)
	}
	return nil
}

// checkPage checks a page's offset and size in units (at most maxLimit;
// zero means the default).
func checkPage(offset, limit, maxLimit int, units string) error {
	switch {
	case offset < 0:
		return shared.Errorf(shared.CodeBadRequest, "offset must not be negative")
	case limit < 0 || limit > maxLimit:
		return shared.Errorf(shared.CodeBadRequest, "limit must be between 1 and %d %s (0 means the default)", maxLimit, units)
	}
	return nil
}

// checkText checks a text's size without changing it (JSON decoding has
// made it valid UTF-8).
func checkText(field, s string, maxBytes int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return shared.Errorf(shared.CodeBadRequest, "%s is required", field)
	case len(s) > maxBytes:
		return shared.Errorf(shared.CodeBadRequest, "%s is %d bytes; the limit is %d", field, len(s), maxBytes)
	}
	return nil
}
