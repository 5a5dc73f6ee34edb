package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

// fleet is a workspace of sessions of the mock agent under load, driven
// through one connection, and the ledger of every prompt sent to them:
// what was acknowledged, refused, or left without an answer, and how much
// of each streamed message the client was shown.
type fleet struct {
	t       *testing.T
	c       *client
	members []*member
	ledger  ledger
}

// member is one task with one session.
type member struct {
	name, task, session string
	// chunks is the length of the session's stream (`/scenario stream`);
	// its prompt is sent under the client id name+"-stream".
	chunks int
}

// streamID is the client message id of the member's stream prompt.
func (m *member) streamID() string { return m.name + "-stream" }

// prompt is one message.add the suite sent.
type prompt struct {
	id, session, content string
}

// ledger records every prompt by client message id. A prompt is in at
// most one of acked, refused and uncertain; a retry that is answered moves
// it from uncertain.
type ledger struct {
	mu   sync.Mutex // guards the maps
	sent map[string]prompt
	// acked holds the outcome of the first successful answer.
	acked map[string]shared.MessageOutcome
	// refused holds the code of a protocol error.
	refused map[string]string
	// uncertain are prompts whose connection ended before the answer.
	uncertain map[string]bool
	// shown is, per agent message, the longest content the client was
	// sent (append deltas count from their offset).
	shown map[string]int
}

// init makes the ledger's maps.
func (l *ledger) init() {
	l.sent, l.acked, l.refused = map[string]prompt{}, map[string]shared.MessageOutcome{}, map[string]string{}
	l.uncertain, l.shown = map[string]bool{}, map[string]int{}
}

// newFleet starts n sessions in a fresh workspace of the server and
// subscribes to them; chunks is the length of the stream each will play.
func newFleet(t *testing.T, h *herd, n, chunks int) *fleet {
	t.Helper()
	f := &fleet{t: t}
	f.ledger.init()
	f.connect(h)
	var ws shared.Workspace
	f.must(f.call(shared.ActionWorkspaceCreate, shared.WorkspaceCreateRequest{Name: "faults"}, &ws))
	for i := range n {
		m := &member{name: fmt.Sprintf("s%d", i), chunks: chunks}
		var task shared.Task
		f.must(f.call(shared.ActionTaskCreate, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: m.name}, &task))
		var s shared.Session
		f.must(f.call(shared.ActionSessionCreate, shared.SessionCreateRequest{TaskID: task.ID}, &s))
		m.task, m.session = task.ID, s.ID
		f.members = append(f.members, m)
	}
	for _, m := range f.members {
		f.waitState(m, shared.SessionWaitingForInput)
		var sub shared.SessionSubscribeResponse
		f.must(f.call(shared.ActionSessionSubscribe, shared.SessionRef{SessionID: m.session}, &sub))
	}
	return f
}

// connect opens the fleet's connection to a (new) server.
func (f *fleet) connect(h *herd) {
	f.t.Helper()
	ctx, cancel := timeout(30 * time.Second)
	defer cancel()
	c, _, err := dial(ctx, h.addr, dialOptions{notify: f.note})
	if err != nil {
		f.t.Fatalf("dial %s: %v", h.addr, err)
	}
	f.t.Cleanup(c.close)
	f.c = c
}

// call makes one request on the fleet's connection.
func (f *fleet) call(action string, payload, out any) error {
	ctx, cancel := timeout(30 * time.Second)
	defer cancel()
	return f.c.call(ctx, action, payload, out)
}

// add sends one prompt on the fleet's connection.
func (f *fleet) add(p prompt) (shared.MessageAddResponse, error) {
	ctx, cancel := timeout(30 * time.Second)
	defer cancel()
	return f.send(ctx, p)
}

func (f *fleet) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// note records what the client is shown of streamed agent messages.
func (f *fleet) note(action string, payload json.RawMessage) {
	if action != shared.NotifySessionMessageAdded && action != shared.NotifySessionMessageUpdated {
		return
	}
	var m shared.Message
	if json.Unmarshal(payload, &m) != nil || m.Type != shared.MessageAgent {
		return
	}
	n := len(m.Content)
	if m.AppendFrom != nil {
		n += *m.AppendFrom
	}
	f.ledger.mu.Lock()
	f.ledger.shown[m.ID] = max(f.ledger.shown[m.ID], n)
	f.ledger.mu.Unlock()
}

