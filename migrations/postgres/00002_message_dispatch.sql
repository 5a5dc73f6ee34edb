-- Durable prompt dispatch and append-only streaming content.
--
-- dispatch_state tracks a user message's way to the agent: pending (stored,
-- not yet handed to an agent), claimed (one dispatcher owns it; claim_token
-- names which), sent (the agent accepted it). A retry or a restart finds
-- the state here and dispatches a message at most once per claim.
--
-- A client_message_id is owned by one message anywhere: a retry in the
-- same task finds it, and a reuse in another task collides.
--
-- message_segments holds the appended text of a message while it streams,
-- so an append writes only its own bytes; completing the message folds the
-- segments into messages.content.

-- +goose Up
ALTER TABLE messages ADD COLUMN dispatch_state TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN claim_token TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN dispatched_at TIMESTAMPTZ;

DROP INDEX messages_task_client_message;
CREATE UNIQUE INDEX messages_client_message ON messages (client_message_id);
CREATE INDEX messages_dispatch ON messages (session_id, dispatch_state);

CREATE TABLE message_segments (
    message_id TEXT    NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    position   BIGINT  NOT NULL,
    text       TEXT    NOT NULL,
    PRIMARY KEY (message_id, position)
);

-- +goose Down
DROP TABLE message_segments;
DROP INDEX messages_dispatch;
DROP INDEX messages_client_message;
CREATE UNIQUE INDEX messages_task_client_message ON messages (task_id, client_message_id);
ALTER TABLE messages DROP COLUMN dispatched_at;
ALTER TABLE messages DROP COLUMN claim_token;
ALTER TABLE messages DROP COLUMN dispatch_state;
