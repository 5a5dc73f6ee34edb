-- Pull-request checks from GitHub.
--
-- pull_requests.head_sha is the commit at the head of a pull request:
-- check runs, check suites and commit statuses name commits, not pull
-- requests. pull_requests_head serves the lookup of a commit's pull
-- requests.
--
-- github_checks keeps the latest state of every check source (a check
-- suite, a check run by name, a commit status context) on a commit, so a
-- pull request's checks_state aggregates all of them rather than the last
-- event. observed_at is GitHub's time of the state and orders the
-- observations of one source; updated_at is when herd stored it and
-- serves pruning.
--
-- tasks_pull_request_url and task_repositories_branch serve the link from
-- a pull request to its task; pull_requests_head_branch serves the
-- poller's search for the branches whose pull request is not known yet.

-- +goose Up
ALTER TABLE pull_requests ADD COLUMN head_sha TEXT NOT NULL DEFAULT '';
CREATE INDEX pull_requests_head ON pull_requests (repository, head_sha);

CREATE TABLE github_checks (
    repository  TEXT     NOT NULL,
    head_sha    TEXT     NOT NULL,
    source      TEXT     NOT NULL,
    state       TEXT     NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (repository, head_sha, source)
);

CREATE INDEX github_checks_updated ON github_checks (updated_at);
CREATE INDEX tasks_pull_request_url ON tasks (pull_request_url);
CREATE INDEX task_repositories_branch ON task_repositories (branch);
CREATE INDEX pull_requests_head_branch ON pull_requests (head_branch);

-- +goose Down
DROP INDEX pull_requests_head_branch;
DROP INDEX task_repositories_branch;
DROP INDEX tasks_pull_request_url;
DROP TABLE github_checks;
DROP INDEX pull_requests_head;
ALTER TABLE pull_requests DROP COLUMN head_sha;
