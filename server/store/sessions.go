package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// CreateSession creates a session of a task in state CREATED. The task's
// first session becomes its primary session.
func (s *Store) CreateSession(ctx context.Context, taskID, agentProfileID string) (shared.Session, error) {
	switch {
	case taskID == "":
		return shared.Session{}, shared.Errorf(shared.CodeBadRequest, "task_id is required")
	case agentProfileID == "":
		return shared.Session{}, shared.Errorf(shared.CodeBadRequest, "agent_profile_id is required")
	}
	created := now()
	row := sessionRow{
		ID: NewID(), TaskID: taskID, AgentProfileID: agentProfileID,
		State: string(shared.SessionCreated), NextMessageSeq: 1,
		CreatedAt: created, UpdatedAt: created,
	}
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			if isForeignKeyViolation(err) {
				return taskNotFound(taskID)
			}
			return fmt.Errorf("insert session: %w", err)
		}
		err := tx.Model(&taskRow{}).
			Where("id = ? AND primary_session_id IS NULL", taskID).
			UpdateColumn("primary_session_id", row.ID).Error
		if err != nil {
			return fmt.Errorf("set primary session: %w", err)
		}
		return nil
	})
	if err != nil {
		return shared.Session{}, err
	}
	return row.toSession(), nil
}

// GetSession returns a session.
func (s *Store) GetSession(ctx context.Context, id string) (shared.Session, error) {
	var row sessionRow
	err := s.read.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return shared.Session{}, sessionNotFound(id)
	}
	if err != nil {
		return shared.Session{}, fmt.Errorf("load session %s: %w", id, err)
	}
	return row.toSession(), nil
}

// ListSessions returns a task's sessions, oldest first.
func (s *Store) ListSessions(ctx context.Context, taskID string) ([]shared.Session, error) {
	var rows []sessionRow
	err := s.read.WithContext(ctx).Where("task_id = ?", taskID).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list sessions of task %s: %w", taskID, err)
	}
	out := make([]shared.Session, len(rows))
	for i, r := range rows {
		out[i] = r.toSession()
	}
	return out, nil
}

// SessionsInStates returns every session in one of the given states,
// oldest first; start-up recovery uses it.
func (s *Store) SessionsInStates(ctx context.Context, states ...shared.SessionState) ([]shared.Session, error) {
	var rows []sessionRow
	err := s.read.WithContext(ctx).Where("state IN ?", states).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list sessions by state: %w", err)
	}
	out := make([]shared.Session, len(rows))
	for i, r := range rows {
		out[i] = r.toSession()
	}
	return out, nil
}

// Activity is what a session is doing besides its lifecycle state.
type Activity struct {
	// Foreground is empty when the session is settled.
	Foreground shared.ForegroundActivity
	// Subagents counts the session's live subagents.
	Subagents int
}

// Transition moves a session to state `to` with activity act, provided it is in one of the states
// `from`, recording errorMessage (cleared when empty) and raising its
// state_revision. The check and the change are one UPDATE, so of two racing
// transitions only one wins; a session in another state is a conflict
// naming its state.
func (s *Store) Transition(ctx context.Context, id string, from []shared.SessionState, to shared.SessionState, errorMessage string, act Activity) (shared.Session, error) {
	res := s.write.WithContext(ctx).Model(&sessionRow{}).
		Where("id = ? AND state IN ?", id, from).
		Updates(map[string]any{
			"state": string(to), "error_message": errorMessage,
			"foreground_activity": string(act.Foreground), "active_subagent_count": act.Subagents,
			"state_revision": gorm.Expr("state_revision + 1"), "updated_at": now(),
		})
	if res.Error != nil {
		return shared.Session{}, fmt.Errorf("update session %s: %w", id, res.Error)
	}
	row, err := s.loadSession(ctx, id)
	if err != nil {
		return shared.Session{}, err
	}
	if res.RowsAffected == 0 {
		return shared.Session{}, shared.Errorf(shared.CodeConflict, "session %q is %s, not one of %v", id, row.State, from)
	}
	return row.toSession(), nil
}

