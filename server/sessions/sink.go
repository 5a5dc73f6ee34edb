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
// runs only on the coalescer's goroutine, which owns its fields, and after
// that goroutine has ended, on the execution's watcher (end).
//
// Every write is persisted through Manager.persist: while the database is
// unavailable the sink waits, and with it the coalescer and the agent
// whose output it is, so nothing the agent said is dropped or stored out
// of order. A message a write could not store at all (the manager shut
// down during an outage) is broken: its later bytes are not stored after
// the hole, and it ends failed.
type sink struct {
	r *run
	// open are the streaming messages by coalescer key, with their text so
	// far (intermediate updates carry the full current state).
	open map[string]*streaming
	// order is the open keys in the order their messages were opened.
	order []string
	// tools maps an agent tool call id to its message.
	tools map[string]*toolMessage
	// plan is the message id of the execution's plan, once it has one.
	plan string
}

// streaming is a message whose text is still arriving.
type streaming struct {
	msg  shared.Message
	text strings.Builder
	// broken says a write of the message failed for good; msg.ID is empty
	// when even its first bytes could not be stored.
	broken bool
}

func newSink(r *run) *sink {
	return &sink{r: r, open: make(map[string]*streaming), tools: make(map[string]*toolMessage)}
}

// askRequest is a coalescer barrier carrying an agent request to persist;
// done receives the stored message once the request may be answered.
type askRequest struct {
	msg  store.NewMessage
	done chan shared.Message
}

// storable makes agent text storable in every database: PostgreSQL's text
// cannot hold NUL, so it becomes U+FFFD on both, and the transcript reads
// the same whichever database holds it.
func storable(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// ctx is the context of the sink's writes: the manager's, so a write
// blocked by an outage gives up at shutdown (see Manager.persist).
func (s *sink) ctx() context.Context { return s.r.m.ctx }

// append stores a new message of the session (see run.appendMessage).
func (s *sink) append(what string, in store.NewMessage) (shared.Message, error) {
	return s.r.appendMessage(s.ctx(), what, in)
}

// update stores a change to a message.
func (s *sink) update(what, messageID string, u store.MessageUpdate) (shared.Message, error) {
	msg, err := persisted(s.r.m, s.ctx(), what, s.r.id, func(ctx context.Context) (shared.Message, error) {
		return s.r.m.cfg.Store.UpdateMessage(ctx, s.r.id, messageID, u)
	})
	if err != nil {
		s.r.m.log.Error(what, "session", s.r.id, "err", err)
	}
	return msg, err
}

func (s *sink) handle(out coalescer.Output) {
	pub := s.r.m.pub
	switch out.Op {
	case coalescer.OpOpen:
		typ := shared.MessageAgent
		if out.Kind == coalescer.KindThinking {
			typ = shared.MessageThinking
		}
		text := storable(out.Text)
		m := &streaming{}
		s.open[out.Key] = m
		s.order = append(s.order, out.Key)
		msg, err := s.append("store streamed message", store.NewMessage{SessionID: s.r.id, Type: typ, Content: text, Status: shared.MessageStreaming})
		if err != nil {
			m.broken = true
			return
		}
		m.msg = msg
		m.text.WriteString(text)
		pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
		if typ == shared.MessageAgent {
			s.r.m.mark(s.r.taskID) // a newer agent response clears the task's error
		}
	case coalescer.OpAppend:
		m := s.open[out.Key]
		if m == nil || m.broken {
			return // nothing is stored after a hole
		}
		text, offset := storable(out.Text), m.text.Len()
		err := s.r.m.persist(s.ctx(), "append streamed text", s.r.id, func(ctx context.Context) error {
			return s.r.m.cfg.Store.AppendText(ctx, m.msg.ID, offset, text)
		})
		if err != nil {
			s.r.m.log.Error("append streamed text", "session", s.r.id, "message", m.msg.ID, "err", err)
			m.broken = true
			return
		}
		m.text.WriteString(text)
		m.msg.Content = m.text.String()
		pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, m.msg, true)
	case coalescer.OpBarrier:
		end, atTurnEnd := out.Event.(turnEnd)
		answered := false
		if !atTurnEnd || !end.cut {
			answered = s.finishOpen(shared.MessageComplete)
		}
		s.barrier(out.Event)
		if answered && !atTurnEnd {
			// A complete answer is the task row's preview. The mark
			// follows what the barrier stored, so one projection shows
			// both; at a turn's end the turn marks once it has settled
			// (run.turn), so the answer and the settled state arrive as
			// one summary rather than two.
			s.r.m.mark(s.r.taskID)
		}
	}
}

