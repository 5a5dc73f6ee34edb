package review

import (
	"context"
	"fmt"

	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/shared"
)

// Files returns one page of a repository's changed files. The first page
// (neither From nor To) compares the scope's start with the working tree
// as it is now; later pages compare the trees the first one answered.
func (s *Service) Files(ctx context.Context, req shared.ReviewFilesRequest) (shared.ReviewFilesResponse, error) {
	task, r, err := s.repository(ctx, req.TaskID, req.RepositoryID)
	if err != nil {
		return shared.ReviewFilesResponse{}, err
	}
	dir := workDir(r)
	from, to, turnID := req.From, req.To, req.TurnID
	switch {
	case req.Scope != shared.ReviewScopeTask && req.Scope != shared.ReviewScopeTurn:
		return shared.ReviewFilesResponse{}, shared.Errorf(shared.CodeBadRequest, "scope %q is not %q or %q", req.Scope, shared.ReviewScopeTask, shared.ReviewScopeTurn)
	case from != "" || to != "":
		// A later page, whose trees gitdiff checks (the gateway has
		// checked that both are named).
	case req.Scope == shared.ReviewScopeTask:
		if from, _, err = gitdiff.BaseTree(ctx, dir, r.BaseBranch); err != nil {
			return shared.ReviewFilesResponse{}, fmt.Errorf("read the base of %s: %w", dir, err)
		}
	default:
		if from, to, turnID, err = s.turnTrees(ctx, task.ID, r, req.TurnID); err != nil {
			return shared.ReviewFilesResponse{}, err
		}
	}
	var listing gitdiff.Listing
	if to == "" {
		// The comparison ends at the working tree as it is now.
		to, listing, err = gitdiff.SnapshotFiles(ctx, dir, from, req.Offset, req.Limit)
	} else {
		listing, err = gitdiff.Files(ctx, dir, from, to, req.Offset, req.Limit)
	}
	if err != nil {
		return shared.ReviewFilesResponse{}, err
	}
	files := listing.Files
	if files == nil {
		files = []shared.ReviewFile{}
	}
	return shared.ReviewFilesResponse{
		TaskID: task.ID, RepositoryID: r.ID, Scope: req.Scope, TurnID: turnID, From: from, To: to, Files: files,
		Offset: req.Offset, Total: listing.Total, Additions: listing.Additions, Deletions: listing.Deletions,
		More: req.Offset+len(files) < listing.Total,
	}, nil
}

// turnTrees returns the trees that bound a turn in a repository (the
// task's newest turn when turnID is empty) and the turn's id: the tree
// recorded at its start, and the next turn's; to is empty for the newest
// turn, which the working tree as it is now ends.
func (s *Service) turnTrees(ctx context.Context, taskID string, r shared.TaskRepository, turnID string) (from, to, turn string, err error) {
	span, err := s.cfg.Store.TurnSpan(ctx, taskID, r.ID, turnID)
	if err != nil {
		return "", "", "", err
	}
	dir := workDir(r)
	// A recorded tree is an unreachable object to git, which a gc prunes
	// once it is old enough (two weeks by default).
	for _, tree := range []string{span.From, span.To} {
		if tree == "" {
			continue
		}
		if err := gitdiff.CheckTree(ctx, dir, tree); shared.ErrorCode(err) == shared.CodeNotFound {
			return "", "", "", shared.Errorf(shared.CodeNotFound, "the worktree recorded for that turn is gone from the repository (git gc prunes unreachable trees)")
		} else if err != nil {
			return "", "", "", err
		}
	}
	return span.From, span.To, span.TurnID, nil
}

// File returns one page of one file's diff between the trees of a files
// page; gitdiff checks the trees, the path and the page.
func (s *Service) File(ctx context.Context, req shared.ReviewFileRequest) (shared.ReviewFileResponse, error) {
	_, r, err := s.repository(ctx, req.TaskID, req.RepositoryID)
	if err != nil {
		return shared.ReviewFileResponse{}, err
	}
	return gitdiff.File(ctx, workDir(r), gitdiff.FilePage{
		From: req.From, To: req.To, Path: req.Path, OldPath: req.OldPath, Offset: req.Offset, Limit: req.Limit,
	})
}
