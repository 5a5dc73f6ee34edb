package projector

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// Derive computes a task's status summary from its sources, by the rules
// in the package documentation. It is pure: the same sources give the same
// summary. Revision and UpdatedAt are left zero for the caller to stamp.
func Derive(src store.SummarySource) shared.TaskStatusSummary {
	var out shared.TaskStatusSummary
	deriveSessions(&out, src)
	out.PendingAction = pendingAction(src.Pending)
	if src.NewestError != nil && !src.AnsweredError {
		e := src.NewestError
		out.ActiveError = &shared.ActiveError{
			SessionID: e.SessionID, Stamp: e.MessageID, OccurredAt: e.OccurredAt, Preview: Preview(e.Content),
		}
	}
	out.QueuedPromptCount = src.QueuedPrompts
	out.Git = gitSummary(src.Repositories)
	out.PullRequest = pullRequestSummary(src.PullRequests)
	out.Preview = preview(src)
	out.Cost = taskCost(src.Sessions)
	return out
}

// deriveSessions sets the facts that come from the task's session rows:
// the primary session, the busy aggregate and the last activity.
func deriveSessions(out *shared.TaskStatusSummary, src store.SummarySource) {
	var generating, background bool
	for _, s := range src.Sessions {
		if s.ID == src.PrimarySessionID {
			out.PrimarySession = &shared.PrimarySession{ID: s.ID, State: s.State}
		}
		switch s.ForegroundActivity {
		case shared.ActivityGenerating:
			generating = true
		case shared.ActivityBackground:
			background = true
		}
		out.ActiveSubagentCount += s.ActiveSubagentCount
		if out.LastActivityAt == nil || s.UpdatedAt.After(*out.LastActivityAt) {
			at := s.UpdatedAt
			out.LastActivityAt = &at
		}
	}
	switch {
	case generating:
		out.ForegroundActivity = shared.ActivityGenerating
	case background:
		out.ForegroundActivity = shared.ActivityBackground
	}
}

// pendingAction is permission when any request waits for a permission,
// else clarification when any waits for an answer, else none. It looks at
// nothing but the pending request rows, so only resolving the request
// that armed it clears it.
func pendingAction(pending []store.PendingRequest) shared.PendingAction {
	var action shared.PendingAction
	for _, p := range pending {
		switch p.Type {
		case shared.MessagePermissionRequest:
			return shared.PendingPermission
		case shared.MessageClarificationRequest:
			action = shared.PendingClarification
		}
	}
	return action
}

// Preview returns the start of an error's content as valid UTF-8 of at
// most shared.MaxErrorPreviewBytes bytes, cut on a rune boundary; each run
// of invalid bytes becomes one U+FFFD, as strings.ToValidUTF8 does.
func Preview(content string) string {
	const limit = shared.MaxErrorPreviewBytes
	if len(content) <= limit && utf8.ValidString(content) {
		return content
	}
	var b strings.Builder
	b.Grow(limit)
	inInvalid := false
	for i := 0; i < len(content); {
		r, size := utf8.DecodeRuneInString(content[i:])
		piece := content[i : i+size]
		i += size
		if r == utf8.RuneError && size == 1 {
			if inInvalid {
				continue
			}
			inInvalid, piece = true, string(utf8.RuneError)
		} else {
			inInvalid = false
		}
		if b.Len()+len(piece) > limit {
			break
		}
		b.WriteString(piece)
	}
	return b.String()
}

// gitSummary totals the latest successful observation of every repository
// that has one; ahead and behind only where the comparison is available,
// and flags the summary when it is not.
// It is nil while no repository has been observed: missing data never
// reads as a clean tree.
func gitSummary(repos []store.RepositoryObservation) *shared.GitSummary {
	var sum *shared.GitSummary
	for _, r := range repos {
		o := r.Observation
		if o == nil {
			continue
		}
		if sum == nil {
			sum = &shared.GitSummary{}
		}
		sum.Additions += o.Additions
		sum.Deletions += o.Deletions
		sum.ChangedFiles += o.ChangedFiles
		if o.ComparisonUnavailable {
			sum.ComparisonUnavailable = true
		} else {
			sum.Ahead += o.Ahead
			sum.Behind += o.Behind
		}
	}
	return sum
}

