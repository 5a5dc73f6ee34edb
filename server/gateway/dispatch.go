package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/herd-dev/herd/shared"
)

// handlerFunc runs one request and returns its response payload.
type handlerFunc func(ctx context.Context, c *conn, payload json.RawMessage) (any, error)

// action is one entry of the dispatch table.
type action struct {
	run handlerFunc
	// ordered actions change the connection's subscriptions or focus; they
	// run on the reader goroutine, one at a time, in the order the client
	// sent them. Other actions run concurrently, bounded by MaxInFlight.
	ordered bool
	// timeout bounds the action's work in place of RequestTimeout when it
	// is longer: for actions whose own bounded steps (a push) take longer.
	timeout time.Duration
}

// handle adapts a typed handler: it decodes the payload into Req first, so a
// wrong payload type is a bad_request before any work is done.
func handle[Req any](fn func(ctx context.Context, c *conn, req Req) (any, error)) handlerFunc {
	return func(ctx context.Context, c *conn, payload json.RawMessage) (any, error) {
		req, err := shared.DecodePayload[Req](payload)
		if err != nil {
			return nil, err
		}
		return fn(ctx, c, req)
	}
}

// dispatch runs or schedules one decoded request; the reader has taken
// the slot of its answer already.
func (c *conn) dispatch(env shared.Envelope) {
	a, ok := c.g.actions[env.Action]
	switch {
	case !ok:
		c.g.metrics.requests.WithLabelValues("unknown", string(shared.CodeUnknownAction)).Inc()
		c.replyError(env.ID, env.Action, shared.Errorf(shared.CodeUnknownAction, "unknown action %q", env.Action))
	case a.ordered:
		c.run(a, env)
	default:
		c.requests.Go(func() { c.run(a, env) })
	}
}

// run executes a request and queues its answer.
func (c *conn) run(a action, env shared.Envelope) {
	start := time.Now()
	ctx, cancel := c.requestContext(a.timeout)
	defer cancel()
	out, err := a.run(ctx, c, env.Payload)
	code := "ok"
	if err != nil {
		code = string(shared.ErrorCode(err))
		c.replyError(env.ID, env.Action, err)
	} else {
		c.reply(env.ID, env.Action, out)
	}
	c.g.metrics.requests.WithLabelValues(env.Action, code).Inc()
	c.g.metrics.duration.WithLabelValues(env.Action).Observe(time.Since(start).Seconds())
}

// actionTable lists every request action the gateway serves.
func (g *Gateway) actionTable() map[string]action {
	return map[string]action{
		shared.ActionPing:                 {run: handle(g.ping)},
		shared.ActionBoot:                 {run: handle(g.boot), ordered: true},
		shared.ActionWorkspaceList:        {run: handle(g.workspaceList)},
		shared.ActionWorkspaceCreate:      {run: handle(g.workspaceCreate)},
		shared.ActionWorkspaceSubscribe:   {run: handle(g.workspaceSubscribe), ordered: true},
		shared.ActionWorkspaceUnsubscribe: {run: handle(g.workspaceUnsubscribe), ordered: true},
		shared.ActionTaskList:             {run: handle(g.taskList)},
		shared.ActionTaskCreate:           {run: handle(g.taskCreate)},
		shared.ActionTaskGet:              {run: handle(g.taskGet)},
		shared.ActionTaskUpdate:           {run: handle(g.taskUpdate)},
		shared.ActionTaskArchive:          {run: handle(g.taskArchive)},
		shared.ActionAgentProfileList:     {run: handle(g.agentProfileList)},
	}
}

// Summaries keeps tasks' status summaries; the projector implements it.
type Summaries interface {
	// Mark says a task's summary may have changed.
	Mark(taskID string)
	// Dismiss hides a task's active agent error.
	Dismiss(ctx context.Context, taskID, stamp string) error
}

// errorDismiss hides the task's active error named by stamp, and every
// earlier one; the task's summary follows as task.status_summary.updated.
func (g *Gateway) errorDismiss(ctx context.Context, _ *conn, req shared.ErrorDismissRequest) (any, error) {
	if err := requireID("task_id", req.TaskID); err != nil {
		return nil, err
	}
	if err := requireID("stamp", req.Stamp); err != nil {
		return nil, err
	}
	if err := g.cfg.Summaries.Dismiss(ctx, req.TaskID, req.Stamp); err != nil {
		return nil, err
	}
	return shared.Empty{}, nil
}
