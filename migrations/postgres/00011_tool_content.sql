-- Tool call content.
--
-- tool_contents holds the body of each part of a tool call's content (the
-- text, or a diff's unified diff) whole, up to the per-call bound the
-- server keeps (shared.ToolStoredBytes). The message's metadata carries
-- each part's first bytes and its size; message.tool_content.get pages
-- through the rest here. Bodies are bytes, so a page is cut by byte
-- offset in the database rather than read whole. An update of the call's
-- content replaces all its rows.

-- +goose Up
CREATE TABLE tool_contents (
    message_id TEXT    NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    position   BIGINT  NOT NULL,
    size       BIGINT  NOT NULL,
    body       BYTEA   NOT NULL,
    PRIMARY KEY (message_id, position)
);

-- +goose Down
DROP TABLE tool_contents;
