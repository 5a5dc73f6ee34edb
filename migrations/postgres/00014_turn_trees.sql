-- Turn trees: the worktree of each repository of a task as each turn
-- found it at its start.
--
-- herd writes a tree object of the worktree (tracked files as on disk,
-- untracked files not ignored, deletions; server/gitdiff.Snapshot) before
-- the agent is handed a prompt, and keeps its id here, so that review can
-- show what one turn changed: from the tree of its start to the tree of
-- the next turn's start in that repository, or to the worktree for the
-- newest turn. turn_id is the id of the prompt message that started the
-- turn. A turn is recorded once: a repeated record keeps the first tree.
-- The rows go with their repository or task.

-- On PostgreSQL turn_id uses the C collation, as tasks.id does, so that
-- turns recorded in the same microsecond come in the same order on both
-- dialects.

-- +goose Up
CREATE TABLE turn_trees (
    repository_id TEXT             NOT NULL REFERENCES task_repositories (id) ON DELETE CASCADE,
    turn_id       TEXT COLLATE "C" NOT NULL,
    task_id       TEXT             NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    session_id    TEXT             NOT NULL,
    tree          TEXT             NOT NULL,
    recorded_at   TIMESTAMPTZ      NOT NULL,
    PRIMARY KEY (repository_id, turn_id)
);

-- Serves a task's newest turns, and the turn after a given one.
CREATE INDEX turn_trees_task ON turn_trees (task_id, recorded_at);

-- +goose Down
DROP TABLE turn_trees;
