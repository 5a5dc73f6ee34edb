// Package gitfinish finishes the work in a task's working tree: Read tells
// what finishing needs to know (the branch, the remote a push goes to, the
// upstream, what a commit would take), Commit commits everything and Push
// pushes the branch, setting its upstream. Every git command runs through
// package gitcli, bounded in time and output.
//
// # Errors
//
// What a person can fix comes back as a coded error (package shared)
// carrying git's own words: a shared.CodeConflict for a tree with nothing
// to commit, a missing identity, a failing hook, a detached HEAD, no
// remote, a rejected push or an authentication failure;
// shared.CodeBadRequest for a message that cannot be a commit's;
// shared.CodeUnavailable for a commit or push that outlived its bound
// (CommitTimeout, PushTimeout). A caller that gave up (its context ended)
// gets its context's error back, wrapped; anything else (git missing, a
// full disk) is returned as git reported it, wrapped with what was being
// done.
//
// # Never prompting
//
// herd runs without a person at a terminal, so no git it starts may wait
// for one. gitcli already turns git's terminal prompts off. Push also
// tells credential helpers that can ask (Git Credential Manager) not to
// (credential.interactive=never), keeps git from falling back on
// SSH_ASKPASS, a desktop session's dialog program, and runs ssh in batch
// mode, which fails rather than ask for a passphrase or confirm a new
// host key. The last two apply only when the person configured nothing of
// their own (GIT_ASKPASS or core.askPass; GIT_SSH_COMMAND, GIT_SSH or
// core.sshCommand): those are how people give git a token or a key
// without a prompt, and herd keeps them.
//
// # One operation per working tree
//
// Commit and Push of one directory never interleave: each holds the
// directory's lock, in this process, for its whole length, so that two
// commits cannot race for the index and a push cannot send a branch a
// commit is moving. Waiting for the lock counts against the operation's
// bound. Read takes no lock: it changes nothing (gitcli runs git without
// optional locks), and a push that takes its two minutes must not hold up
// a look at the tree. Nothing keeps the agent's own git out; its commit
// landing between Commit's own and Commit's reading of HEAD would make
// Commit return the agent's commit.
//
// # Goroutines
//
// None: every call does its work on its caller's goroutine.
package gitfinish
