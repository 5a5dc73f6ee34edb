// Package gateway serves herd's WebSocket protocol: it decodes requests,
// dispatches them to the actions, answers on the connection's control lane
// and fans workspace feed notifications out to subscribed connections.
//
// # Ordering
//
// Requests that change what a connection follows or shows in front (boot,
// which joins the selected workspace, workspace.subscribe/unsubscribe and
// session.subscribe/unsubscribe/focus) run on the reader goroutine in the
// order the client sent them. Other requests run concurrently.
// Notifications are published only after the change they report has
// committed.
//
// # Backpressure
//
// Every frame the reader reads gets exactly one answer (a response, or an
// error: for a frame that cannot be decoded, an unknown action or a failed
// request alike). Before reading a frame the reader takes a slot for its
// answer, and the writer frees the slot once it has written the answer. So
// a connection has at most Config.MaxInFlight requests read and not yet
// answered on the socket, and the reader reads no further while that many
// are outstanding or while Config.MaxAnswerBytes of answers wait to be
// written. A client that sends faster than it reads is slowed down, and
// only that client: its frames wait in its own socket. Answers therefore
// never overflow: the close for a full control lane is only a guard
// against a bug.
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
// frame is evicted, never another session's and never a semantic frame. A
// semantic frame (of a session or the feed) that does not fit the byte
// bound evicts replaceable frames of any session, oldest first, until it
// fits. Evictions lose only intermediate states: the final state of every
// message is semantic.
//
// The connection is closed with status 1013, so the client reconnects and
// reconciles, only when an ordered notification cannot be queued: the
// semantic bound (Config.SemanticCap, counted over the feed and all
// sessions) is full, or the byte bound is full of semantic frames. Nothing
// ordered is dropped silently. Every write has a deadline
// (Config.WriteTimeout): a client that stops reading is closed when it
// passes, and its queues are freed. Metrics count queued frames by class,
// replacements, evictions and closes by reason; each session stream logs
// its replacements and evictions when it closes on a connection.
//
// # Keepalive
//
// Every connection is pinged about every Config.PingInterval; a client
// from which nothing arrives, not even the pong, within Config.PingTimeout
// is closed (keepalive.go), so a dead peer is noticed even when nothing
// needs writing to it.
//
// # Goroutines
//
//   - per connection, the reader: ServeHTTP's goroutine (owned by net/http);
//     it ends when the socket closes and then waits for the others below.
//   - per connection, the writer (conn.writeLoop): ends when the connection's
//     context is cancelled, a close is requested, or a write fails, and
//     then cancels the context.
//   - per connection, the keepalive (conn.keepalive): ends with the
//     connection's context, or when it closes an unanswering connection.
//     Its pings are control frames, which coder/websocket writes between
//     the writer's frames, as it writes pongs and close frames.
//   - per request not marked ordered: one goroutine, bounded by MaxInFlight,
//     waited for by the connection before it releases its resources.
//   - Shutdown: one short-lived goroutine waiting for the handlers.
package gateway
