-- Truthful task status.
--
-- sessions.state_revision rises by one with every change of a session's
-- state or activity (foreground_activity, active_subagent_count), so a
-- client keeps the newest of a list response and a live event.
--
-- tasks.error_dismissed_at hides every agent error that occurred at or
-- before it from the task's status summary (error.dismiss).
--
-- messages_task_type serves the projector's per-task reads of pending
-- requests and errors.

-- +goose Up
ALTER TABLE sessions ADD COLUMN state_revision BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN error_dismissed_at DATETIME;
CREATE INDEX messages_task_type ON messages (task_id, type, status);

-- +goose Down
DROP INDEX messages_task_type;
ALTER TABLE tasks DROP COLUMN error_dismissed_at;
ALTER TABLE sessions DROP COLUMN state_revision;
