// Package gateway serves herd's WebSocket protocol: it decodes requests,
// dispatches them to the actions, answers on the connection's control lane
// and fans workspace feed notifications out to subscribed connections.
//
// # Ordering
//
// Requests that change a connection's subscriptions (boot, which joins the
// selected workspace, and workspace.subscribe/unsubscribe) run on the
// reader goroutine in the order the client sent them. Other requests run
// concurrently, at most Config.MaxInFlight per connection; when that many
// are running the reader stops reading, slowing only that client.
// Notifications are published only after the change they report has
// committed.
//
// # Lanes
//
// Each connection has an outbox (outbox.go) drained by one writer: control
// frames (responses and errors) first, always; then, one frame per turn,
// the workspace feed and every session with something queued, so one noisy
// session never holds back another session, the feed or an answer.
//
// Session notifications keep one ordered queue per session. Semantic ones
// (message added or deleted, a message's final state, state and activity
// changes, turns, the queue) are barriers: nothing queued after them goes
// first. Replaceable ones (session.message.updated while the message
// streams) are keyed by message: a newer state replaces the queued one in
// place when no barrier stands between them. Each session may queue at
// most Config.Allowance replaceable frames; beyond that, or beyond the
// connection's Config.MaxQueuedBytes, the session's own oldest replaceable
// frame is evicted, never another session's and never a semantic frame.
// Evictions lose only intermediate states: the final state of every
// message is semantic.
//
// A full control lane, semantic bound (Config.SemanticCap, counted over
// the feed and all sessions) or byte bound closes the connection with
// status 1013, so the client reconnects and reconciles; nothing ordered is
// dropped silently. Every write has a deadline (Config.WriteTimeout): a
// client that stops reading is closed when it passes, and its queues are
// freed. Metrics count queued frames by class, replacements, evictions
// and closes by reason; each session stream logs its replacements and
// evictions when it closes on a connection.
//
// # Goroutines
//
//   - per connection, the reader: ServeHTTP's goroutine (owned by net/http);
//     it ends when the socket closes and then waits for the others below.
//   - per connection, the writer (conn.writeLoop): ends when the connection's
//     context is cancelled, a close is requested, or a write fails.
//   - per request not marked ordered: one goroutine, bounded by MaxInFlight,
//     waited for by the connection before it releases its resources.
//   - Shutdown: one short-lived goroutine waiting for the handlers.
package gateway