// prAttention orders pull request states from most to least
// attention-worthy.
var prAttention = []shared.PullRequestState{
	shared.PRFailure, shared.PRBlocked, shared.PRPending, shared.PRAwaitingReview, shared.PRReady,
	shared.PRPassing, shared.PRDraft, shared.PRMerged, shared.PRClosed, shared.PRNeutral,
}

// attention ranks a state: lower is more attention-worthy.
func attention(s shared.PullRequestState) int {
	for i, x := range prAttention {
		if x == s {
			return i
		}
	}
	return len(prAttention)
}

// pullRequestState is the display state of one pull request.
func pullRequestState(pr store.PullRequest) shared.PullRequestState {
	switch {
	case pr.Merged:
		return shared.PRMerged
	case pr.State == store.PullRequestClosed:
		return shared.PRClosed
	case pr.Draft:
		return shared.PRDraft
	case pr.ChecksState == store.ChecksFailure:
		return shared.PRFailure
	case pr.ReviewState == store.ReviewChangesRequested:
		return shared.PRBlocked
	case pr.ChecksState == store.ChecksPending:
		return shared.PRPending
	case pr.ReviewState == store.ReviewRequired:
		return shared.PRAwaitingReview
	case pr.ReviewState == store.ReviewApproved && (pr.ChecksState == store.ChecksSuccess || pr.ChecksState == ""):
		return shared.PRReady
	case pr.ChecksState == store.ChecksSuccess:
		return shared.PRPassing
	}
	return shared.PRNeutral
}

// isOpen reports whether a pull request is still open.
func isOpen(pr store.PullRequest) bool { return pr.State == store.PullRequestOpen && !pr.Merged }

// pullRequestSummary aggregates a task's pull requests: the open ones
// decide the state when there are any, else the terminal ones; the
// representative is the pull request that gave the state, the highest
// number among ties.
func pullRequestSummary(prs []store.PullRequest) *shared.PullRequestSummary {
	if len(prs) == 0 {
		return nil
	}
	sum := &shared.PullRequestSummary{Count: len(prs)}
	for _, pr := range prs {
		if isOpen(pr) {
			sum.OpenCount++
		}
	}
	var best *store.PullRequest
	bestRank := 0
	for i := range prs {
		pr := &prs[i]
		if sum.OpenCount > 0 && !isOpen(*pr) {
			continue
		}
		rank := attention(pullRequestState(*pr))
		if best == nil || rank < bestRank || rank == bestRank && pr.Number > best.Number {
			best, bestRank = pr, rank
		}
	}
	sum.AggregateState = pullRequestState(*best)
	sum.Number, sum.URL = best.Number, best.URL
	return sum
}

// sameSummary reports whether two summaries state the same facts: every
// field but Revision and UpdatedAt is equal.
func sameSummary(a, b shared.TaskStatusSummary) bool {
	return sameTime(a.LastActivityAt, b.LastActivityAt) &&
		samePtr(a.PrimarySession, b.PrimarySession) &&
		a.ForegroundActivity == b.ForegroundActivity &&
		a.ActiveSubagentCount == b.ActiveSubagentCount &&
		a.PendingAction == b.PendingAction &&
		sameError(a.ActiveError, b.ActiveError) &&
		samePtr(a.Git, b.Git) &&
		samePtr(a.PullRequest, b.PullRequest) &&
		a.QueuedPromptCount == b.QueuedPromptCount &&
		a.Preview == b.Preview &&
		slices.Equal(a.Cost, b.Cost)
}

// samePtr compares two optional values of a comparable type.
func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameTime compares two optional instants.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// sameError compares two optional errors, their times as instants.
func sameError(a, b *shared.ActiveError) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SessionID == b.SessionID && a.Stamp == b.Stamp && a.OccurredAt.Equal(b.OccurredAt) && a.Preview == b.Preview
}