// finishOpen ends every streaming message with status (a broken one as
// failed); their final states travel as semantic frames. It reports
// whether an agent message ended complete.
func (s *sink) finishOpen(status shared.MessageState) (answered bool) {
	for _, key := range s.order {
		m := s.open[key]
		if m.msg.ID == "" {
			continue
		}
		final := status
		if m.broken {
			final = shared.MessageFailed
		}
		done, err := persisted(s.r.m, s.ctx(), "finish streamed message", s.r.id, func(ctx context.Context) (shared.Message, error) {
			return s.r.m.cfg.Store.FinishMessage(ctx, m.msg.ID, final)
		})
		if err != nil {
			s.r.m.log.Error("finish streamed message", "session", s.r.id, "message", m.msg.ID, "err", err)
			continue
		}
		s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, done, false)
		answered = answered || done.Type == shared.MessageAgent && done.Status == shared.MessageComplete
	}
	clear(s.open)
	s.order = s.order[:0]
	return answered
}

// end finishes what the execution left open when it ended: streaming
// messages and tool calls that never reached a final status end with
// status (failed when the agent died, cancelled when herd stopped it), so
// nothing reads as still streaming after its agent is gone. The coalescer
// has flushed and returned; the caller owns the sink now.
func (s *sink) end(status shared.MessageState) {
	s.finishOpen(status)
	for _, t := range s.tools {
		if t.done {
			continue
		}
		msg, err := s.update("end tool call", t.id, store.MessageUpdate{Status: &status})
		if err != nil {
			continue
		}
		t.done = true
		s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, msg, false)
	}
}

// barrier persists one ordered event.
func (s *sink) barrier(ev any) {
	pub := s.r.m.pub
	switch ev := ev.(type) {
	case turnEnd:
		close(ev.done)
	case askRequest:
		msg, err := s.append("store agent request", ev.msg)
		if err != nil {
			close(ev.done)
			return
		}
		pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
		s.r.m.requestChanged(msg)
		ev.done <- msg
	case agent.Event:
		switch ev.Kind {
		case agent.EventToolCall, agent.EventToolCallUpdate:
			s.tool(ev.Tool)
		case agent.EventPlan:
			s.storePlan(ev.Plan)
		}
	}
}

// toolEnded reports whether a tool call's message has its final status.
func toolEnded(s shared.MessageState) bool {
	return s == shared.MessageComplete || s == shared.MessageFailed
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
func (s *sink) storePlan(entries []agent.PlanEntry) {
	var text strings.Builder
	meta := &shared.MessageMetadata{Entries: make([]shared.PlanEntry, len(entries))}
	for i, e := range entries {
		content := storable(e.Content)
		meta.Entries[i] = shared.PlanEntry{Content: content, Priority: e.Priority, Status: e.Status}
		text.WriteString("- [" + e.Status + "] " + content + "\n")
	}
	content := text.String()
	if s.plan != "" {
		msg, err := s.update("update plan", s.plan, store.MessageUpdate{Content: &content, Metadata: meta})
		if err == nil {
			s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageUpdated, msg, false)
		}
		return
	}
	msg, err := s.append("store plan", store.NewMessage{SessionID: s.r.id, Type: shared.MessagePlan, Content: content, Status: shared.MessageComplete, Metadata: meta})
	if err != nil {
		return
	}
	s.plan = msg.ID
	s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
}

