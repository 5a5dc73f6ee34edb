-- Prompt content beyond text.
--
-- prompt_capabilities is the JSON of the shared.PromptCapabilities the
-- session's agent advertised in its latest initialize answer; '' until the
-- agent has started once. A prompt's attachments live in its message's
-- metadata, which needs no column of its own.

-- +goose Up
ALTER TABLE sessions ADD COLUMN prompt_capabilities TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN prompt_capabilities;
