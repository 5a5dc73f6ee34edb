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
// Each connection has an outbox of bounded lanes drained by one writer in
// priority order: control (responses and errors), then semantic (ordered
// notifications). A lane that overflows closes the connection with status
// 1013 so the client reconnects and reconciles; nothing is dropped silently.
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
