-- Open requests.
--
-- The inbox lists a workspace's unanswered permission and clarification
-- requests, newest first, and each push carries their count. A partial
-- index holds only those rows, so the read costs what is open, not what
-- the transcripts hold. Queries must spell these conditions as literals
-- for the planner to use it.

-- +goose Up
CREATE INDEX messages_open_requests ON messages (created_at)
    WHERE status = 'pending' AND type IN ('permission_request', 'clarification_request');

-- +goose Down
DROP INDEX messages_open_requests;