// send adds a prompt and records its answer in the ledger.
func (f *fleet) send(ctx context.Context, p prompt) (shared.MessageAddResponse, error) {
	l := &f.ledger
	l.mu.Lock()
	l.sent[p.id] = p
	l.mu.Unlock()
	var resp shared.MessageAddResponse
	err := f.c.call(ctx, shared.ActionMessageAdd, shared.MessageAddRequest{SessionID: p.session, ClientMessageID: p.id, Content: p.content}, &resp)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch code := codeOf(err); code {
	case "":
		if _, ok := l.acked[p.id]; !ok {
			l.acked[p.id] = resp.Outcome
		}
		delete(l.uncertain, p.id)
		delete(l.refused, p.id)
	case "closed":
		if _, ok := l.acked[p.id]; !ok {
			l.uncertain[p.id] = true
		}
	default:
		if _, ok := l.acked[p.id]; !ok {
			l.refused[p.id] = code
			delete(l.uncertain, p.id)
		}
	}
	return resp, err
}

// startStreams sends every member its stream prompt, then queued echo
// prompts behind it, each of which must be acknowledged as queued.
func (f *fleet) startStreams(gapMS, queued int) {
	f.t.Helper()
	for _, m := range f.members {
		resp, err := f.add(prompt{m.streamID(), m.session, fmt.Sprintf("/scenario stream %d %d", m.chunks, gapMS)})
		f.must(err)
		if resp.Outcome != shared.OutcomeDispatched {
			f.t.Fatalf("the stream prompt of %s was %s, want dispatched", m.name, resp.Outcome)
		}
		for j := range queued {
			id := fmt.Sprintf("%s-q%d", m.name, j)
			resp, err := f.add(prompt{id, m.session, "echo " + id})
			f.must(err)
			if resp.Outcome != shared.OutcomeQueued {
				f.t.Fatalf("prompt %s behind a running stream was %s, want queued", id, resp.Outcome)
			}
		}
	}
}

