// Package gitcli runs the git command line for herd, bounded in time and in
// output, so that a stuck or talkative git can cost a caller neither an
// unbounded wait nor unbounded memory.
//
// Every command runs with a deadline (Runner.Timeout, DefaultTimeout when
// zero, and earlier if the caller's context says so) in its own process
// group, so that a timeout kills git together with any hook or helper it
// started. Run keeps at most Runner.Limit bytes of standard output and
// fails rather than hand back a truncated answer; Stream hands standard
// output to a callback one token at a time and never holds more than one
// token. Standard error is kept only up to a few KiB, for the message of
// the Error a failed command returns.
//
// Commands run with a fixed environment on top of the process's own:
// git never prompts for credentials (GIT_TERMINAL_PROMPT=0), never takes
// optional locks (GIT_OPTIONAL_LOCKS=0, so that observing a working tree
// never holds the index lock an agent's own git needs), and speaks the C
// locale, so that messages are the same on every machine. Variables that
// point git at another repository (GIT_DIR, GIT_WORK_TREE and the like)
// are removed: a command works on the directory it is given, unless its
// Runner's Env sets one of them deliberately.
//
// A Runner adds up the CPU time its commands spent (user plus system, as
// the kernel reports it when git exits), so callers can tell what their
// git work costs.
//
// # Goroutines
//
// None outlive a call: os/exec copies git's output on goroutines of its
// own that end before Run or Stream returns.
package gitcli
