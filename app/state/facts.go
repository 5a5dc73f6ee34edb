package state

import "github.com/herd-dev/herd/shared"

// Commands returns the slash commands the session's agent offers, as the
// snapshot or the newest session.commands.updated carried them. Callers
// must not modify the slice.
func (d *SessionDetail) Commands() []shared.SlashCommand { return d.commands }

// applyFacts applies a session.info.updated (the session's title and
// usage, both as the server holds them now) or a session.commands.updated
// (the whole command list). Neither moves the state revision: they are
// not state changes.
func (d *SessionDetail) applyFacts(env shared.Envelope) {
	switch env.Action {
	case shared.NotifySessionInfoUpdated:
		if ev, ok := decode[shared.SessionInfoEvent](env.Payload); ok {
			d.session.Title, d.session.Usage = ev.Title, ev.Usage
		}
	case shared.NotifySessionCommandsUpdated:
		if ev, ok := decode[shared.SessionCommandsEvent](env.Payload); ok {
			d.commands = ev.Commands
		}
	}
}
