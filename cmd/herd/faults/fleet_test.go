package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
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

// numbers is the whole text of `/scenario stream n`: "0 1 … n-1 ".
func numbers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d ", i)
	}
	return b.String()
}

// streamEnd says how a fault leaves the streams it interrupts.
type streamEnd struct {
	// whole: the stream ran through the fault and must be complete with
	// every chunk; otherwise it was cut off and must end with one of cut,
	// holding a prefix of its text.
	whole bool
	cut   []shared.MessageState
}

// verify counts, over the settled transcripts, every way the ledger and
// the server disagree; see doc.go for what each count means.
func (f *fleet) verify(rec *scenario, all map[*member]transcript, end streamEnd) {
	f.t.Helper()
	for _, name := range []string{"acked_lost", "duplicates", "never_ran", "queued_left", "refused_stored",
		"streaming_left", "holes", "shown_not_stored", "stream_end_wrong", "stale_badges"} {
		rec.want(name, "0")
	}
	l := f.ledger.copy()
	rec.add("prompts_acked", len(l.acked))
	rec.add("prompts_refused", len(l.refused))
	rec.add("prompts_unanswered", len(l.uncertain))
	for _, m := range f.members {
		tr := all[m]
		// A prompt is stored once it is in the transcript or, not yet sent,
		// in the queue.
		stored := map[string]int{}
		for _, q := range tr.queue {
			stored[q.ClientMessageID]++
		}
		for _, msg := range tr.messages {
			if msg.Type == shared.MessageUser {
				stored[msg.ClientMessageID]++
			}
			if msg.Status == shared.MessageStreaming {
				rec.add("streaming_left", 1)
				f.t.Errorf("%s: message %s is still streaming", m.name, msg.ID)
			}
		}
		for id, n := range stored {
			if n > 1 {
				rec.add("duplicates", n-1)
				f.t.Errorf("%s: client id %s stored %d times", m.name, id, n)
			}
		}
		for id := range l.acked {
			p := l.sent[id]
			if p.session != m.session {
				continue
			}
			if stored[id] == 0 {
				rec.add("acked_lost", 1)
				f.t.Errorf("%s: acknowledged prompt %s is neither in the transcript nor queued", m.name, id)
			}
			if id == m.streamID() {
				continue
			}
			switch n := tr.answers(p.content); {
			case n == 0:
				rec.add("never_ran", 1)
				f.t.Errorf("%s: acknowledged prompt %s never ran", m.name, id)
			case n > 1:
				rec.add("duplicates", n-1)
				f.t.Errorf("%s: prompt %s ran %d times", m.name, id, n)
			}
		}
		for id := range l.refused {
			if l.sent[id].session == m.session && stored[id] > 0 {
				rec.add("refused_stored", 1)
				f.t.Errorf("%s: refused prompt %s was stored", m.name, id)
			}
		}
		rec.add("queued_left", len(tr.queue))
		f.verifyStream(rec, m, tr, end, l.shown)
	}
	f.verifyBadges(rec, all)
}

// copy returns the ledger's maps as they are now.
func (l *ledger) copy() ledger {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ledger{
		sent: maps.Clone(l.sent), acked: maps.Clone(l.acked), refused: maps.Clone(l.refused),
		uncertain: maps.Clone(l.uncertain), shown: maps.Clone(l.shown),
	}
}

