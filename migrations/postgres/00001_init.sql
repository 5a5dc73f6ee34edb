-- The whole domain schema for PostgreSQL.
--
-- Times are TIMESTAMPTZ with microsecond precision. JSON documents are TEXT,
-- exactly as on SQLite. Every table keeps the same columns as
-- sqlite/00001_init.sql.

-- +goose Up
CREATE TABLE workspaces (
    id         TEXT        NOT NULL PRIMARY KEY,
    name       TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

-- The C collation makes id order byte order, the order the task list's
-- keyset cursor and its tiebreak assume.
CREATE TABLE tasks (
    id                 TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id       TEXT             NOT NULL REFERENCES workspaces (id),
    title              TEXT             NOT NULL,
    description        TEXT             NOT NULL DEFAULT '',
    primary_session_id TEXT,
    archived           BOOLEAN          NOT NULL DEFAULT FALSE,
    pull_request_url   TEXT,
    created_at         TIMESTAMPTZ      NOT NULL,
    updated_at         TIMESTAMPTZ      NOT NULL
);

-- Serves the task switcher: WHERE workspace_id = ? AND archived = false
-- ORDER BY created_at DESC, id DESC, with keyset pagination.
CREATE INDEX tasks_workspace_active ON tasks (workspace_id, archived, created_at DESC, id DESC);

-- Serves the same listing with archived tasks included.
CREATE INDEX tasks_workspace_all ON tasks (workspace_id, created_at DESC, id DESC);

CREATE TABLE task_repositories (
    id            TEXT        NOT NULL PRIMARY KEY,
    task_id       TEXT        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    path          TEXT        NOT NULL,
    base_branch   TEXT        NOT NULL DEFAULT '',
    branch        TEXT        NOT NULL DEFAULT '',
    worktree_path TEXT        NOT NULL DEFAULT '',
    run_in_place  BOOLEAN     NOT NULL DEFAULT FALSE,
    position      INTEGER     NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    UNIQUE (task_id, position)
);

CREATE TABLE agent_profiles (
    id                 TEXT        NOT NULL PRIMARY KEY,
    name               TEXT        NOT NULL,
    provider           TEXT        NOT NULL,
    command            TEXT        NOT NULL,
    args               TEXT        NOT NULL DEFAULT '[]',
    env                TEXT        NOT NULL DEFAULT '{}',
    working_dir_policy TEXT        NOT NULL DEFAULT '',
    builtin            BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL
);

-- agent_profile_id deliberately has no foreign key: a session's history
-- outlives the profile that started it.
CREATE TABLE sessions (
    id                    TEXT        NOT NULL PRIMARY KEY,
    task_id               TEXT        NOT NULL REFERENCES tasks (id),
    agent_profile_id      TEXT        NOT NULL,
    state                 TEXT        NOT NULL,
    foreground_activity   TEXT        NOT NULL DEFAULT '',
    active_subagent_count INTEGER     NOT NULL DEFAULT 0,
    error_message         TEXT        NOT NULL DEFAULT '',
    next_message_seq      BIGINT      NOT NULL DEFAULT 1,
    created_at            TIMESTAMPTZ NOT NULL,
    updated_at            TIMESTAMPTZ NOT NULL
);

CREATE INDEX sessions_task ON sessions (task_id, created_at);

ALTER TABLE tasks
    ADD CONSTRAINT tasks_primary_session_fk
    FOREIGN KEY (primary_session_id) REFERENCES sessions (id) ON DELETE SET NULL;

CREATE TABLE messages (
    id                TEXT        NOT NULL PRIMARY KEY,
    session_id        TEXT        NOT NULL REFERENCES sessions (id),
    task_id           TEXT        NOT NULL REFERENCES tasks (id),
    seq               BIGINT      NOT NULL,
    type              TEXT        NOT NULL,
    content           TEXT        NOT NULL DEFAULT '',
    status            TEXT        NOT NULL,
    pending_id        TEXT,
    client_message_id TEXT,
    metadata          TEXT        NOT NULL DEFAULT '{}',
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL,
    UNIQUE (session_id, seq)
);

-- A client_message_id is owned by one message per task; NULLs (messages
-- without one) never collide.
CREATE UNIQUE INDEX messages_task_client_message ON messages (task_id, client_message_id);

CREATE INDEX messages_session_pending ON messages (session_id, pending_id);

CREATE TABLE queued_prompts (
    id                TEXT        NOT NULL PRIMARY KEY,
    session_id        TEXT        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    client_message_id TEXT        NOT NULL,
    content           TEXT        NOT NULL,
    position          BIGINT      NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    UNIQUE (session_id, client_message_id)
);

CREATE INDEX queued_prompts_session_position ON queued_prompts (session_id, position);

CREATE TABLE git_observations (
    id                     TEXT        NOT NULL PRIMARY KEY,
    task_repository_id     TEXT        NOT NULL REFERENCES task_repositories (id) ON DELETE CASCADE,
    observed_at            TIMESTAMPTZ NOT NULL,
    additions              INTEGER     NOT NULL DEFAULT 0,
    deletions              INTEGER     NOT NULL DEFAULT 0,
    changed_files          INTEGER     NOT NULL DEFAULT 0,
    ahead                  INTEGER     NOT NULL DEFAULT 0,
    behind                 INTEGER     NOT NULL DEFAULT 0,
    comparison_unavailable BOOLEAN     NOT NULL DEFAULT FALSE,
    error                  TEXT        NOT NULL DEFAULT ''
);

-- Serves the latest observation per repository.
CREATE INDEX git_observations_latest ON git_observations (task_repository_id, observed_at DESC, id DESC);

CREATE TABLE pull_requests (
    id           TEXT        NOT NULL PRIMARY KEY,
    task_id      TEXT        REFERENCES tasks (id) ON DELETE SET NULL,
    repository   TEXT        NOT NULL,
    number       INTEGER     NOT NULL,
    url          TEXT        NOT NULL,
    head_branch  TEXT        NOT NULL DEFAULT '',
    state        TEXT        NOT NULL,
    draft        BOOLEAN     NOT NULL DEFAULT FALSE,
    merged       BOOLEAN     NOT NULL DEFAULT FALSE,
    checks_state TEXT        NOT NULL DEFAULT '',
    review_state TEXT        NOT NULL DEFAULT '',
    updated_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (repository, number)
);

CREATE INDEX pull_requests_task ON pull_requests (task_id);

CREATE TABLE github_deliveries (
    delivery_id TEXT        NOT NULL PRIMARY KEY,
    event       TEXT        NOT NULL,
    received_at TIMESTAMPTZ NOT NULL
);

CREATE INDEX github_deliveries_received ON github_deliveries (received_at);

CREATE TABLE task_status_summaries (
    task_id      TEXT        NOT NULL PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    workspace_id TEXT        NOT NULL REFERENCES workspaces (id),
    revision     BIGINT      NOT NULL,
    payload      TEXT        NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE task_status_summaries;
DROP TABLE github_deliveries;
DROP TABLE pull_requests;
DROP TABLE git_observations;
DROP TABLE queued_prompts;
DROP TABLE messages;
ALTER TABLE tasks DROP CONSTRAINT tasks_primary_session_fk;
DROP TABLE sessions;
DROP TABLE agent_profiles;
DROP TABLE task_repositories;
DROP TABLE tasks;
DROP TABLE workspaces;