// OnEvent implements agent.Handler: text goes through the coalescer,
// everything the transcript records in order is a barrier.
func (r *run) OnEvent(ev agent.Event) {
	if r.m.ctx.Err() != nil {
		// herd is stopping: its turn's end has cut the stream, and what
		// the agent sends until it is stopped too would open a second
		// message after the cut one rather than continue it.
		return
	}
	co, texec := r.stream()
	if co == nil {
		return
	}
	if f, ok := frameOf(ev); ok {
		r.m.tr.Frame(texec, f)
	}
	// A cycle's usage is kept before the barrier that ends the cycle, so
	// its cost is stored by the time the cycle's answer marks the task.
	r.keepFact(ev)
	var err error
	if r.startsMessage(ev) || cycleEnd(ev) {
		// Chunks of another agent message start new messages here too,
		// however closely they follow the last; and the end of a model
		// cycle ends its messages, also one the agent streamed outside any
		// turn (a background task's notice), which no turn's end would.
		err = co.Barrier(r.m.ctx, messageBoundary{})
	}
	switch ev.Kind {
	case agent.EventText:
		err = errors.Join(err, co.Chunk(r.m.ctx, coalescer.KindAgent, ev.Text))
	case agent.EventThought:
		err = errors.Join(err, co.Chunk(r.m.ctx, coalescer.KindThinking, ev.Text))
	case agent.EventToolCall, agent.EventToolCallUpdate, agent.EventPlan:
		err = co.Barrier(r.m.ctx, ev)
	case agent.EventConfig:
		if ev.Config != nil {
			_, _ = r.storeConfig(r.m.ctx, *ev.Config) // logged there
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		r.m.log.Debug("drop event after close", "session", r.id, "kind", ev.Kind.String(), "err", err)
	}
}

// messageBoundary is the barrier between two agent messages: it ends the
// streaming messages and stores nothing.
type messageBoundary struct{}

// cycleEnd reports whether ev closes a model cycle: a usage update that
// names the cycle's origin (Claude's adapter sends one at the end of each).
func cycleEnd(ev agent.Event) bool {
	return ev.Kind == agent.EventUsage && ev.Usage != nil && ev.Usage.Origin != ""
}

// startsMessage reports whether ev is a chunk of an agent message other
// than the one the last identified chunk belonged to. Chunks without an id
// continue whatever streams.
func (r *run) startsMessage(ev agent.Event) bool {
	if (ev.Kind != agent.EventText && ev.Kind != agent.EventThought) || ev.MessageID == "" {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.agentMessage
	r.agentMessage = ev.MessageID
	return last != "" && last != ev.MessageID
}

// RequestPermission implements agent.Handler: the request is stored (in
// transcript order) and waits for permission.respond.
func (r *run) RequestPermission(ctx context.Context, req agent.PermissionRequest) (string, error) {
	options := make([]shared.PermissionOption, len(req.Options))
	ids := make([]string, len(req.Options))
	for i, o := range req.Options {
		options[i] = shared.PermissionOption{OptionID: o.ID, Name: storable(o.Name), Kind: o.Kind}
		ids[i] = o.ID
	}
	title := storable(req.ToolCall.Title)
	if title == "" {
		title = "The agent asks for permission"
	}
	return r.ask(ctx, shared.MessagePermissionRequest, ids, store.NewMessage{
		Type: shared.MessagePermissionRequest, Content: title,
		Metadata: &shared.MessageMetadata{Options: options, ToolCallID: req.ToolCall.ID, Kind: req.ToolCall.Kind},
	})
}

// Clarify implements agent.Handler: the question is stored and waits for
// clarification.respond.
func (r *run) Clarify(ctx context.Context, req agent.ClarificationRequest) (string, error) {
	return r.ask(ctx, shared.MessageClarificationRequest, nil, store.NewMessage{
		Type: shared.MessageClarificationRequest, Content: storable(req.Question),
	})
}

// ask stores an agent request through the coalescer, so it follows
// everything the agent said before it, and waits for the answer. A request
// that ends unanswered (the agent withdrew it, or the session stopped) is
// stored as cancelled, so no summary keeps asking for it.
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
	if _, stored := <-done; !stored {
		return "", errors.New("the request could not be stored")
	}
	select {
	case answer, ok := <-w.answer:
		if ok {
			return answer, nil
		}
		r.withdraw(pendingID)
		return "", errors.New("session stopped")
	case <-ctx.Done():
		// The agent withdrew the request (its turn was cancelled), or its
		// execution is ending.
		r.withdraw(pendingID)
		return "", ctx.Err()
	}
}

// withdraw stores an unanswered request as cancelled. A request answered
// meanwhile is resolved already and stays so.
func (r *run) withdraw(pendingID string) {
	stored, err := persisted(r.m, r.m.ctx, "cancel agent request", r.id, func(ctx context.Context) (shared.Message, error) {
		return r.m.cfg.Store.ResolveRequest(ctx, r.id, pendingID, shared.MessageCancelled, nil)
	})
	if err != nil {
		if shared.ErrorCode(err) != shared.CodeNotFound {
			r.m.log.Error("cancel agent request", "session", r.id, "err", err)
		}
		return
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionMessageUpdated, stored, false)
	r.m.requestChanged(stored)
}
