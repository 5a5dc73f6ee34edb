package review

import (
	"context"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/server/store"
)

// TurnStarting records the worktree of each of the task's repositories as
// the turn finds it, before the agent is handed the turn's prompt. Each
// repository's snapshot is bounded by Config.TurnTimeout, and they run in
// parallel, so the turn waits at most about that long. A failure is
// logged; the turn goes on. It implements sessions.TurnWatch.
func (s *Service) TurnStarting(ctx context.Context, taskID, sessionID, turnID string) {
	task, err := s.cfg.Store.GetTask(ctx, taskID)
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
			tree, err := gitdiff.Snapshot(ctx, workDir(r))
			if err == nil {
				err = s.cfg.Store.RecordTurnTree(ctx, store.TurnTree{
					RepositoryID: r.ID, TurnID: turnID, TaskID: taskID, SessionID: sessionID, Tree: tree, RecordedAt: at,
				})
			}
			if err != nil {
				s.log.Warn("record the worktree at a turn's start", "task", taskID, "repository", r.ID, "turn", turnID, "err", err)
			}
		})
	}
	wg.Wait()
}