// verifyStream checks a member's stream message: run once, its text a
// prefix of the whole (or all of it), never shorter than what the client
// was shown, and ended as the fault should leave it. It reports whether
// every check held.
func (f *fleet) verifyStream(rec *scenario, m *member, tr transcript, end streamEnd, shownBytes map[string]int) bool {
	want := numbers(m.chunks)
	var streams []shared.Message
	for _, msg := range tr.messages {
		if msg.Type == shared.MessageAgent && strings.HasPrefix(msg.Content, "0 ") {
			streams = append(streams, msg)
		}
	}
	if len(streams) == 0 {
		rec.add("holes", 1)
		f.t.Errorf("%s: no stream message", m.name)
		return false
	}
	ok := true
	if len(streams) > 1 {
		rec.add("duplicates", len(streams)-1)
		f.t.Errorf("%s: %d stream messages, want 1", m.name, len(streams))
		ok = false
	}
	s := streams[0]
	switch {
	case end.whole && s.Content != want:
		rec.add("holes", 1)
		f.t.Errorf("%s: the stream stored %d of %d bytes; first difference at byte %d", m.name, len(s.Content), len(want), firstDifference(s.Content, want))
		ok = false
	case !strings.HasPrefix(want, s.Content):
		rec.add("holes", 1)
		f.t.Errorf("%s: the cut-off stream is not a prefix of its text; first difference at byte %d", m.name, firstDifference(s.Content, want))
		ok = false
	}
	if shown := shownBytes[s.ID]; shown > len(s.Content) {
		rec.add("shown_not_stored", 1)
		f.t.Errorf("%s: the client was shown %d bytes of the stream, the server stored %d", m.name, shown, len(s.Content))
		ok = false
	}
	ended := end.whole && s.Status == shared.MessageComplete
	for _, st := range end.cut {
		ended = ended || (!end.whole && s.Status == st)
	}
	if !ended {
		rec.add("stream_end_wrong", 1)
		f.t.Errorf("%s: the stream ended %s (%d of %d bytes), want %+v", m.name, s.Status, len(s.Content), len(want), end)
		ok = false
	}
	if !end.whole && s.Status != shared.MessageComplete {
		rec.add("streams_cut", 1)
	}
	return ok
}

// firstDifference is the index of the first byte where a and b differ.
func firstDifference(a, b string) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}

// verifyBadges checks that nothing shows work that is not happening: no
// session is RUNNING or shows an activity once settled, and every task's
// status summary agrees with its session (state, no activity, queued
// count). Summaries are derived asynchronously, so they get a few seconds
// to converge; a badge still wrong then is stale.
func (f *fleet) verifyBadges(rec *scenario, all map[*member]transcript) {
	f.t.Helper()
	for _, m := range f.members {
		s := all[m].session
		if s.State == shared.SessionRunning || s.ForegroundActivity != "" {
			rec.add("stale_badges", 1)
			f.t.Errorf("%s: session is %s (activity %q) with every prompt settled", m.name, s.State, s.ForegroundActivity)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var wrong []string
		for _, m := range f.members {
			tr := all[m]
			var task shared.Task
			f.must(f.call(shared.ActionTaskGet, shared.TaskRef{TaskID: m.task}, &task))
			if problem := badgeProblem(task, tr); problem != "" {
				wrong = append(wrong, m.name+": "+problem)
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			rec.add("stale_badges", len(wrong))
			f.t.Errorf("stale status summaries after 10 s: %s", strings.Join(wrong, "; "))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// badgeProblem says how a task's summary disagrees with its settled
// session, or "".
func badgeProblem(task shared.Task, tr transcript) string {
	sum := task.StatusSummary
	switch {
	case sum == nil:
		return "no status summary"
	case sum.PrimarySession == nil || sum.PrimarySession.ID != tr.session.ID:
		return "the summary names no primary session"
	case sum.PrimarySession.State != tr.session.State:
		return fmt.Sprintf("the summary shows %s, the session is %s", sum.PrimarySession.State, tr.session.State)
	case sum.ForegroundActivity != "" || task.ForegroundActivity != "":
		return fmt.Sprintf("the summary shows %q with no turn running", sum.ForegroundActivity)
	case sum.QueuedPromptCount != len(tr.queue):
		return fmt.Sprintf("the summary counts %d queued prompts, the queue holds %d", sum.QueuedPromptCount, len(tr.queue))
	}
	return ""
}
