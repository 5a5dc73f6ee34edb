package sessions

import (
	"context"
	"strings"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// The words of the turn marks that need no reason.
const (
	cancelledNotice   = "Cancelled: you stopped this turn."
	archivedNotice    = "Cancelled: the task was archived while the agent was working on this turn."
	interruptedNotice = "Interrupted: herd stopped while the agent was working on this turn."
	maxTokensNotice   = "Stopped: the agent hit its output limit during this turn."
	maxRequestsNotice = "Stopped: the agent reached its limit of model requests during this turn."
	refusalNotice     = "Stopped: the agent refused to continue this turn."
)

// turnMarkID is the id of the mark of the turn that prompt started. Every
// writer of a turn's mark names it so (the turn, the watch of an agent
// that died under it, start-up recovery), so a turn keeps one mark
// whoever writes it first, and a write retried or repeated after a crash
// finds the mark stored instead of adding another.
func turnMarkID(prompt string) string { return prompt + "-turn-mark" }

// storeTurnMark stores the mark of the turn that prompt started (see
// shared.TurnMark), then publishes it. A mark stored already is returned
// as it is, and published again.
func (r *run) storeTurnMark(ctx context.Context, prompt string, outcome shared.TurnOutcome, content string) error {
	msg, err := persisted(r.m, ctx, "store turn mark", r.id, func(ctx context.Context) (shared.Message, error) {
		return r.m.cfg.Store.AppendMessage(ctx, store.NewMessage{
			ID: turnMarkID(prompt), SessionID: r.id, Type: shared.MessageStatus, Status: shared.MessageComplete,
			Content:  storable(content),
			Metadata: &shared.MessageMetadata{Turn: &shared.TurnMark{Outcome: outcome, PromptMessageID: prompt}},
		})
	})
	if err != nil {
		return err
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionMessageAdded, msg, false)
	return nil
}

// markTurn marks the turn that prompt started, if it still holds the
// session's foreground (see takePrompt). A mark that cannot be stored is
// logged: the turn settles all the same.
func (r *run) markTurn(ctx context.Context, prompt string, outcome shared.TurnOutcome, content string) {
	if !r.takePrompt(prompt) {
		return
	}
	if err := r.storeTurnMark(ctx, prompt, outcome, content); err != nil {
		r.m.log.Error("store turn mark", "session", r.id, "prompt", prompt, "outcome", string(outcome), "err", err)
	}
}

// markSettled marks the turn that prompt started, which the agent ended
// itself with stop or err, unless it ended normally.
func (r *run) markSettled(ctx context.Context, prompt string, stop agent.StopReason, err error) {
	if outcome, notice, ok := settledMark(stop, err); ok {
		r.markTurn(ctx, prompt, outcome, notice)
		return
	}
	r.takePrompt(prompt)
}

// setPrompt records that prompt, just sent, is the prompt of the turn
// that holds the session's foreground.
func (r *run) setPrompt(prompt string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prompt = prompt
}

// beginUnsent notes that prompt's turn has begun and its prompt has not
// reached the agent yet.
func (r *run) beginUnsent(prompt string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unsent, r.unsentCancelled = prompt, false
}

// endUnsent notes that prompt's turn hands its prompt to the agent, or
// ends without doing so, and reports whether the person cancelled the
// turn before then.
func (r *run) endUnsent(prompt string) (cancelled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unsent != prompt {
		return false
	}
	cancelled = r.unsentCancelled
	r.unsent, r.unsentCancelled = "", false
	return cancelled
}

// cancelUnsent cancels the turn whose prompt has not reached the agent
// yet, if there is one: the agent has no prompt to cancel, so a
// session/cancel would be lost and the prompt would run once sent.
func (r *run) cancelUnsent() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unsent != "" {
		r.unsentCancelled = true
	}
}

// takePrompt ends the hold of prompt's turn on the foreground and reports
// whether it still had it: not when a successor took the foreground over
// (a handoff), nor when the turn's mark has been written already (by the
// watch of an agent that died under it). Whoever takes the prompt writes
// the turn's mark, if it needs one.
func (r *run) takePrompt(prompt string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prompt != prompt || prompt == "" {
		return false
	}
	r.prompt = ""
	return true
}

// heldPrompt returns the prompt of the turn that holds the foreground, or
// "" between turns.
func (r *run) heldPrompt() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prompt
}

// settledMark returns the outcome and the words of the mark of a turn the
// agent ended itself with stop or err, and false for a normal end_turn,
// which needs no mark.
func settledMark(stop agent.StopReason, err error) (shared.TurnOutcome, string, bool) {
	outcome := settleOutcome(stop, err)
	switch outcome {
	case shared.TurnFailed:
		return outcome, "The agent ended this turn with an error: " + reason(strings.TrimPrefix(err.Error(), "prompt: ")), true
	case shared.TurnCancelled:
		return outcome, cancelledNotice, true
	case shared.TurnMaxTokens:
		return outcome, maxTokensNotice, true
	case shared.TurnMaxTurnRequests:
		return outcome, maxRequestsNotice, true
	case shared.TurnRefusal:
		return outcome, refusalNotice, true
	}
	return outcome, "", false
}

// diedNotice is the words of the mark of a turn whose agent died under it.
func diedNotice(err error) string {
	return "The agent stopped during this turn: " + reason(err.Error())
}

// reason bounds an error's text for a notice in the transcript.
func reason(why string) string {
	if len(why) > shared.MaxErrorPreviewBytes {
		why = strings.ToValidUTF8(why[:shared.MaxErrorPreviewBytes], "") + "…"
	}
	return why
}

// markInterrupted marks the turn that a previous process left running.
// The session's latest turn is the one that went RUNNING; it needs no
// mark when it never sent its prompt (it still holds the claim, so this
// runs before the claims are released). A second crash before the session
// settles leaves it RUNNING, and the next start finds the mark stored.
func (r *run) markInterrupted(ctx context.Context) error {
	prompt, sent, err := r.m.cfg.Store.LatestPrompt(ctx, r.id)
	if err != nil || !sent {
		return err
	}
	return r.storeTurnMark(ctx, prompt, shared.TurnInterrupted, interruptedNotice)
}
