// Package server is herd's HTTP edge and the owner of its runtime: it
// validates configuration, opens the database, registers agent profiles,
// seeds the demo workspace, serves /healthz, /readyz, /metrics, /ws (the
// gateway), the login page, the read-only REST mirror under /api/v1 and the
// web app, and shuts all of it down in order. It is the only package that
// imports echo.
//
// # Start-up and readiness
//
// Start listens first, so /healthz answers at once and /readyz answers 503,
// then runs the start-up work; /readyz turns 200 only when that work is
// done, and turns 503 again when shutdown begins.
//
// # Goroutines
//
//   - the HTTP server's Serve loop, started by Start and ended by Shutdown,
//     which waits for it;
//   - per request, net/http's handler goroutines, drained by Shutdown; the
//     WebSocket ones are closed by the gateway first, because
//     http.Server.Shutdown does not track hijacked connections.
package server
