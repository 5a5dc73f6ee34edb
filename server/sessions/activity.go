package sessions

import (
	"context"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/tracker"
	"github.com/herd-dev/herd/shared"
)

// activityOf is what a session in state shows now, by the tracker's
// policy.
func (m *Manager) activityOf(sessionID string, state shared.SessionState) store.Activity {
	return m.policy(m.tr.View(sessionID), state)
}

// policy is activityOf for a captured view. A session in a state without
// a live agent (see live) shows no activity, whatever the tracker still
// holds while the agent winds down.
func (m *Manager) policy(v tracker.View, state shared.SessionState) store.Activity {
	if !live(state) {
		return store.Activity{}
	}
	fg, n := m.tr.ActivityOf(v, state)
	return store.Activity{Foreground: fg, Subagents: n}
}

// publishActivity is the tracker's publication of one session's changed
// activity, on that task's publication queue. When the activity the
// policy gives for the session's state differs from the stored one, it is
// stored (a compare-and-set on the state, retried when a transition moved
// the state meanwhile), then published, and the task's summary marked.
func (m *Manager) publishActivity(ctx context.Context, c tracker.Change) error {
	m.mu.Lock()
	r := m.runs[c.SessionID]
	m.mu.Unlock()
	if r == nil {
		return nil // only live runs attach to the tracker
	}
	if m.cfg.Handoff && c.View.Claimed && !c.View.Generating && c.View.Background {
		defer r.kick(ctx) // a queued prompt may take the handoff
	}
	state, stored := r.mirror()
	for range 3 {
		want := m.policy(c.View, state)
		if want == stored {
			return nil
		}
		var changed bool
		// Retried for as long as the manager runs, not the publication's
		// own deadline: a change given up is published only with the
		// session's next change, which may never come.
		s, err := persisted(m, m.ctx, "store activity", c.SessionID, func(ctx context.Context) (shared.Session, error) {
			s, ch, err := m.cfg.Store.SetActivity(ctx, c.SessionID, state, want)
			changed = ch
			return s, err
		})
		if err != nil {
			return err
		}
		r.remember(s)
		if changed {
			m.pub.PublishSession(s.ID, shared.NotifySessionActivityChanged, shared.SessionStateEventOf(s), false)
			m.mark(s.TaskID)
			return nil
		}
		if s.State == state {
			return nil // stored meanwhile
		}
		state, stored = s.State, storedActivity(s)
	}
	return nil
}

// capabilitiesOf returns what a provider's adapter attests to the tracker.
func capabilitiesOf(provider string) tracker.Capabilities {
	caps := agent.CapabilitiesOf(provider)
	return tracker.Capabilities{AttestsBackground: caps.AttestsBackground, Handoff: caps.Handoff}
}

// frameOf turns an agent event into the tracker's frame; it reports false
// for events that do not bear on activity.
func frameOf(ev agent.Event) (tracker.Frame, bool) {
	switch ev.Kind {
	case agent.EventText, agent.EventThought:
		return tracker.Frame{Kind: tracker.FrameOutput}, true
	case agent.EventUsage:
		if ev.Usage == nil || ev.Usage.Origin == "" {
			return tracker.Frame{}, false
		}
		return tracker.Frame{Kind: tracker.FrameCycleEnd, Origin: ev.Usage.Origin}, true
	case agent.EventToolCall, agent.EventToolCallUpdate, agent.EventBackgroundEnded:
		if ev.Tool == nil {
			return tracker.Frame{}, false
		}
		f := tracker.Frame{Kind: tracker.FrameToolCall, ToolID: ev.Tool.ID}
		if ev.Kind != agent.EventToolCall {
			f.Kind = tracker.FrameToolUpdate
		}
		if p := ev.Tool.Provenance; p != nil {
			f.Attested = p.Attested
			f.Parent = p.ParentToolUseID
			f.Work = tracker.WorkKind(p.BackgroundKind)
			f.WorkID = p.BackgroundTaskID
			f.Lifecycle = tracker.Lifecycle(p.Lifecycle)
		}
		return f, true
	}
	return tracker.Frame{}, false
}
