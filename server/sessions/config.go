package sessions

import (
	"context"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/shared"
)

// SetConfig sets one option of a session's configuration through its
// agent (session/set_config_option, or session/set_mode or set_model for
// agents that offer only those) and returns the configuration that
// results, stored and published as session.config.updated before it
// returns. A session whose agent is not running (herd restarted since its
// last turn) starts it first, as its next prompt would. The agent decides
// whether a change may happen during a turn.
func (m *Manager) SetConfig(ctx context.Context, req shared.SessionConfigSetRequest) (shared.SessionConfigEvent, error) {
	r, session, err := m.runOf(ctx, req.SessionID)
	if err != nil {
		return shared.SessionConfigEvent{}, err
	}
	switch session.State {
	case shared.SessionWaitingForInput, shared.SessionRunning, shared.SessionCompleted, shared.SessionIdle:
	case shared.SessionCreated, shared.SessionStarting:
		return shared.SessionConfigEvent{}, shared.Errorf(shared.CodeConflict, "the agent is still starting; its options follow once it has")
	default:
		return shared.SessionConfigEvent{}, shared.Errorf(shared.CodeConflict, "the session has ended (%s); start a new session to change its options", session.State)
	}
	task, err := m.cfg.Store.GetTask(ctx, session.TaskID)
	if err != nil {
		return shared.SessionConfigEvent{}, err
	}
	if task.Archived {
		return shared.SessionConfigEvent{}, shared.Errorf(shared.CodeConflict, "the task is archived; its agents do not start again")
	}
	if _, ok := session.Config.Option(req.OptionID); !ok {
		return shared.SessionConfigEvent{}, shared.Errorf(shared.CodeNotFound, "the agent offers no option %q for this session", req.OptionID)
	}
	if err := r.ensureExecution(ctx, nil); err != nil {
		return shared.SessionConfigEvent{}, shared.Errorf(shared.CodeUnavailable, "the agent could not start: %v", err)
	}
	exec, _, co := r.running()
	if exec == nil || co == nil {
		return shared.SessionConfigEvent{}, shared.Errorf(shared.CodeUnavailable, "the agent stopped before it could be asked")
	}
	state, err := exec.SetConfig(ctx, req.OptionID, req.Value)
	if err != nil {
		return shared.SessionConfigEvent{}, err
	}
	// SetConfig returned once its event reached OnEvent, which stored the
	// state; should delivery have stopped first, it is stored here, so
	// what the answer reports is stored either way.
	stored, err := r.storeConfig(ctx, state)
	if err != nil {
		return shared.SessionConfigEvent{}, err
	}
	return shared.SessionConfigEvent{SessionID: r.id, Config: stored}, nil
}

// storeConfig stores a configuration state and, when it changed,
// publishes it. OnEvent calls it for every state the agent reports (not
// through the coalescer, whose barriers end streaming messages: a model
// change while the agent streams leaves its message whole), and
// SetConfig for the one its change produced: whichever comes second finds
// a state as new stored, and a state older than the one stored (a
// config_option_update the sink reaches after SetConfig stored what
// followed it) is not stored at all.
//
// It returns the configuration stored once it has returned: state's, or
// the newer one stored before it.
func (r *run) storeConfig(ctx context.Context, state agent.ConfigState) (shared.SessionConfig, error) {
	r.configMu.Lock()
	defer r.configMu.Unlock()
	if state.Seq <= r.configAt {
		return r.config, nil
	}
	c := state.Config
	var changed bool
	err := r.m.persist(ctx, "store session config", r.id, func(ctx context.Context) error {
		var err error
		changed, err = r.m.cfg.Store.SetSessionConfig(ctx, r.id, c)
		return err
	})
	if err != nil {
		r.m.log.Error("store session config", "session", r.id, "err", err)
		return shared.SessionConfig{}, err
	}
	r.configAt, r.config = state.Seq, c
	if changed {
		r.m.pub.PublishSession(r.id, shared.NotifySessionConfigUpdated, shared.SessionConfigEvent{SessionID: r.id, Config: c}, false)
	}
	return c, nil
}