// SetActivity sets a session's activity, provided it is still in state
// `in`, raising its state_revision. It reports changed false, and writes
// nothing, when the session already has that activity or has left `in`;
// the session returned tells which.
func (s *Store) SetActivity(ctx context.Context, id string, in shared.SessionState, act Activity) (shared.Session, bool, error) {
	res := s.write.WithContext(ctx).Model(&sessionRow{}).
		Where("id = ? AND state = ? AND (foreground_activity <> ? OR active_subagent_count <> ?)", id, string(in), string(act.Foreground), act.Subagents).
		Updates(map[string]any{
			"foreground_activity": string(act.Foreground), "active_subagent_count": act.Subagents,
			"state_revision": gorm.Expr("state_revision + 1"),
		})
	if res.Error != nil {
		return shared.Session{}, false, fmt.Errorf("update activity of session %s: %w", id, res.Error)
	}
	row, err := s.loadSession(ctx, id)
	if err != nil {
		return shared.Session{}, false, err
	}
	return row.toSession(), res.RowsAffected == 1, nil
}

// ResetActivity clears the foreground activity and subagent count of every
// session that has any, raising their state_revision, and returns them.
// Start-up recovery calls it: activity is only known while the execution
// behind it is connected, and no execution survives a restart.
func (s *Store) ResetActivity(ctx context.Context) ([]shared.Session, error) {
	db := s.write.WithContext(ctx)
	var ids []string
	err := db.Model(&sessionRow{}).Where("foreground_activity <> '' OR active_subagent_count <> 0").Pluck("id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("find sessions with activity: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	// Start-up runs alone, so the rows found are the rows reset.
	err = db.Model(&sessionRow{}).Where("id IN ?", ids).Updates(map[string]any{
		"foreground_activity": "", "active_subagent_count": 0,
		"state_revision": gorm.Expr("state_revision + 1"),
	}).Error
	if err != nil {
		return nil, fmt.Errorf("reset session activity: %w", err)
	}
	var rows []sessionRow
	if err := db.Where("id IN ?", ids).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load reset sessions: %w", err)
	}
	out := make([]shared.Session, len(rows))
	for i, r := range rows {
		out[i] = r.toSession()
	}
	return out, nil
}

// SetAgentSession records the agent's own session id behind a session and
// contextLost, why the agent's latest start could not restore its earlier
// context ("" when it did, or had nothing to restore). A change of
// contextLost raises the state_revision, since clients show it with the
// state. It reports changed false, and writes nothing, when both are
// stored already; the session returned is the stored one either way.
func (s *Store) SetAgentSession(ctx context.Context, id, agentSessionID, contextLost string) (shared.Session, bool, error) {
	if agentSessionID == "" {
		return shared.Session{}, false, shared.Errorf(shared.CodeBadRequest, "agent session id is required")
	}
	res := s.write.WithContext(ctx).Model(&sessionRow{}).
		Where("id = ? AND (agent_session_id <> ? OR context_lost <> ?)", id, agentSessionID, contextLost).
		Updates(map[string]any{
			"agent_session_id": agentSessionID, "context_lost": contextLost,
			"state_revision": gorm.Expr("state_revision + CASE WHEN context_lost <> ? THEN 1 ELSE 0 END", contextLost),
			"updated_at":     now(),
		})
	if res.Error != nil {
		return shared.Session{}, false, fmt.Errorf("update agent session of session %s: %w", id, res.Error)
	}
	row, err := s.loadSession(ctx, id)
	if err != nil {
		return shared.Session{}, false, err
	}
	return row.toSession(), res.RowsAffected == 1, nil
}

// SetSessionConfig stores the agent's configuration of a session. It
// reports changed false, and writes nothing, when that configuration is
// stored already. The configuration is not part of the session's state:
// the state_revision and updated_at stay as they are.
func (s *Store) SetSessionConfig(ctx context.Context, id string, c shared.SessionConfig) (bool, error) {
	if c.Options == nil {
		c.Options = []shared.ConfigOption{}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return false, fmt.Errorf("encode config of session %s: %w", id, err)
	}
	res := s.write.WithContext(ctx).Model(&sessionRow{}).Where("id = ? AND config <> ?", id, string(raw)).
		UpdateColumn("config", string(raw))
	if res.Error != nil {
		return false, fmt.Errorf("update config of session %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		// Unchanged, or no such session.
		if _, err := s.loadSession(ctx, id); err != nil {
			return false, err
		}
	}
	return res.RowsAffected == 1, nil
}

// loadSession reads a session row through the writer, so it sees the
// writer's own changes at once.
func (s *Store) loadSession(ctx context.Context, id string) (sessionRow, error) {
	var row sessionRow
	err := s.write.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return row, sessionNotFound(id)
	}
	if err != nil {
		return row, fmt.Errorf("load session %s: %w", id, err)
	}
	return row, nil
}

func sessionNotFound(id string) error {
	return shared.Errorf(shared.CodeNotFound, "session %q not found", id)
}
