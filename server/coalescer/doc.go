// Package coalescer turns an agent session's stream of tiny text chunks into
// few publications without changing a byte of the transcript or its order.
//
// An agent emits assistant text (KindAgent) and reasoning (KindThinking) in
// chunks of a few bytes, thousands per second, interleaved with barrier
// events: tool calls and their results, permission and clarification
// requests, plans, turn completions, errors, disconnects, execution
// replacements. Persisting and broadcasting every chunk would make a noisy
// agent cost the whole server; the coalescer sits between the agent runtime
// and the sessions layer and hands the latter a short, equivalent stream.
//
// # Outputs
//
// One Coalescer serves one session execution. It hands its Sink three kinds
// of Output:
//
//   - OpOpen creates a message with its first bytes. The first non-empty
//     chunk of a message is published at once, without waiting for a window,
//     so the record exists as soon as the agent starts talking.
//   - OpAppend carries only the bytes received since the message's previous
//     publication, so persisting a long message is a sequence of appends
//     rather than a rewrite of the whole text each time.
//   - OpBarrier passes a barrier event through.
//
// # Messages
//
// Between two barriers each kind has at most one current message, and each
// message has one pending segment: the bytes received since its last
// publication. A chunk joins its kind's current message, opening one if
// there is none. Alternating thinking and agent chunks therefore feed two
// messages, neither ending the other, and both keep coalescing. A barrier
// ends both: it publishes their pending segments in the order the messages
// were opened, then the barrier itself, and the next chunk of either kind
// opens a new message. Empty chunks are ignored.
//
// # Invariants
//
//   - Byte-exact: a message's OpOpen text followed by its OpAppend texts is
//     the concatenation of its chunks. Chunks are opaque bytes, joined and
//     never split or re-encoded, so a UTF-8 sequence split across chunks is
//     whole again after concatenation and no output contains bytes the
//     input did not.
//   - Ordered: outputs follow the order of the calls to Chunk and Barrier.
//     A barrier is published after every chunk fed before it, and a
//     message's outputs never straddle a barrier.
//   - Windowed: two publications of one message are at least Config.Window
//     apart, unless the second is forced by a barrier or by shutdown. A
//     message quiet for longer than a window publishes its next bytes at
//     once.
//   - Lossless: every accepted chunk and barrier reaches the Sink, including
//     on shutdown. Nothing is dropped; overload turns into backpressure.
//
// # Concurrency
//
// The design is the one of tailscale's DERP server: producers put work into
// state guarded by a mutex and signal a capacity-1 wake channel without
// blocking; one owner goroutine, Run, takes everything queued in one pass,
// applies it in order and calls the Sink. Chunk is an append to a slice in
// a short critical section, signalling only when Run has not been woken
// yet, and Run joins a message's chunks in a strings.Builder, so ingestion
// is O(1) amortised per chunk and publication O(n) in the bytes published. Each session has its own Coalescer, lock and
// owner, so no session waits on another.
//
// Time comes from an injected Clock. Run keeps at most one timer, set for
// the earliest end of a running window; its callback only signals the wake
// channel, and a stale wake costs one empty pass.
//
// # Backpressure
//
// The pending count is the text of accepted chunks not yet handed back by
// the Sink, plus a fixed charge per queued chunk or barrier. Bytes waiting
// for their window count too. While the count exceeds
// Config.MaxPendingBytes, Chunk and Barrier wait; they return when Run has
// handed enough to the Sink, when their context ends, or when the
// Coalescer closes. Only a Sink slower than the agent fills the budget, so
// a slow store or publisher slows that session's agent reader and nothing
// else.
//
// # Shutdown
//
// Shutdown is the last barrier. When Run's context ends or Close is called,
// the Coalescer stops accepting input (Chunk and Barrier return ErrClosed,
// and waiting producers are released), Run publishes everything accepted,
// stops its timer and returns.
//
// # Goroutines
//
//   - Run: the owner, started by the caller with a context and waited for
//     by it (Close also waits for it). It is the only goroutine that calls
//     the Sink, the Clock's AfterFunc and Config.NewKey, and it ends when
//     its context ends or Close is called.
//   - The Clock's timer callback runs on a goroutine of the Clock (the time
//     package's for the system clock) and only sends on the wake channel
//     without blocking.
//
// The package starts no goroutine of its own.
package coalescer
