// Package faults is herd's fault suite: it runs the product binary the way
// it is deployed and breaks what can break around it, then counts every
// way the server's answers and its stored state disagree with the rule
// "a write that fails is retried or the session goes to a visible,
// recoverable state; nothing is acknowledged or shown complete that is not
// stored, and readiness reports the database".
//
// The package holds only tests. TestMain builds `herd` once (go build, no
// race detector: the product binary) and every scenario starts real
// `herd serve` processes with `--addr 127.0.0.1:0` (the port is read from
// the "listening" log line), a data directory of their own and
// `--demo=false`. The suite talks to them only as a script would: JSON
// envelopes over WebSockets (github.com/coder/websocket, and one
// hand-written client that can put a burst of frames on the wire in one
// write), plain HTTP, signals, and /proc to see the agent processes a
// server started (its children by parent pid). Agents are the built-in
// mock agent; chunk i of `/scenario stream N MS` is "i ", so the whole text
// of every stream is known in advance.
//
// # Scenarios
//
//   - TestKillMidStreamLosesNothingAcknowledged: 8 sessions stream
//     (`stream 2000 5`, about ten seconds), each with 3 prompts queued
//     behind the stream, while four workers keep sending more prompts;
//     the server gets SIGKILL mid-stream. It restarts on the same data
//     directory; once /readyz is 200 recovery alone must run every
//     acknowledged prompt; then prompts whose answer the kill cut off are
//     sent again under the same client_message_id, and one acknowledged
//     prompt per session is retried (must answer duplicate).
//   - TestSigtermUnderLoadShutsDownCleanly: the same load, then SIGTERM:
//     herd must exit with status 0 within its --shutdown-timeout (10 s);
//     then the same restart and counts.
//   - TestAgentCrashFailsItsSessionVisibly: six sessions' agents crash
//     mid-stream (`/scenario crash`, a prompt queued behind), two others
//     stream beside them.
//   - TestDatabaseOutageLosesNothing/{sqlite,postgres}: 4 sessions stream
//     (`stream 800 5`) with 2 prompts queued each while the database goes
//     away for 8 s: SQLite's write lock is held by another connection
//     (storetest.LockSQLite; herd's busy timeout is 5 s, so its writes fail
//     as unavailable), or a private PostgreSQL (storetest.OwnPostgres) is
//     stopped and started again. Prompts sent during the outage must be
//     refused as unavailable. The outage lasts until at least one has been
//     refused: on SQLite writers queue for the single writer connection,
//     each waiting out the busy timeout. Without PostgreSQL's server
//     binaries the postgres case skips, and fails instead when CI=true.
//   - TestBadInputBatteryGetsCodedErrors: about 90 hostile frames against
//     one server with a token (invalid UTF-8, a binary frame, malformed and
//     non-object JSON, missing, over-long and mistyped ids, wrong types,
//     unknown actions, payload fields of the wrong JSON type, values out of
//     bounds, ids that name nothing, NUL in strings, over-size prompts,
//     deeply nested JSON), each of which must get its documented code with
//     a message, never internal, the connection answering a ping after
//     each; a frame over 1 MiB (close 1009, then a fresh connection
//     works); 3000 pipelined pings and 3000 pipelined bad frames, each
//     burst written in one piece by a client that reads every answer as it
//     comes, all of which must be answered; finally /metrics, read with the
//     token, must count no request answered internal.
//   - TestAuthAndOriginHoldAtTheEdge: 401 without or with a wrong token on
//     the WebSocket, the API and /metrics; ten wrong tokens from 127.0.0.2
//     (bound as the client's source address) then 429 with Retry-After,
//     its right token included, while 127.0.0.3 gets in; a foreign or
//     look-alike Origin refused (403), the --allowed-origin and the
//     server's own accepted; the login cookie works; herd refuses to start
//     with a 15-byte token, or beyond loopback without one.
//
// # Counts
//
// Every scenario records counts; those with an expectation fail the test
// when they miss it (most must be 0). After a fault and the settling that
// follows (every acknowledged prompt answered, no queue, no RUNNING
// session, or a 60 s deadline):
//
//   - acked_lost: acknowledged client_message_ids neither in the
//     transcript nor in the queue.
//   - duplicates: extra copies of a client_message_id, extra answers to
//     one prompt (prompts run at most once), extra stream messages.
//   - never_ran: acknowledged prompts with no answer; left_by_recovery the
//     same, plus queued prompts and RUNNING sessions, counted after the
//     restart before any retry.
//   - queued_left: prompts still queued.
//   - refused_stored: prompts answered with an error that were stored all
//     the same.
//   - streaming_left: messages still streaming.
//   - holes: stream messages whose text is not a prefix of "0 1 2 …" (or,
//     through an outage, not all of it).
//   - shown_not_stored: streams the client was shown more of before the
//     fault than the server stored.
//   - stream_end_wrong: streams not ended as the fault should leave them:
//     failed after SIGKILL, cancelled or failed after SIGTERM (the
//     protocol's statuses for a stream herd stopped), complete after an
//     outage; streams_cut counts those the fault cut off (8 of 8).
//   - stale_badges: sessions RUNNING or showing an activity once settled,
//     and task status summaries that still disagree with their session
//     (state, activity, queued count) after 10 s.
//   - orphans: agent processes of the server still alive 5 s after it was
//     killed or stopped, or after their own crash; unreaped: exited agents
//     the server has not waited for.
//   - prompts_acked, prompts_refused, prompts_unanswered, prompts_retried:
//     the ledger; retries_refused and acked_retries_not_duplicate must be
//     0.
//   - outage: outage_requests_refused (at least 1),
//     outage_acked_before_end (0), outage_answers_wrong (an answer other
//     than unavailable, 0), readyz_503_during_outage (at least 1).
//   - crash: failed_without_error, crash_message_not_failed (the partial
//     answer must end failed), failed_session_took_prompt (must be
//     not_promptable), healthy_streams_whole (2).
//   - bad input: bad_inputs (inputs tried), wrong_answers,
//     unanswered_after, oversized_frame_not_closed_1009, flood_unanswered,
//     flood_closed, internal_errors.
//   - access: access_checks, access_checks_failed.
//
// Durations (ms) are recorded too: restart until ready, ready until
// settled, SIGTERM until exit, the outage and its slowest refusal.
//
// # Report
//
// Each scenario logs its counts (go test -v shows them). When
// HERD_FAULTS_REPORT names a file, TestMain writes the whole report there
// as JSON: per scenario its name, passed, seconds, counts, expectations
// and durations. `make test-faults` runs only this package, verbosely,
// and prints artifacts/faults.json.
//
// # Time and goroutines
//
// The suite takes about half a minute on 2 cores. It never sleeps to
// synchronise: it polls with deadlines. The sleeps it has pace the prompt
// workers and hold the outage for its length. Its goroutines each end with
// their scenario: a reader per connection (until it closes), a reader of
// each server's log and a waiter for its exit (until it exits), the
// prompt workers (until the fault ends their connection), the readiness
// probe and the outage's prompt senders (until the outage ends). When
// every test passed, TestMain checks that none is left (goleak).
package faults
