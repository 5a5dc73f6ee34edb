// Package mockagent is herd's scripted Agent Client Protocol agent, the
// agent of the built-in mock profile (`herd mock-agent`). Run speaks ACP v1
// on the given stdin and stdout: it echoes every prompt, or plays the
// scenario named on a prompt's first line, `/scenario NAME [ARGS]`:
//
//	stream N [MS]      N text chunks "0 ", "1 ", …, MS ms apart
//	reasoning-burst N  N thought chunks like stream's, then the answer "done"
//	tool               a plan, a read tool call with two updates (in_progress,
//	                   completed with its result), then an answer
//	permission         an edit tool call and session/request_permission with
//	                   options "allow" and "reject"; answers "allowed" or "denied"
//	permission-busy    permission, and while the request waits an unrelated
//	                   read tool call that runs to completion
//	permission-kinds   an execute tool call and session/request_permission with
//	                   one option of each kind ("once" allow_once, "always"
//	                   allow_always, "no" reject_once, "never" reject_always);
//	                   answers "chose KIND"
//	permission-kinds die
//	                   the same request, but the agent exits with status 3
//	                   200 ms after asking, while the request waits
//	permission-pair    two execute tool calls whose permissions ("allow",
//	                   "reject") are asked at once; logs each outcome to
//	                   stderr ("permission answered" tool=… outcome=…) and
//	                   answers "chose A and B"
//	plan N [MS]        an N-step plan sent whole at every change, each step
//	                   going in progress then completed, MS ms apart; with
//	                   the last in progress it asks permission to finish
//	                   ("allow" Finish, "reject" Stop), then answers
//	                   "planned N steps" or "stopped at step N"
//	content            answers with the prompt's blocks after its text, e.g.
//	                   "received: image image/png 68 bytes; resource_link
//	                   a.go file:///w/a.go size 12" (see turn.content)
//	clarify            asks "Which branch should I use?" with _herd/clarify
//	                   (agent.ClarifyMethod); answers "answer: ANSWER"
//	write FILE TEXT    writes TEXT to FILE inside the session cwd, reporting an
//	                   edit tool call, then answers "wrote N bytes to FILE"
//	error              the text "Something went wrong; you can retry." then a
//	                   JSON-RPC error on session/prompt: code -32603, data
//	                   {"error":"mock agent: scripted recoverable error"}; the
//	                   agent stays up
//	crash              three stream chunks, then exit status 3 with a line on stderr
//	sleep MS           holds the turn MS ms without a frame
//	slow-start MS      applies to initialize, which happens before any prompt:
//	                   use --slow-start MS or HERD_MOCK_SLOW_START_MS; as a
//	                   prompt it only says so
//	background K [MS]  Claude-style background work that outlives the turn
//	                   (see turn.backgroundWork)
//	background-held K [MS]
//	                   the same work, but the prompt request stays open until
//	                   it has finished (a held-open subagent turn); another
//	                   prompt may run meanwhile
//	config             answers the session's settings: "mode=ask model=mock-fast
//	                   thinking=false"
//	set-config OPTION VALUE
//	                   changes a setting itself, telling the client with
//	                   config_option_update (with --config legacy,
//	                   current_mode_update for the mode), then answers
//	                   "set OPTION=VALUE"
//	claude-replay NAME [MS]
//	                   the prompt turn the real Claude adapter sent in the
//	                   recording NAME of package claudeframes (stream,
//	                   subagent, shell, edit), frame for frame, pausing MS ms
//	                   after its human-origin usage_update (the foreground's
//	                   yield) while the prompt stays open
//	tool-output BYTES [STEPS]
//	                   a command whose text output grows to BYTES (≤ 16 MiB)
//	                   over STEPS in_progress updates, then completes
//	tool-diff LINES    a completed edit with two diffs: a new file of LINES
//	                   lines and a LINES-line file with every 50th line changed
//	facts [USED SIZE [COST [CURRENCY]]]
//	                   three slash commands (two with input hints), usage
//	                   without cost, the answer "facts reported", usage with
//	                   the cumulative COST (default 84000 of 200000 tokens,
//	                   0.42 USD) and the title "Facts from the mock agent"
//
// The mock offers three settings (config.go): a mode (ask, code, plan), a
// model (mock-fast, mock-smart) and a yes/no "thinking", as ACP session
// config options, or with --config legacy (env HERD_MOCK_CONFIG) the mode
// and model as ACP modes and models set with session/set_mode and
// session/set_model, or with --config none not at all. Its rule: the
// model cannot change while a turn runs (an invalid-request error says
// so); the others can.
//
// The agent advertises promptCapabilities image and embeddedContext unless
// started with --text-only (HERD_MOCK_TEXT_ONLY=1).
//
// A turn stops at session/cancel and ends with stop reason cancelled, as it
// does when the client withdraws a permission or clarification request;
// background work already launched carries on. The background scenarios
// speak herd's explicit lifecycle fields (agent.Provenance), which Claude
// does not send; claude-replay plays what Claude really sends. HERD_MOCK_SLOW_START_MS sets
// the slow start when the flag is absent, so a profile can start slow
// through its environment. The frames are built from package agent's wire
// types, so the mock and the runtime share one definition of each shape.
//
// # Goroutines
//
// The SDK's connection reads stdin and runs each request on a goroutine of
// its own until the connection ends. The background scenarios run their
// completion on a goroutine each (mock.goBackground); Run starts none once
// it is shutting down and waits for those it started before it returns.
// permission-busy runs its unrelated read on a goroutine the turn waits for,
// permission-pair one per request, waited for too; `permission-kinds die`
// starts one that ends the process.
//
// Tests that need the mock agent as a process use package mocktest, which
// turns the test binary itself into the agent.
package mockagent
