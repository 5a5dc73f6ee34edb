package sessions

import (
	"context"
	"errors"
	"strings"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/coalescer"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// sink persists and publishes what one execution's coalescer hands it. It
// runs only on the coalescer's goroutine, which owns its fields.
type sink struct {
	r *run
	// open are the streaming messages by coalescer key, with their text so
	// far (intermediate updates carry the full current state).
	open map[string]*streaming
	// order is the open keys in the order their messages were opened.
	order []string
	// tools maps an agent tool call id to its message id.
	tools map[string]string
	// plan is the message id of the execution's plan, once it has one.
	plan string
}

type streaming struct {
	msg  shared.Message
	text strings.Builder
}

func newSink(r *run) *sink {
	return &sink{r: r, open: make(map[string]*streaming), tools: make(map[string]string)}
}

// askRequest is a coalescer barrier carrying an agent request to persist;
// done receives the stored message once the request may be answered.
type askRequest struct {
	msg  store.NewMessage
	done chan shared.Message
}

func (s *sink) handle(out coalescer.Output) {
	// The coalescer's final flush runs after shutdown has begun; what it
	// hands over must still be persisted.
	ctx := context.WithoutCancel(s.r.m.ctx)
	st := s.r.m.cfg.Store
	pub := s.r.m.pub
	switch out.Op {
	case coalescer.OpOpen:
		typ := shared.MessageAgent
		if out.Kind == coalescer.KindThinking {
			typ = shared.MessageThinking
		}
		msg, err := st.AppendMessage(ctx, store.NewMessage{SessionID: s.r.id, Type: typ, Content: out.Text, Status: shared.MessageStreaming})
		if err != nil {
			s.r.m.log.Error("store streamed message", "session", s.r.id, "err", err)
			return
		}
		m := &streaming{msg: msg}
		m.text.WriteString(out.Text)
		s.open[out.Key] = m
		s.order = append(s.order, out.Key)
		pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
		if typ == shared.MessageAgent {
			s.r.m.mark(s.r.taskID) // a newer agent response clears the task's error
		}
	case coalescer.OpAppend:
		m := s.open[out.Key]
		if m == nil {
			return
		}
		if err := st.AppendText(ctx, m.msg.ID, out.Text); err != nil {
			s.r.m.log.Error("append streamed text", "session", s.r.id, "err", err)
			return
		}
		m.text.WriteString(out.Text)
		m.msg.Content = m.text.String()
		pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, m.msg, true)
	case coalescer.OpBarrier:
		s.finishOpen(ctx)
		s.barrier(ctx, out.Event)
	}
}

// finishOpen completes every streaming message; their final states travel
// as semantic frames.
func (s *sink) finishOpen(ctx context.Context) {
	for _, key := range s.order {
		m := s.open[key]
		done, err := s.r.m.cfg.Store.FinishMessage(ctx, m.msg.ID, shared.MessageComplete)
		if err != nil {
			s.r.m.log.Error("finish streamed message", "session", s.r.id, "err", err)
			continue
		}
		s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, done, false)
	}
	clear(s.open)
	s.order = s.order[:0]
}

// barrier persists one ordered event.
func (s *sink) barrier(ctx context.Context, ev any) {
	st := s.r.m.cfg.Store
	pub := s.r.m.pub
	switch ev := ev.(type) {
	case turnEnd:
		close(ev.done)
	case askRequest:
		msg, err := st.AppendMessage(ctx, ev.msg)
		if err != nil {
			s.r.m.log.Error("store agent request", "session", s.r.id, "err", err)
			close(ev.done)
			return
		}
		pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
		s.r.m.mark(s.r.taskID)
		ev.done <- msg
	case agent.Event:
		switch ev.Kind {
		case agent.EventToolCall, agent.EventToolCallUpdate:
			s.tool(ctx, ev.Tool)
		case agent.EventPlan:
			s.storePlan(ctx, ev.Plan)
		}
	}
}

// tool stores a tool call or its update as one message per call.
func (s *sink) tool(ctx context.Context, t *agent.ToolCall) {
	if t == nil {
		return
	}
	st := s.r.m.cfg.Store
	meta := map[string]any{"tool_call_id": t.ID, "kind": t.Kind}
	if t.Input != "" {
		meta["input"] = t.Input
	}
	if t.Output != "" {
		meta["output"] = t.Output
	}
	if len(t.Paths) > 0 {
		meta["paths"] = t.Paths
	}
	if t.Provenance != nil {
		meta["provenance"] = t.Provenance.Meta()
	}
	status := toolStatus(t.Status)
	if id, ok := s.tools[t.ID]; ok {
		u := store.MessageUpdate{Metadata: meta}
		if t.Status != "" {
			u.Status = &status
		}
		if t.Title != "" {
			u.Content = &t.Title
		}
		msg, err := st.UpdateMessage(ctx, s.r.id, id, u)
		if err != nil {
			s.r.m.log.Error("update tool call", "session", s.r.id, "err", err)
			return
		}
		// A call still running is an intermediate state; its end is final.
		s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, msg, msg.Status == shared.MessageStreaming)
		return
	}
	msg, err := st.AppendMessage(ctx, store.NewMessage{SessionID: s.r.id, Type: shared.MessageToolCall, Content: t.Title, Status: status, Metadata: meta})
	if err != nil {
		s.r.m.log.Error("store tool call", "session", s.r.id, "err", err)
		return
	}
	s.tools[t.ID] = msg.ID
	s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
}

