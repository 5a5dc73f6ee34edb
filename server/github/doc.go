// Package github keeps the pull requests of herd's tasks up to date from
// GitHub: a Webhook that GitHub delivers events to, and an optional Poller
// of GitHub's REST API for servers GitHub cannot reach. Both store what
// they learn through the store (server/store) and then mark the tasks
// whose pull requests changed, so that the projector re-derives their
// status summaries: persist, then publish. A PullRequestClient opens the
// pull request of a task's branch.
//
// # Wiring
//
// The webhook is enabled by a secret. NewWebhook refuses an empty one: an
// unsigned endpoint would let anyone rewrite pull request state, so a
// server without a secret does not mount the route at all (404). A Webhook
// is a plain http.Handler; the HTTP edge mounts it for every method (it
// answers 405 to anything but POST). The Poller is off unless a token is
// configured: NewPoller refuses an empty one, and Run polls until its
// context ends.
//
// # Deliveries
//
// The Webhook reads at most MaxPayloadBytes (GitHub's own cap), verifies
// X-Hub-Signature-256, the HMAC-SHA256 of the body under the secret, in
// constant time, and answers:
//
//   - 405 to a method other than POST, 413 to a larger body;
//   - 401 when the signature is missing or wrong, storing nothing;
//   - 400 without X-GitHub-Delivery or X-GitHub-Event, or when the payload
//     is not the JSON the event needs (the body says what is wrong);
//   - 200 "pong" to ping;
//   - 202 to any event but pull_request, pull_request_review, check_suite,
//     check_run and status: it is ignored and not recorded, since nothing
//     it could do needs guarding against a replay;
//   - 200 "nothing to change" to an action herd does not track (a check
//     suite's unknown conclusion, say), also not recorded;
//   - 200 "applied" once the delivery is stored, 200 "already delivered"
//     to a delivery id stored before (GitHub's redeliveries reuse the id),
//     which changes nothing;
//   - 500 when the store fails; nothing was recorded, so a redelivery is
//     applied.
//
// A delivery's id and its effect are committed in one transaction
// (store.ApplyDelivery): a crash cannot record a delivery whose effect was
// lost, nor apply one twice. Delivery records, and check records not
// updated since, are pruned once they are a week old (longer than GitHub
// offers redelivery), at most once an hour, by the delivery that finds
// pruning due.
//
// # Linking pull requests to tasks
//
// A pull request belongs to the task whose pull_request_url is its
// html_url, else to the task with a repository whose working branch is its
// head branch (herd's branches are herd/<task id prefix>-<slug>, unique in
// practice); among several, the newest task. The link is re-derived at
// every delivery or poll of the pull request, so a link that moves takes
// effect then, and both the task it left and the task it joined are
// marked. A pull request no task owns is stored only if it was stored
// before (it is then unlinked): herd keeps its tasks' pull requests, not
// every pull request of the repositories a webhook covers.
//
// # What each event changes
//
//   - pull_request, any action: state (open or closed), draft, merged,
//     head branch and commit, URL, updated_at. review_requested asks for
//     review; requested reviewers ask for it while no review is recorded.
//   - pull_request_review: the same pull request fields, and the review
//     state: a submitted approval or change request sets it, a comment
//     leaves it, a dismissal asks for review again. Without storing every
//     review this is the latest verdict of anyone, not GitHub's decision
//     over all reviewers; the Poller computes that decision exactly.
//   - check_suite (requested, rerequested, completed), check_run (any
//     action) and status record the state of one check source on one
//     commit: a check suite by id, a check run by suite and name (a re-run
//     replaces the earlier run of that name), a status by context.
//     Conclusions success, neutral and skipped pass; failure, timed_out,
//     cancelled, action_required, startup_failure and stale fail; a run
//     not completed is pending. Statuses success, pending, failure and
//     error map likewise.
//
// A pull request's checks state aggregates every source recorded on its
// head commit: failure when any failed, else pending when any runs, else
// success when any passed, else none. Keeping one state per source, rather
// than one per pull request, is what makes this exact: GitHub Actions
// reports each workflow as its own check suite, and one workflow's success
// must not hide another's failure, nor one still running. Checks recorded
// before their pull request (events often arrive that way) count once it
// arrives; a new head commit starts from the checks recorded on it.
//
// # Out-of-order deliveries
//
// GitHub does not promise delivery order. A pull_request or
// pull_request_review delivery whose pull_request.updated_at is older than
// the stored updated_at changes nothing. A check observation older (by
// GitHub's time: a suite's updated_at, a run's completed_at or started_at,
// a status's updated_at) than the stored one of its source changes
// nothing.
//
// # Polling
//
// Each round first looks for new pull requests by branch, then polls.
//
// It looks for the pull requests of every working branch of a repository
// of a task not archived that no stored pull request has as head
// (store.BranchesToDiscover). The repository's origin remote (git remote
// get-url origin, run in its path) names its GitHub repository when it is
// on the host of the GitHub the API serves (github.com for
// api.github.com, HOST for https://HOST/api/v3): https://HOST/OWNER/REPO,
// ssh://git@HOST/OWNER/REPO or git@HOST:OWNER/REPO, with or without .git.
// GET /repos/{owner}/{repo}/pulls?head={owner}:{branch}&state=all lists
// the branch's pull requests (the first 10), open or closed, and each is
// stored as a polled one is, so it links to the task by its head branch.
// A branch leaves the list once a pull request of it is stored; until
// then it is asked about every round, mostly answered 304. Each path's
// origin is read once for the Poller's life, a missing origin or one on
// another host included: such a repository costs one git call, not one
// per round, and an origin changed later is read by the next Poller. A
// pull request whose head is in a fork is not found this way, nor a
// second pull request of a branch once one is stored.
//
// It then polls the pull requests tasks link to explicitly
// (store.LinkedPullRequestURLs) and the stored open ones
// (store.OpenPullRequests), those just found included: GET
// /repos/{owner}/{repo}/pulls/{number}, and while it is open its head
// commit's check runs (latest per name) and combined status and its
// reviews. Lists are read to their first 100 entries.
//
// Every request after the first to a path sends the ETag of the last
// answer (If-None-Match); a 304 answer does not count against the rate
// limit, and a poll or search whose answers are all unchanged writes
// nothing. An answer with X-RateLimit-Remaining 0 holds every request
// until X-RateLimit-Reset; a 403 or 429 rate-limit answer holds them for
// its Retry-After, else until the reset, else a minute; holds last
// between a second and an hour, so the poller never spins. Rounds start
// Interval apart; each phase works on at most Concurrency branches or
// pull requests at once. What a poll or search finds goes through the
// same transaction and rules as a delivery.
//
// # Opening pull requests
//
// A PullRequestClient opens a pull request for a task's pushed branch
// (POST /repos/{owner}/{repo}/pulls), one request bounded by 30 seconds,
// and maps GitHub's refusals to coded errors that carry GitHub's own
// message. RepositoryOf names the GitHub repository of a remote URL as the
// Poller does for origins. CreatedPullRequest.Apply stores what GitHub
// answered through the same transaction and rules as a poll, so that the
// new pull request shows at once rather than at the next poll or
// delivery, and a delivery that came first is not undone.
//
// # Goroutines
//
//   - PullRequestClient.Create starts none.
//   - The Webhook starts none: each delivery is handled, and pruning done,
//     on the goroutine net/http serves it on.
//   - Poller.Run polls on its caller's goroutine. Each phase of a round
//     starts a goroutine per branch looked for, or per pull request
//     polled, at most Concurrency at once, and waits for all of them
//     before the next phase; Run returns only after its last round ended.
//     git runs on those goroutines, through gitcli.
package github
