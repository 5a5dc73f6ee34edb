-- Git observations against the upstream branch.
--
-- upstream_ahead and upstream_behind count the commits of a task
-- repository's branch against its upstream; NULL when the branch has none.

-- +goose Up
ALTER TABLE git_observations ADD COLUMN upstream_ahead INTEGER;
ALTER TABLE git_observations ADD COLUMN upstream_behind INTEGER;

-- +goose Down
ALTER TABLE git_observations DROP COLUMN upstream_behind;
ALTER TABLE git_observations DROP COLUMN upstream_ahead;
