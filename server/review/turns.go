package review

import (
	"context"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/server/store"
)

// recordTimeout bounds each database step of recording a turn's start.
const recordTimeout = 5 * time.Second

// TurnStarting records the worktree of each of the task's repositories as
// the turn finds it, before the agent is handed the turn's prompt. Each
// repository's snapshot is bounded by Config.TurnTimeout, and they run in
// parallel, so the turn waits at most about that long. A failure is
// logged and recorded as the repository's start of the turn; the turn
// goes on. It implements sessions.TurnWatch.
func (s *Service) TurnStarting(ctx context.Context, taskID, sessionID, turnID string) {
	lctx, cancel := context.WithTimeout(ctx, recordTimeout)
	task, err := s.cfg.Store.GetTask(lctx, taskID)
	cancel()
	if err != nil {
		s.log.Warn("record the worktree at a turn's start: load the task", "task", taskID, "turn", turnID, "err", err)
		return
	}
	// Every repository's record dates the turn's start, however long its
	// snapshot took.
	at := time.Now()
	var wg sync.WaitGroup
	for _, r := range task.Repositories {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, s.cfg.TurnTimeout)
			defer cancel()
			record := store.TurnTree{RepositoryID: r.ID, TurnID: turnID, TaskID: taskID, SessionID: sessionID, RecordedAt: at}
			tree, err := gitdiff.Snapshot(ctx, workDir(r))
			if err != nil {
				// Recorded all the same, so that the turn before this one
				// ends here rather than at the next turn that has a tree.
				s.log.Warn("record the worktree at a turn's start", "task", taskID, "repository", r.ID, "turn", turnID, "err", err)
				record.Failure = err.Error()
			}
			if err == nil {
				record.Tree = tree
			}
			// The record has a bound of its own: a snapshot that took its
			// whole bound is still recorded as failed.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
			defer cancel()
			if err := s.cfg.Store.RecordTurnTree(rctx, record); err != nil {
				s.log.Warn("store the worktree at a turn's start", "task", taskID, "repository", r.ID, "turn", turnID, "err", err)
			}
		})
	}
	wg.Wait()
}
