package sessions

import (
	"context"
	"errors"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// keepFact stores what the agent says about the session besides its
// transcript (its title, context usage and cost, slash commands) and
// publishes each change to the session's subscribers only, never to the
// workspace feed: these facts change several times a turn. Only a change
// of cost marks the task, whose summary sums it. It runs on the agent's
// dispatcher goroutine in wire order, outside the coalescer, since none of
// these facts is a transcript entry and a barrier would end the messages
// that stream around them. Other events it leaves alone.
func (r *run) keepFact(ev agent.Event) {
	switch ev.Kind {
	case agent.EventSessionInfo:
		if ev.Title != "" {
			r.keepTitle(ev.Title)
		}
	case agent.EventUsage:
		if ev.Usage != nil {
			r.keepUsage(ev.Usage)
		}
	case agent.EventCommands:
		r.keepCommands(ev.Commands)
	}
}

// keepTitle stores the session's title.
func (r *run) keepTitle(title string) {
	var changed bool
	session, err := persisted(r.m, r.m.ctx, "store session title", r.id, func(ctx context.Context) (shared.Session, error) {
		s, ch, err := r.m.cfg.Store.SetSessionTitle(ctx, r.id, title)
		changed = ch
		return s, err
	})
	if r.factFailed("store session title", err) || !changed {
		return
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionInfoUpdated, shared.SessionInfoEventOf(session), false)
}

// keepUsage stores the session's usage and, when the update carries one,
// its cumulative cost.
func (r *run) keepUsage(u *agent.Usage) {
	var cost *shared.Cost
	if u.Cost != nil {
		cost = &shared.Cost{Amount: u.Cost.Amount, Currency: u.Cost.Currency}
	}
	var change store.UsageChange
	session, err := persisted(r.m, r.m.ctx, "store session usage", r.id, func(ctx context.Context) (shared.Session, error) {
		s, ch, err := r.m.cfg.Store.SetSessionUsage(ctx, r.id, u.Used, u.Size, cost)
		change = ch
		return s, err
	})
	if r.factFailed("store session usage", err) || !change.Usage {
		return
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionInfoUpdated, shared.SessionInfoEventOf(session), false)
	if change.Cost {
		r.m.mark(r.taskID)
	}
}

// keepCommands stores the session's slash commands.
func (r *run) keepCommands(in []agent.Command) {
	cmds := make([]shared.SlashCommand, len(in))
	for i, c := range in {
		cmds[i] = shared.SlashCommand{Name: c.Name, Description: c.Description, Hint: c.Hint}
	}
	var changed bool
	stored, err := persisted(r.m, r.m.ctx, "store slash commands", r.id, func(ctx context.Context) ([]shared.SlashCommand, error) {
		s, ch, err := r.m.cfg.Store.SetSessionCommands(ctx, r.id, cmds)
		changed = ch
		return s, err
	})
	if r.factFailed("store slash commands", err) || !changed {
		return
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionCommandsUpdated, shared.SessionCommandsEvent{SessionID: r.id, Commands: stored}, false)
}

// factFailed logs a fact that could not be stored (unless the manager is
// shutting down) and reports whether err is set. The fact is lost; the
// agent's next report of it replaces it anyway.
func (r *run) factFailed(what string, err error) bool {
	if err == nil {
		return false
	}
	if !errors.Is(err, context.Canceled) {
		r.m.log.Error(what, "session", r.id, "err", err)
	}
	return true
}