// waitStreaming waits until the client has been shown at least bytes of
// every member's stream.
func (f *fleet) waitStreaming(bytes int) {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		started := 0
		for _, m := range f.members {
			var list shared.MessageListResponse
			f.must(f.call(shared.ActionMessageList, shared.MessageListRequest{SessionID: m.session}, &list))
			f.ledger.mu.Lock()
			for _, msg := range list.Messages {
				if msg.Type == shared.MessageAgent && f.ledger.shown[msg.ID] >= bytes {
					started++
					break
				}
			}
			f.ledger.mu.Unlock()
		}
		if started == len(f.members) {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("only %d of %d streams started within 60 s", started, len(f.members))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fire sends echo prompts from workers goroutines, round robin over the
// members, each worker one prompt every pace, until ctx ends or the
// connection does. It returns when every worker has stopped.
func (f *fleet) fire(ctx context.Context, workers int, pace time.Duration) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			tick := time.NewTicker(pace)
			defer tick.Stop()
			for {
				k := next.Add(1)
				m := f.members[int(k)%len(f.members)]
				id := fmt.Sprintf("f-%d", k)
				// The request outlives ctx: its answer (or the lack of
				// one) is what the ledger is for.
				rctx, cancel := timeout(30 * time.Second)
				_, err := f.send(rctx, prompt{id, m.session, "echo " + id})
				cancel()
				if codeOf(err) == "closed" {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
}

// retry sends every prompt left without an answer again, under the same
// client id and content, as the protocol allows; every retry must be
// answered.
func (f *fleet) retry(rec *scenario) {
	f.t.Helper()
	f.ledger.mu.Lock()
	var again []prompt
	for id := range f.ledger.uncertain {
		again = append(again, f.ledger.sent[id])
	}
	f.ledger.mu.Unlock()
	rec.add("prompts_retried", len(again))
	rec.want("retries_refused", "0")
	for _, p := range again {
		if _, err := f.add(p); err != nil {
			rec.add("retries_refused", 1)
			f.t.Errorf("retry of %s: %v", p.id, err)
		}
	}
}

// retryAcknowledged sends one acknowledged queued prompt of every member
// again: the answer must be duplicate, and it must not run twice.
func (f *fleet) retryAcknowledged(rec *scenario) {
	f.t.Helper()
	rec.want("acked_retries_not_duplicate", "0")
	for _, m := range f.members {
		p := prompt{m.name + "-q0", m.session, "echo " + m.name + "-q0"}
		var resp shared.MessageAddResponse
		err := f.call(shared.ActionMessageAdd, shared.MessageAddRequest{SessionID: p.session, ClientMessageID: p.id, Content: p.content}, &resp)
		if err != nil || resp.Outcome != shared.OutcomeDuplicate {
			rec.add("acked_retries_not_duplicate", 1)
			f.t.Errorf("retry of acknowledged %s: outcome %q, err %v", p.id, resp.Outcome, err)
		}
	}
}

// waitState waits until a member's session is in state.
func (f *fleet) waitState(m *member, state shared.SessionState) {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := f.session(m)
		if s.State == state {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("session %s is %s after 60 s, want %s (%s)", m.name, s.State, state, s.ErrorMessage)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// session reads a member's session.
func (f *fleet) session(m *member) shared.Session {
	f.t.Helper()
	var list shared.SessionListResponse
	f.must(f.call(shared.ActionSessionList, shared.TaskRef{TaskID: m.task}, &list))
	for _, s := range list.Sessions {
		if s.ID == m.session {
			return s
		}
	}
	f.t.Fatalf("session %s of task %s is gone", m.session, m.task)
	return shared.Session{}
}

// transcript is what the server holds of one member's session.
type transcript struct {
	session  shared.Session
	messages []shared.Message
	queue    []shared.QueuedPrompt
}

// read loads a member's session, whole transcript and queue.
func (f *fleet) read(m *member) transcript {
	f.t.Helper()
	tr := transcript{session: f.session(m)}
	var before int64
	for {
		var page shared.MessageListResponse
		f.must(f.call(shared.ActionMessageList, shared.MessageListRequest{SessionID: m.session, BeforeSeq: before, Limit: 500}, &page))
		tr.messages = append(page.Messages, tr.messages...)
		if !page.HasMore || len(page.Messages) == 0 {
			break
		}
		before = page.Messages[0].Seq
	}
	var q shared.QueueResponse
	f.must(f.call(shared.ActionMessageQueueGet, shared.SessionRef{SessionID: m.session}, &q))
	tr.queue = q.Queue
	return tr
}

// answers counts the agent messages whose text is exactly content: the
// mock agent echoes a plain prompt as one such message.
func (tr transcript) answers(content string) int {
	n := 0
	for _, msg := range tr.messages {
		if msg.Type == shared.MessageAgent && msg.Content == content {
			n++
		}
	}
	return n
}

// settle waits until every acknowledged echo prompt has been answered and
// no session runs a turn or holds a queue, or until limit passes, and
// returns the transcripts then.
func (f *fleet) settle(limit time.Duration) map[*member]transcript {
	f.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		all := map[*member]transcript{}
		for _, m := range f.members {
			all[m] = f.read(m)
		}
		if f.unsettled(all) == 0 || time.Now().After(deadline) {
			return all
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unsettled counts what keeps the transcripts from being settled:
// acknowledged prompts without an answer, queued prompts, RUNNING
// sessions.
func (f *fleet) unsettled(all map[*member]transcript) int {
	n := 0
	for _, m := range f.members {
		tr := all[m]
		n += len(tr.queue)
		if tr.session.State == shared.SessionRunning {
			n++
		}
		for _, p := range f.acknowledged(m) {
			if tr.answers(p.content) == 0 {
				n++
			}
		}
	}
	return n
}

// acknowledged returns a member's acknowledged echo prompts (its stream
// prompt left out).
func (f *fleet) acknowledged(m *member) []prompt {
	f.ledger.mu.Lock()
	defer f.ledger.mu.Unlock()
	var out []prompt
	for id := range f.ledger.acked {
		if p := f.ledger.sent[id]; p.session == m.session && id != m.streamID() {
			out = append(out, p)
		}
	}
	return out
}
