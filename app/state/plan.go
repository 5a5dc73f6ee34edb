package state

import (
	"strconv"

	"github.com/herd-dev/herd/shared"
)

// Plan step statuses, as ACP names them.
const (
	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"
)

// Plan is the session's current plan as the dock shows it: the steps of
// the newest plan message, with counts.
type Plan struct {
	// MessageID is the plan message the steps come from; empty when the
	// session has no plan.
	MessageID string
	// Entries are the steps in the agent's order.
	Entries []shared.PlanEntry
	// Done counts the completed steps.
	Done int
	// Current is the index of the first step in progress; -1 for none.
	Current int
}

// CurrentPlan returns the newest plan among msgs (ascending seq, as
// SessionDetail.Messages returns them). Each execution of a session keeps
// one plan message that the agent's later plans replace, and a later
// execution starts a new one, so the plan with the highest seq is the one
// the agent works to now.
func CurrentPlan(msgs []shared.Message) Plan {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Type != shared.MessagePlan {
			continue
		}
		p := Plan{MessageID: m.ID, Current: -1}
		if m.Metadata != nil {
			p.Entries = m.Metadata.Entries
		}
		for j, e := range p.Entries {
			switch e.Status {
			case PlanCompleted:
				p.Done++
			case PlanInProgress:
				if p.Current < 0 {
					p.Current = j
				}
			}
		}
		return p
	}
	return Plan{Current: -1}
}

// Label is the plan's one-line count, "Plan 3/7".
func (p Plan) Label() string {
	return "Plan " + strconv.Itoa(p.Done) + "/" + strconv.Itoa(len(p.Entries))
}

// Visible reports whether the dock shows the plan while the session is in
// state. An empty plan has nothing to show. A plan whose every step is done
// stays while its turn still runs (the agent may yet revise it), and goes
// once the session settles: the transcript keeps it, and the dock's room
// above the composer belongs to what is still under way.
func (p Plan) Visible(state shared.SessionState) bool {
	if len(p.Entries) == 0 {
		return false
	}
	return p.Done < len(p.Entries) || state == shared.SessionRunning
}

// PlanFold remembers, per session, whether a person folded its plan in
// the dock, in a KV (the browser's localStorage) so a reload keeps it.
type PlanFold struct {
	kv KV
}

// NewPlanFold returns the folds kept in kv.
func NewPlanFold(kv KV) PlanFold { return PlanFold{kv: kv} }

func planFoldKey(sessionID string) string { return "herd.plan-folded." + sessionID }

// Folded reports whether the session's plan is folded.
func (f PlanFold) Folded(sessionID string) bool {
	v, ok := f.kv.Get(planFoldKey(sessionID))
	return ok && v == "1"
}

// Set keeps whether the session's plan is folded; unfolded is the default
// and is not stored.
func (f PlanFold) Set(sessionID string, folded bool) {
	if sessionID == "" {
		return
	}
	if folded {
		f.kv.Set(planFoldKey(sessionID), "1")
		return
	}
	f.kv.Delete(planFoldKey(sessionID))
}
