// Package ui is herd's browser interface, written with go-app v10 and
// compiled to WebAssembly. The server renders the same components once per
// page request, with the first screen's data (Routes' SnapshotFunc), so the
// task rows are in the first paint, before any script runs.
//
// # Structure
//
// One root component, the shell, owns the page: the top bar with the
// connection indicator, the task switcher (a left sidebar on desktop, a
// sheet on phones), and the main pane (the selected task, or the new task
// form when none is selected). The layout follows the viewport width:
// desktopMinWidth and the media queries of web/static/app.css use the same
// 768 px breakpoint. Task rows are the only child components, so that an
// unchanged row is skipped cheaply on re-render; the sidebar and the sheet
// render the very same row component from the same state.Row.
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
//     task.status_summary.updated become store writes.
//   - Session notifications go to the session pane, which keeps the
//     selected task's shown session subscribed (state.SessionDetail): it
//     lists the task's sessions, subscribes to the primary or newest one,
//     unsubscribes when another task or session is shown, subscribes again
//     after a reconnect or a seq gap, and flushes streamed message updates
//     once per requestAnimationFrame. Unconfirmed prompts (state.Outbox)
//     are sent again with their ids once the session is loaded again.
//     Requests report back through the shell's context, never through an
//     event's: go-app drops a dispatch whose source element has left the
//     page. The session header names the state with the task rows'
//     indicators and counts running subagents.
//   - The selected task's active error (from its status summary) is a
//     banner with the preview as text and a Dismiss button that sends
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
// goroutines and the boot hook; creating a task and every session request
// run in ctx.Async. Results always come back through ctx.Dispatch.
package ui
