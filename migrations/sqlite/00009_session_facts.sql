-- What a session's agent says about the session besides its transcript.
--
-- title is the agent's title for the session (session_info_update),
-- cleaned and bounded by the store; '' until the agent names it.
-- context_used and context_size are the tokens of the latest usage_update,
-- 0 and 0 (with has_usage false) until the first. cost_amount and
-- cost_currency are the session's cumulative cost as the agent last
-- reported it; cost_currency '' means none was reported. The projector
-- sums cost per currency into the task's status summary from the session
-- rows it reads anyway, so the summary needs no further query.
-- commands is the JSON array of the slash commands the agent last offered
-- (bounded by the store); only the session snapshot reads it.

-- +goose Up
ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN has_usage BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE sessions ADD COLUMN context_used BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN context_size BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cost_amount REAL NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cost_currency TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN commands TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE sessions DROP COLUMN commands;
ALTER TABLE sessions DROP COLUMN cost_currency;
ALTER TABLE sessions DROP COLUMN cost_amount;
ALTER TABLE sessions DROP COLUMN context_size;
ALTER TABLE sessions DROP COLUMN context_used;
ALTER TABLE sessions DROP COLUMN has_usage;
ALTER TABLE sessions DROP COLUMN title;
