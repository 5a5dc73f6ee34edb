// Package gitdiff reads what changed in a git working tree, as review
// shows it: trees to compare, one page of the files changed between two
// trees, and one page of one file's diff.
//
// # Trees
//
// Every comparison is between two tree objects, so that later pages of a
// comparison describe the same state however the working tree moves
// meanwhile. Snapshot writes the working tree as a tree (what a commit of
// everything, untracked files included, would hold) through a copy of the
// index, without touching the user's index, stash, refs or HEAD;
// BaseTree gives the tree a task's work started from; CheckTree checks an
// id a client sends back.
//
// # Costs
//
// Git reads a loose object with a handful of system calls, twice for a
// diff (its size, then its content), and the blobs a snapshot writes are
// loose. SnapshotFiles, for a first page against the working tree, lists
// the files while the snapshot's index still exists, and git then reads
// their new sides from the working tree instead; later pages (Files) read
// the objects. See docs/benchmarks.md, "Review: changed files".
//
// # Bounds
//
// Every git command runs through package gitcli, bounded in time and in
// output, and its output is read as a stream: Files keeps the page's
// records and three totals whatever the number of files changed, File
// keeps the page's lines and stops git once the page is full. A line of a
// diff longer than shared.MaxReviewLineBytes is cut while it is read, so
// even a file of one 8 MiB line costs a few KiB of buffer; a file with a
// side larger than shared.MaxReviewFileBytes is not diffed at all.
//
// # What reaches git
//
// Tree ids are checked to be full hex ids before git sees them, and
// follow --end-of-options, so none reads as an option. Paths are
// pathspecs with the "top" and "literal" magic, so that ":(top)", "*" or
// "--x" are just names; git's diff drivers and text conversions
// configured in the repository are never run (--no-ext-diff,
// --no-textconv).
//
// Errors of git wrap its *gitcli.Error, whose message is git's own;
// malformed input is a shared.CodeBadRequest error, and a tree or a
// file's change that does not exist a shared.CodeNotFound one.
//
// # Goroutines
//
// None: every function runs git on the caller's goroutine (gitcli's
// copying goroutines end before it returns).
package gitdiff
