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
	fg, n := m.tr.Activity(sessionID, state)
	return store.Activity{Foreground: fg, Subagents: n}
}

// publishActivity is the tracker's publication of one session's changed
// activity, on that task's publication queue: persist it (a
// compare-and-set on the session's state, retried when a transition moved
// the state meanwhile), then publish and mark the task's summary.
func (m *Manager) publishActivity(ctx context.Context, c tracker.Change) error {
	state, err := m.stateOf(ctx, c.SessionID)
	if err != nil {
		return err
	}
	for range 3 {
		fg, n := m.tr.ActivityOf(c.View, state)
		s, changed, err := m.cfg.Store.SetActivity(ctx, c.SessionID, state, store.Activity{Foreground: fg, Subagents: n})
		if err != nil {
			return err
		}
		if changed {
			m.pub.PublishSession(s.ID, shared.NotifySessionActivityChanged, shared.SessionStateEventOf(s), false)
			m.mark(s.TaskID)
		}
		if m.cfg.Handoff && c.View.Claimed && !c.View.Generating && c.View.Background {
			m.kickSession(ctx, c.SessionID) // a queued prompt may take the handoff
		}
		if changed {
			return nil
		}
		if s.State == state {
			return nil // already showing this activity
		}
		state = s.State
	}
	return nil
}

// kickSession dispatches the head of a live session's queue if it may go.
func (m *Manager) kickSession(ctx context.Context, sessionID string) {
	m.mu.Lock()
	r := m.runs[sessionID]
	m.mu.Unlock()
	if r != nil {
		r.kick(ctx)
	}
}

// stateOf returns a session's state: its run's mirror, or the stored one.
func (m *Manager) stateOf(ctx context.Context, sessionID string) (shared.SessionState, error) {
	m.mu.Lock()
	r := m.runs[sessionID]
	m.mu.Unlock()
	if r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.state, nil
	}
	s, err := m.cfg.Store.GetSession(ctx, sessionID)
	return s.State, err
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
	case agent.EventToolCall, agent.EventToolCallUpdate:
		if ev.Tool == nil {
			return tracker.Frame{}, false
		}
		f := tracker.Frame{Kind: tracker.FrameToolCall, ToolID: ev.Tool.ID}
		if ev.Kind == agent.EventToolCallUpdate {
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
