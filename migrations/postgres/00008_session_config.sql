-- Session configuration.
--
-- config is the agent's configuration of the session (its models, modes
-- and other options, with their current values) as JSON in the shape of
-- shared.SessionConfig, as the agent last reported it; '' until it has
-- reported any. It outlives the agent's process, so a reload or a restart
-- still shows it.

-- +goose Up
ALTER TABLE sessions ADD COLUMN config TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN config;
