package sessions

import (
	"context"

	"github.com/herd-dev/herd/shared"
)

// projectSummary derives the session facts of a task's status summary from
// the authoritative rows (the primary session's state, its pending
// request, its queue) and publishes the summary when they changed. It runs
// after every change to those rows, so a task row never needs the session
// stream to show its badge.
func (m *Manager) projectSummary(ctx context.Context, taskID string) {
	task, err := m.cfg.Store.GetTask(ctx, taskID)
	if err != nil || task.PrimarySessionID == "" {
		return
	}
	st := m.cfg.Store
	session, err := st.GetSession(ctx, task.PrimarySessionID)
	if err != nil {
		m.log.Error("project summary", "task", taskID, "err", err)
		return
	}
	queue, err := st.QueuedMessages(ctx, session.ID)
	if err != nil {
		m.log.Error("project summary", "task", taskID, "err", err)
		return
	}
	pending, err := st.PendingRequests(ctx, session.ID)
	if err != nil {
		m.log.Error("project summary", "task", taskID, "err", err)
		return
	}
	summary, workspaceID, changed, err := st.UpdateSummary(ctx, taskID, func(s shared.TaskStatusSummary) shared.TaskStatusSummary {
		s.PrimarySession = &shared.PrimarySession{ID: session.ID, State: session.State}
		s.ForegroundActivity = ""
		if session.State == shared.SessionRunning {
			s.ForegroundActivity = shared.ActivityGenerating
		}
		s.PendingAction = ""
		for _, p := range pending {
			if p.Type == shared.MessagePermissionRequest {
				s.PendingAction = shared.PendingPermission
				break
			}
			s.PendingAction = shared.PendingClarification
		}
		s.QueuedPromptCount = len(queue)
		if s.LastActivityAt == nil || session.UpdatedAt.After(*s.LastActivityAt) {
			at := session.UpdatedAt
			s.LastActivityAt = &at
		}
		return s
	})
	if err != nil {
		m.log.Error("project summary", "task", taskID, "err", err)
		return
	}
	if changed {
		m.pub.PublishWorkspace(workspaceID, shared.NotifyTaskStatusSummaryUpdated, shared.StatusSummaryEvent{
			TaskID: taskID, WorkspaceID: workspaceID, StatusSummary: summary,
		})
	}
}
