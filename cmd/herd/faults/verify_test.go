package faults

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/herd-dev/herd/shared"
)

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
