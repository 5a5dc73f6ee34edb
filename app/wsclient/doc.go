// Package wsclient is the browser's one WebSocket to the herd server: it
// sends correlated requests, delivers notifications, and reconnects forever.
// It is built on github.com/coder/websocket, so the same code runs in the
// browser (GOOS=js GOARCH=wasm, over the browser's WebSocket) and on the
// host, where it is tested against a real server.
//
// # Requests
//
// Request gives every request a fresh id, waits for the response or error
// with that id, and bounds the wait with a per-request timeout (10 s by
// default). An error envelope comes back as a *shared.Error. When the socket
// closes, every request still waiting is rejected at once with ErrClosed:
// the server can no longer answer it, so waiting for its timeout would only
// delay the caller's reconciliation. ErrClosed and ErrTimeout both mean the
// outcome is unknown (the server may have acted); ErrNotConnected means the
// request was never sent.
//
// # Reconnecting
//
// After a failed dial or a dropped connection the client waits a capped,
// jittered exponential backoff (250 ms doubling to 10 s by default) and
// dials again, forever. Nudge ends the current wait at once; the UI calls it
// when the browser reports that it is online again or that the page became
// visible. After every successful dial, and before any other use of that
// connection, the client runs the one OnConnect hook, where the application
// boots and subscribes again; the hook's context ends with the connection.
// Drop ends the current connection as a network failure would: waiting
// requests fail with ErrClosed at once and nothing more is read from it.
//
// # Keepalive
//
// The server pings every connection, and the browser answers those pings
// by itself, but a browser cannot send ping frames: without traffic the
// client would notice a dead connection (a phone that lost its network)
// only when a request timed out. So when nothing has come from the server
// for about PingInterval (30 s, jittered), the client sends the protocol's
// ping request; if it goes unanswered for PingTimeout (15 s) the
// connection is dropped as Drop drops it, and the client reconnects and
// runs OnConnect as after any failure.
//
// # Goroutines
//
// A Client owns exactly these goroutines; Close ends all of them and waits:
//
//   - run, started by Start and ended by Close: dials, then reads the
//     connection until it fails (delivering responses to waiting requests
//     and notifications to OnNotification), then waits out the backoff. All
//     callbacks except OnConnect are called from this goroutine, so
//     OnNotification and OnStatus must return quickly: a slow handler delays
//     every response behind it.
//   - one OnConnect goroutine per connection, started by run after the dial
//     and waited for by run before it dials again, so hooks never overlap.
//     It must return once its context is done.
//   - one keepalive goroutine per connection, started and waited for by run
//     like the hook; it ends when the connection does.
//
// Request runs on its caller's goroutine and starts none.
package wsclient
