// Package loadbench is herd's load harness, `herd bench`: it drives real
// herd servers with mock agents and WebSocket clients on loopback and
// prints one JSON report: the figures, and verdicts on the budgets of
// DESIGN.md (measured runs are recorded in docs/benchmarks.md). Its
// scenarios:
//
//	a  one selected session while others stream
//	b  one client with every streaming session open: correlated replies and
//	   task switches, idle, under light load, loaded and with agents reniced
//	c  a client that stops reading (run inside b's server)
//	d  summary fan-out to many workspace subscribers
//	e  task-switch churn in a large and a small workspace
//	f  the memory of idle connections
//
// Each scenario starts its own server as a child process (`-server-bin
// serve`, herd itself by default, on a loopback port with a temporary data
// directory), so one scenario's leftovers never weigh on the next; every
// session's agent is the server's built-in mock agent. The server is
// stopped with SIGTERM (SIGKILL for the whole tree after 20 s), and the
// report says whether it stopped gracefully and left no process behind.
//
// # Goroutines
//
// All end before a scenario returns: per bench connection a reader
// (wsClient.readLoop, ends when the socket closes); per server one waiting
// for the process to exit; a resource sampler per measured phase (stopped
// by the phase); a stream driver while sessions stream (stopped by its
// scenario); and the workers of parallel, waited for by it.
package loadbench
