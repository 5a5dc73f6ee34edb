package agent

import (
	"context"
	"errors"

	acp "github.com/coder/acp-go-sdk"
)

// The ACP methods that continue an earlier session, as Restore.Method
// names them.
const (
	MethodResume = "session/resume"
	MethodLoad   = "session/load"
)

// Restore says what became of the earlier agent session an execution was
// asked to continue (Options.ResumeSessionID).
type Restore struct {
	// Method is how the earlier session continues: MethodResume or
	// MethodLoad. Empty when a new session was opened.
	Method string
	// Lost says, when an earlier session was asked for but a new one was
	// opened, why its context was not restored: the agent offers neither
	// method, or refused the one it offers. Empty otherwise.
	Lost string
}

// errNoRestore says an agent offers no way to continue a session.
var errNoRestore = errors.New("the agent offers neither session/resume nor session/load")

// openSession gives the execution its ACP session: the earlier one named
// by ResumeSessionID when the agent can continue it — session/resume when
// initialize advertised sessionCapabilities.resume, else session/load when
// it advertised loadSession — or else a new one, recording in e.restore
// why the earlier context was lost.
func (e *Execution) openSession(ctx context.Context, caps acp.AgentCapabilities) error {
	if prev := acp.SessionId(e.opts.ResumeSessionID); prev != "" {
		method, config, err := e.continueSession(ctx, caps, prev)
		if err == nil {
			e.sessionID, e.restore = prev, Restore{Method: method}
			e.replaceConfig(ctx, config)
			return nil
		}
		if errors.Is(err, errPeerGone) || ctx.Err() != nil {
			return err
		}
		e.restore.Lost = err.Error()
	}
	ns, err := e.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: e.opts.Cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		return e.startError(ctx, "session/new", err)
	}
	e.sessionID = ns.SessionId
	e.replaceConfig(ctx, configOf(ns.ConfigOptions, ns.Modes, ns.Models))
	return nil
}

// continueSession asks the agent to continue session id and returns the
// method that did and the session's configuration as the agent reports it. session/load replays the session's history as
// session/update notifications before it answers; the transcript holds
// that history already, so the reader drops every update until the answer
// (wireReader.replay) and counts them in Stats.Replayed.
func (e *Execution) continueSession(ctx context.Context, caps acp.AgentCapabilities, id acp.SessionId) (string, sessionConfig, error) {
	switch {
	case caps.SessionCapabilities.Resume != nil:
		r, err := e.conn.ResumeSession(ctx, acp.ResumeSessionRequest{SessionId: id, Cwd: e.opts.Cwd, McpServers: []acp.McpServer{}})
		if err != nil {
			return "", sessionConfig{}, e.callError(ctx, MethodResume, err)
		}
		return MethodResume, configOf(r.ConfigOptions, r.Modes, r.Models), nil
	case caps.LoadSession:
		e.reader.replay.Store(true)
		r, err := e.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: id, Cwd: e.opts.Cwd, McpServers: []acp.McpServer{}})
		// The reader ended the replay at the answer; without one (the
		// call timed out) nothing more is dropped.
		e.reader.replay.Store(false)
		if err != nil {
			return "", sessionConfig{}, e.callError(ctx, MethodLoad, err)
		}
		return MethodLoad, configOf(r.ConfigOptions, r.Modes, r.Models), nil
	}
	return "", sessionConfig{}, errNoRestore
}

// Resumable reports whether the agent offers a way to continue its session
// in a later execution (session/resume or session/load).
func (e *Execution) Resumable() bool { return e.resumable }

// Restore says whether the execution continues the session that
// Options.ResumeSessionID named, and if not, why.
func (e *Execution) Restore() Restore { return e.restore }