// toolStatus maps a tool call's status to a message status.
func toolStatus(s agent.ToolStatus) shared.MessageState {
	switch s {
	case agent.ToolCompleted:
		return shared.MessageComplete
	case agent.ToolFailed:
		return shared.MessageFailed
	case agent.ToolInProgress:
		return shared.MessageStreaming
	default:
		return shared.MessagePending
	}
}

// storePlan keeps one plan message per execution, replaced as it changes.
func (s *sink) storePlan(ctx context.Context, entries []agent.PlanEntry) {
	var text strings.Builder
	items := make([]map[string]any, len(entries))
	for i, e := range entries {
		items[i] = map[string]any{"content": e.Content, "priority": e.Priority, "status": e.Status}
		text.WriteString("- [" + e.Status + "] " + e.Content + "\n")
	}
	content := text.String()
	meta := map[string]any{"entries": items}
	st := s.r.m.cfg.Store
	if s.plan != "" {
		msg, err := st.UpdateMessage(ctx, s.r.id, s.plan, store.MessageUpdate{Content: &content, Metadata: meta})
		if err == nil {
			s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, msg, false)
		}
		return
	}
	msg, err := st.AppendMessage(ctx, store.NewMessage{SessionID: s.r.id, Type: shared.MessagePlan, Content: content, Status: shared.MessageComplete, Metadata: meta})
	if err != nil {
		s.r.m.log.Error("store plan", "session", s.r.id, "err", err)
		return
	}
	s.plan = msg.ID
	s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
}

// OnEvent implements agent.Handler: text goes through the coalescer,
// everything the transcript records in order is a barrier.
func (r *run) OnEvent(ev agent.Event) {
	co, texec := r.stream()
	if co == nil {
		return
	}
	if f, ok := frameOf(ev); ok {
		r.m.tr.Frame(texec, f)
	}
	var err error
	switch ev.Kind {
	case agent.EventText:
		err = co.Chunk(r.m.ctx, coalescer.KindAgent, ev.Text)
	case agent.EventThought:
		err = co.Chunk(r.m.ctx, coalescer.KindThinking, ev.Text)
	case agent.EventToolCall, agent.EventToolCallUpdate, agent.EventPlan:
		err = co.Barrier(r.m.ctx, ev)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		r.m.log.Debug("drop event after close", "session", r.id, "kind", ev.Kind.String(), "err", err)
	}
}

// RequestPermission implements agent.Handler: the request is stored (in
// transcript order) and waits for permission.respond.
func (r *run) RequestPermission(ctx context.Context, req agent.PermissionRequest) (string, error) {
	options := make([]map[string]any, len(req.Options))
	ids := make([]string, len(req.Options))
	for i, o := range req.Options {
		options[i] = map[string]any{"option_id": o.ID, "name": o.Name, "kind": o.Kind}
		ids[i] = o.ID
	}
	title := req.ToolCall.Title
	if title == "" {
		title = "The agent asks for permission"
	}
	return r.ask(ctx, shared.MessagePermissionRequest, ids, store.NewMessage{
		Type: shared.MessagePermissionRequest, Content: title,
		Metadata: map[string]any{"options": options, "tool_call_id": req.ToolCall.ID, "kind": req.ToolCall.Kind},
	})
}

// Clarify implements agent.Handler: the question is stored and waits for
// clarification.respond.
func (r *run) Clarify(ctx context.Context, req agent.ClarificationRequest) (string, error) {
	return r.ask(ctx, shared.MessageClarificationRequest, nil, store.NewMessage{
		Type: shared.MessageClarificationRequest, Content: req.Question,
	})
}

// ask stores an agent request through the coalescer, so it follows
// everything the agent said before it, and waits for the answer.
func (r *run) ask(ctx context.Context, kind shared.MessageType, options []string, msg store.NewMessage) (string, error) {
	co := r.coalescer()
	if co == nil {
		return "", errors.New("session is not running")
	}
	pendingID := newToken()
	msg.SessionID, msg.Status, msg.PendingID = r.id, shared.MessagePending, pendingID
	w := &waiter{kind: kind, options: options, answer: make(chan string, 1)}
	r.mu.Lock()
	r.waiting[pendingID] = w
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiting, pendingID)
		r.mu.Unlock()
	}()
	done := make(chan shared.Message, 1)
	if err := co.Barrier(ctx, askRequest{msg: msg, done: done}); err != nil {
		return "", err
	}
	select {
	case answer, ok := <-w.answer:
		if !ok {
			return "", errors.New("session stopped")
		}
		return answer, nil
	case <-ctx.Done():
		// The agent withdrew the request (its turn was cancelled).
		cancelled := shared.MessageCancelled
		if stored, err := r.m.cfg.Store.ResolveRequest(r.m.ctx, r.id, pendingID, cancelled, nil); err == nil {
			r.m.pub.PublishSession(r.id, shared.NotifySessionMessageUpdated, stored, false)
			r.m.mark(r.taskID)
		}
		return "", ctx.Err()
	}
}
