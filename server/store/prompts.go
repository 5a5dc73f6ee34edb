package store

import (
	"context"
	"fmt"

	"github.com/herd-dev/herd/shared"
)

// LatestPrompt returns the prompt of a session's latest turn: its newest
// user message claimed for dispatch or sent. A claim gives a prompt the
// session's next seq, so the newest of them is the one the latest turn
// took, whether or not that turn got to send it. sent says it reached the
// agent. id is empty when no prompt of the session was ever claimed.
//
// Start-up recovery asks this of a session a previous process left
// RUNNING, before it returns unsent claims to the queue: a turn that
// claimed a prompt and stopped before sending it leaves that prompt
// claimed, never sent, and the earlier sent prompt, whose turn had ended,
// is not the one the session was running.
func (s *Store) LatestPrompt(ctx context.Context, sessionID string) (id string, sent bool, err error) {
	var rows []messageRow
	err = s.write.WithContext(ctx).Select("id", "dispatch_state").
		Where("session_id = ? AND type = ? AND dispatch_state IN ?", sessionID, string(shared.MessageUser),
			[]string{dispatchClaimed, dispatchSent}).
		Order("seq DESC").Limit(1).Find(&rows).Error
	if err != nil {
		return "", false, fmt.Errorf("load latest prompt of session %s: %w", sessionID, err)
	}
	if len(rows) == 0 {
		return "", false, nil
	}
	return rows[0].ID, rows[0].DispatchState == dispatchSent, nil
}
