// Package store is herd's persistence layer: workspaces, tasks, their
// repositories and status summaries, agent profiles, and the tables later
// features fill (sessions, messages, queued prompts, git observations, pull
// requests, webhook deliveries).
//
// It is the only package that imports gorm and the SQL drivers. gorm row
// types stay inside it; every exported method takes and returns shared types
// (or the store's own AgentProfile input).
//
// # Dialects
//
// SQLite (github.com/mattn/go-sqlite3 through gorm.io/driver/sqlite) is the
// embedded default: one file, herd.db, in the data directory. PostgreSQL
// (gorm.io/driver/postgres over pgx) is selected with a postgres:// URL and
// lets several herd replicas share one database. Both run the same queries;
// the schema differs only in column types.
//
// SQLite connections enforce foreign keys, use the write-ahead log, wait up to
// five seconds for a lock and begin every transaction with BEGIN IMMEDIATE.
// The Store holds two SQLite pools: one writer connection, through which
// every change goes, so writers queue in Go rather than racing for the
// database lock, and a few reader connections that WAL lets read while the
// writer writes. On PostgreSQL one pool serves both.
//
// # Git and GitHub
//
// A task repository keeps at most two git observations, its newest and its
// newest successful one (RecordGitObservation prunes the rest); summaries
// total the successful ones and RepositoryGits shows both. A GitHub
// delivery is applied and its id recorded in one transaction
// (ApplyDelivery), so a replay changes nothing and a failure records
// nothing. Check states are kept per source and head commit in
// github_checks; a pull request's checks state derives from them.
//
// # Migrations
//
// Open applies the embedded migrations of the migrations package with
// goose's Provider API, one tree per dialect; on PostgreSQL, replicas that
// start together serialise on goose's advisory lock. Before migrating, Open
// compares the database's schema version with the newest embedded migration
// and refuses a database a newer herd has already migrated: old code must not
// write to a schema it does not know.
//
// # Reads are batched
//
// Loading tasks takes a constant number of queries whatever their number:
// one for the task rows, one for all their repositories (task_id IN …) and
// one for all their status summaries. GetTask and ListTasks share that loader,
// which scans its rows by hand instead of through gorm's reflection because
// it is the hot path of every client's first screen.
//
// The three reads are not wrapped in one transaction: a task, its
// repositories and its first summary are committed together, so a reader that
// sees a task sees them too; later changes to a summary only make it newer.
//
// The task list is ordered newest first by (created_at, id) and paged by
// keyset: the opaque cursor encodes the last row's created_at and id, so
// tasks created while a client pages never shift or repeat a page. On
// PostgreSQL tasks.id uses the C collation so that id order is byte order on
// both dialects.
//
// # Status summaries
//
// Only the projector writes summaries. SummarySources reads everything the
// summaries of a batch of tasks derive from, with a constant number of
// queries, reading the summary rows before the source rows; WriteSummary
// stores one summary by compare-and-update on its revision, so of two
// writers the one that read older sources loses. A session's state,
// foreground activity, subagent count and context_lost change only
// together with its state_revision (Transition, SetActivity,
// ResetActivity, SetAgentSession).
//
// A summary's preview derives from two bounded lines on the session row,
// written in the transaction that makes them true: last_agent_line when an
// agent message is stored or finished complete (insertMessage,
// FinishMessage), last_prompt_line when a prompt is sent (MarkSent). Each
// keeps the first non-blank line of its message, at most 512 bytes
// (previewExcerpt), so SummarySources reads them with the task row and
// never a transcript; streamed appends leave them alone.
//
// # Sessions and messages
//
// A session's state changes only through Transition, a compare-and-set in
// one UPDATE, so of two racing transitions one wins. Messages take
// consecutive seqs from a counter on the session row, allocated in the
// insert's transaction. A user message is stored under its
// client_message_id, unique across all tasks: a retry in the same task finds
// the stored message, a reuse elsewhere collides. Its dispatch_state
// (pending, claimed under a token, sent) lets exactly one dispatcher claim
// it and only that claim mark it sent. While a message streams, its text
// grows by segment rows (message_segments) rather than by rewriting the
// content, and FinishMessage folds the segments into the content once.
//
// # Push devices
//
// The VAPID key pair is one row, made by the first VAPIDKeys call with an
// insert that does nothing when a row exists, then read back, so replicas
// starting together end with one pair. A push device is one row per
// subscription endpoint: SavePushDevice upserts by endpoint, keeping the
// id and created_at, and checks the per-workspace bound after taking the
// workspace row (FOR NO KEY UPDATE on PostgreSQL; SQLite's single writer
// serialises), so concurrent subscribers cannot pass it. A device belongs
// to the server token it was subscribed under (token_digest): reads,
// updates and removals by a person name the token and do not see
// another's devices; DropPushDevice (its push service forgot it) and
// PruneStalePushDevices (start-up) do not ask.
//
// # Times
//
// Every time is written in UTC, truncated to microseconds, the precision both
// databases keep, and converted to UTC when read. A value read back is
// therefore equal (==) to the value returned when it was written, on either
// dialect. PostgreSQL stores TIMESTAMPTZ; SQLite stores DATETIME text that
// the driver parses back, and since every stored time is UTC in the same
// layout, comparing that text orders times correctly.
//
// # Errors
//
// Conditions a person can act on are returned as *shared.Error: not_found
// for a missing workspace, task or session, bad_request for a malformed
// request or cursor. Everything else is wrapped with context and is an
// internal error to the caller.
//
// The package starts no goroutines of its own; database/sql's pools run
// theirs until Close.
package store
