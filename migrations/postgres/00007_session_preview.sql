-- Task row previews.
--
-- last_agent_line and last_prompt_line hold a bounded excerpt of a
-- session's newest complete agent message and of its newest sent prompt:
-- the text from its first non-blank line, at most 512 characters (the
-- store writes at most that line's first 512 bytes). The projector derives
-- the preview of a task's status summary from its primary session's
-- excerpts, so a projection reads one short row per task, never the
-- transcript. '' until the session has such a message.
--
-- Existing sessions are filled from their transcripts once, here; the
-- excerpt then starts at the first character that is not white space.

-- +goose Up
ALTER TABLE sessions ADD COLUMN last_agent_line TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN last_prompt_line TEXT NOT NULL DEFAULT '';
UPDATE sessions s SET
    last_agent_line = COALESCE((
        SELECT left(ltrim(m.content, E' \t\n\x0B\f\r'), 512)
        FROM messages m
        WHERE m.session_id = s.id AND m.type = 'agent' AND m.status = 'complete'
        ORDER BY m.seq DESC LIMIT 1), ''),
    last_prompt_line = COALESCE((
        SELECT left(ltrim(m.content, E' \t\n\x0B\f\r'), 512)
        FROM messages m
        WHERE m.session_id = s.id AND m.type = 'user' AND m.dispatch_state = 'sent'
        ORDER BY m.seq DESC LIMIT 1), '');

-- +goose Down
ALTER TABLE sessions DROP COLUMN last_prompt_line;
ALTER TABLE sessions DROP COLUMN last_agent_line;
