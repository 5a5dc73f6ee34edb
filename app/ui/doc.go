// Package ui is herd's browser interface, written with go-app v10 and
// compiled to WebAssembly. The server renders the same components once per
// page request, with the first screen's data (Routes' SnapshotFunc), so the
// task rows are in the first paint, before any script runs.
//
// # Structure
//
// The root component, the shell, keeps only layout and routing: the top
// bar with the connection indicator (and, while disconnected, the
// "Reconnecting… Retry now" banner; live indicators then freeze as the
// last known state), the task switcher (a left sidebar on desktop, a sheet
// on phones) and the main pane: the selected task, or the new task form
// when none is selected. The layout follows the viewport width:
// desktopMinWidth and the media queries of web/static/app.css use the
// same 768 px breakpoint; from 1100 px the task's details sit beside its
// chat, below that they are a tab.
//
// Addresses select what is shown: /tasks/{task_id} and
// /tasks/{task_id}/sessions/{session_id} (state.Route). Every address is
// the same root component, so navigating keeps it mounted; OnNav takes the
// new selection, history back and forward included, and the server
// renders the first screen of any of them. Task rows and session tabs are
// links, so the server-rendered list works before the app runs.
//
// The components:
//
//   - taskRow, one row of the switcher, in triage order (state.Triage:
//     needs you, running, finished since you looked, the rest), with its
//     last activity and its actions (rename, archive). The sidebar and the
//     sheet render the very same row from the same state.Row.
//   - taskView, the selected task: its header, its chat pane (the session
//     pane, a sessionView) and its details (description, repositories,
//     git, pull request). It owns the session pane's lifetime: mounted, it
//     keeps the shown session subscribed; dismounted, it unsubscribes.
//     Requests report back through the shell's context, and the view
//     renders with every render of the shell (its Rev input).
//   - messageItem, one transcript entry: only entries that changed are
//     rendered again, so a streaming message does not re-render the rest.
//
// State lives in package state: the store of tasks, the session detail,
// the outbox, the scroll follow rule, drafts, what was seen, the triage.
//
// # The chat pane
//
// The transcript scrolls on its own, between the session's header and the
// dock below it, which holds the request the agent waits on (its choices
// pinned above the composer), the queue and the composer. It follows new
// output while the person is at its end, stops when they scroll up and
// offers "↓ New output" to jump back (state.Follow); a reload restores
// the position from sessionStorage. It opens with the messages the
// snapshot carries (the newest 100) and pages back with message.list on
// request. While a question is open the composer answers it, unless the
// person chooses to send a new prompt instead; on a desktop Enter sends
// and Shift+Enter adds a line (on a phone Enter adds a line and the
// button sends). Drafts are kept per task in localStorage.
//
// The dock also holds the session's current plan (plan.go) as a checklist
// that folds, remembered per session, and goes once every step is done and
// the turn settled. The composer carries images (pasted, or attached with
// a button when the agent takes images) as thumbnails and @file mentions
// completed from the worktree (session.files.list) as chips (attach.go);
// the paste listener is the browser's own, like Enter's, because the
// clipboard's files are readable only inside the event.
//
// Every dispatch goes through dispatch (wake.go), which follows it with a
// browser timer: in Go's js/wasm port a Go timer armed by a goroutine a
// browser callback woke was seen not to fire before the next browser
// event, and go-app's frames run on one.
// Turns that did not end normally (cancelled, failed, interrupted) carry a
// mark with a Retry, as do agent errors, in plain words with the agent's
// own text behind a disclosure.
//
// Keyboard: Ctrl/Cmd+K focuses the task search, Alt+↓/↑ move to the
// next/previous task, Alt+Shift+↓ to the next task that needs you,
// Alt+Shift+I opens the inbox.
//
// # The inbox
//
// /inbox (inbox.go) shows every pending request of the workspace, newest
// first, in the main pane (the whole width on a phone), reached from the
// top bar's "Needs you N" link. Each item names its task (from the task
// rows), how long it has waited, what it asks, and the decision inline:
// the agent's options as the session's request card colours them
// (permission.respond), or an answer box (clarification.respond), plus a
// link to the session. It reads only state.Inbox and the store: showing
// it never subscribes to a session. The link loads it with inbox.list in
// the boot hook, after every (re)connect, and applies the feed's
// inbox.request.* events. attention.go carries out what state.Attention
// decides: document.title, navigator.setAppBadge where the browser has
// it, the flash's browser timer, and a WebAudio chime, created on first
// use; audio the browser refuses fails silently.
//
// # Review
//
// /tasks/{id}/review (review*.go) shows what a task changed, reached from
// a row's git totals (a link laid over them, beside the row's own link)
// and from the session bar; its query holds the repository, the scope
// (the whole task or one turn), the file and the session comments go to
// (state.Route). It reads on request only (review.get, review.files and
// review.file, one bounded page at a time, state.ReviewFiles and
// state.ReviewDiff taking only the newest answer) and subscribes to
// nothing; Refresh reads the worktree again. On a desktop the side column
// (files, comments, finishing) sits beside the diff; on a phone the list
// shows until a file is chosen, then its diff in full with a way back,
// the lines scrolling sideways inside their box. The diff renders in
// blocks of at most 64 rows of one hunk, each a component, so selecting
// lines re-renders only the blocks it touches, and it has one click
// handler for all its line numbers. Comments are kept per
// task in localStorage (state.ReviewComments) and sent as one prompt
// (shared.ReviewPrompt) through the same outbox and message.add as the
// composer's prompts: the shell keeps one outbox per session, which the
// session pane and the review share, so neither overwrites what the other
// holds. Commit, push and pull request show git's or GitHub's own words
// when they fail.
//
// # First screen
//
// On the server, OnPreRender loads the snapshot (what boot would answer)
// into the store, so the page arrives with its rows, and embeds the same
// data as HTML-escaped text in #herd-boot. In the browser, OnInit reads
// that element before go-app replaces the server's markup and starts the
// store from it, so the client's first render shows the same rows; the
// live boot then reconciles. go-app writes attribute values with Go string
// quoting rather than HTML escaping, so user text (titles, descriptions)
// must only ever be rendered as text, never in an attribute.
//
// # Data flow
//
// The shell owns a state.Store and, once mounted in the browser, a link:
// the wsclient.Client and its callbacks. Every store write happens inside
// ctx.Dispatch on the UI goroutine, in the order the writes were
// dispatched; components only read the store while rendering.
//
//   - OnConnect (the link's boot): after every (re)connect it sends boot
//     for the workspace of the previous boot, applies the first page of
//     tasks, pages through the rest with task.list, then drops tasks the
//     listing no longer has (state.Store.Retain). Boot also joins the
//     workspace feed on the server, so there is no separate subscribe.
//     Every request that answers with tasks takes a state.Mark before it is
//     sent and applies its answer with state.ResponseWrite, so a live event
//     that overtook the answer is not undone.
//   - Notifications: task.created, task.updated, task.deleted and
//     task.status_summary.updated become store writes;
//     inbox.request.opened and inbox.request.closed go to the inbox.
//   - Session notifications go to the session pane, which keeps the
//     selected task's shown session subscribed (state.SessionDetail): it
//     lists the task's sessions, subscribes to the one the address names,
//     else the primary or newest one,
//     unsubscribes when another task or session is shown, subscribes again
//     after a reconnect or a seq gap, and flushes streamed message updates
//     once per requestAnimationFrame. Unconfirmed prompts (state.Outbox)
//     are sent again with their ids once the session is loaded again.
//     Requests report back through the shell's context, never through an
//     event's: go-app drops a dispatch whose source element has left the
//     page. The session header names the state with the task rows'
//     indicators and counts running subagents.
//   - The selected task's active error (from its status summary) is a
//     banner above its chat, in plain words with the preview as text
//     behind a disclosure, and a Dismiss button that sends
//     error.dismiss {task_id, stamp}. The banner leaves only when a newer
//     summary without the error arrives; a failed request shows why.
//   - The selected task's Git panel lists each repository's latest
//     observation from the open session's detail (its snapshot, then
//     session.git.updated), and its Refresh button sends
//     session.git.refresh; the result arrives as a notification.
//   - The task detail links a pull request by URL (task.update with
//     pull_request_url) and unlinks it; the answer is applied with
//     state.ResponseWrite like task.create's.
//   - The browser's online and visibilitychange events nudge the client
//     to reconnect at once instead of waiting out its backoff.
//
// # Notifications on this device
//
// The top bar's bell opens a modal panel (notify.go; a dialog under the
// bell on desktop, a sheet on phones) whose state is state.Push. It says
// what the browser lacks for Web Push and how to fix it, and turns
// notifications on only from its button: the permission is asked inside
// that click (browsers refuse it otherwise), then PushManager.subscribe
// with push.config.get's key, then push.subscribe; the credential it
// answers goes to IndexedDB for the service worker (server/webui's
// worker_push.js). The browser's side is web/static/push.js
// (window.herdPush), awaited from goroutines of ctx.Async (pushbridge.go).
// window.herdRegisterPush(subscription, name?) is the step after
// PushManager.subscribe on its own, for browser tests whose headless
// Chromium reaches no push service.
//
// With ?test-hooks=1 in the page URL, window.__herdTestDropAfterNextSend()
// makes the client drop its connection right after the next message.add
// is sent, so browser tests can lose an answer the way a network does.
//
// #app-root carries data-ready="true" once the first boot response has been
// applied in the browser; the server's render never has it.
//
// # Goroutines
//
// The package starts none of its own. The wsclient.Client owns its
// goroutines and the boot hook; creating a task, every session request and
// every answer from the inbox run in ctx.Async. Results always come back
// through ctx.Dispatch. The flash's timer is the browser's (setTimeout),
// cleared when the shell dismounts.
package ui
