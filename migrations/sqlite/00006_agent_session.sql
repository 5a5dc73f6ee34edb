-- Agent session continuity.
--
-- agent_session_id is the agent's own ACP session id behind a herd
-- session, kept so that the next execution (after herd restarted, or the
-- agent exited) continues that session; '' until the agent opened one.
-- context_lost says why the latest execution could not restore the agent's
-- earlier context and started afresh; '' when it restored it or there was
-- nothing to restore.

-- +goose Up
ALTER TABLE sessions ADD COLUMN agent_session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN context_lost TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN context_lost;
ALTER TABLE sessions DROP COLUMN agent_session_id;
