package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

// An agent that crashes mid-stream fails its session visibly and alone:
// the session ends FAILED with an error message, the partial answer ends
// failed with the text that arrived, nothing is left streaming or showing
// work, the session refuses further prompts as not promptable, the dead
// agent is reaped and gone, and sessions beside it stream on whole.
func TestAgentCrashFailsItsSessionVisibly(t *testing.T) {
	rec := record(t)
	h := startHerd(t, serveOptions{})
	f := newFleet(t, h, 8, 1000)
	crashers, healthy := f.members[:6], f.members[6:]
	agents := map[string]proc{} // by task
	for _, p := range h.children() {
		if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", p.pid)); err == nil {
			agents[filepath.Base(cwd)] = p
		}
	}
	rec.want("agents_before_fault", "8")
	rec.add("agents_before_fault", len(agents))

	// A turn of a second holds each crasher RUNNING while the crash and a
	// prompt behind it are queued, so both are taken before the agent dies.
	for _, m := range crashers {
		for _, p := range []prompt{
			{m.name + "-hold", m.session, "/scenario sleep 1000"},
			{m.name + "-crash", m.session, "/scenario crash"},
			{m.name + "-q0", m.session, "echo " + m.name + "-q0"},
		} {
			_, err := f.add(p)
			f.must(err)
		}
	}
	for _, m := range healthy {
		_, err := f.add(prompt{m.streamID(), m.session, fmt.Sprintf("/scenario stream %d 2", m.chunks)})
		f.must(err)
	}
	for _, m := range crashers {
		f.waitState(m, shared.SessionFailed)
	}
	for _, name := range []string{"failed_without_error", "crash_message_not_failed", "failed_session_took_prompt", "unreaped", "orphans", "streaming_left", "stale_badges", "holes"} {
		rec.want(name, "0")
	}
	rec.want("healthy_streams_whole", "2")

	all := map[*member]transcript{}
	for _, m := range crashers {
		tr := f.read(m)
		all[m] = tr
		if tr.session.ErrorMessage == "" {
			rec.add("failed_without_error", 1)
			t.Errorf("%s: FAILED with no error message", m.name)
		}
		var answer []shared.Message
		for _, msg := range tr.messages {
			if msg.Type == shared.MessageAgent {
				answer = append(answer, msg)
			}
		}
		if len(answer) != 1 || answer[0].Status != shared.MessageFailed || !strings.HasPrefix("0 1 2 ", answer[0].Content) {
			rec.add("crash_message_not_failed", 1)
			t.Errorf("%s: the crashed turn left agent messages %+v, want one failed prefix of %q", m.name, answer, "0 1 2 ")
		}
		// The prompt queued behind the crash stays stored and visible in
		// the queue of the failed session, where it can be removed.
		rec.add("prompts_left_queued_in_failed", len(tr.queue))
		err := f.call(shared.ActionMessageAdd, shared.MessageAddRequest{SessionID: m.session, ClientMessageID: m.name + "-after", Content: "after"}, nil)
		if codeOf(err) != string(shared.CodeNotPromptable) {
			rec.add("failed_session_took_prompt", 1)
			t.Errorf("%s: a prompt to the failed session answered %v, want not_promptable", m.name, err)
		}
		if p, ok := agents[m.task]; ok && len(survivors([]proc{p}, 5*time.Second)) > 0 {
			rec.add("orphans", 1)
			t.Errorf("%s: the crashed agent (pid %d) still runs", m.name, p.pid)
		}
	}
	rec.add("unreaped", zombies(h, 5*time.Second))

	all = f.settleMembers(healthy, all)
	for _, m := range healthy {
		if f.verifyStream(rec, m, all[m], streamEnd{whole: true}, f.ledger.copy().shown) {
			rec.add("healthy_streams_whole", 1)
		}
	}
	for m, tr := range all {
		for _, msg := range tr.messages {
			if msg.Status == shared.MessageStreaming {
				rec.add("streaming_left", 1)
				t.Errorf("%s: message %s still streaming", m.name, msg.ID)
			}
		}
	}
	f.verifyBadges(rec, all)
}

// settleMembers waits until the members' streams have ended and their
// sessions wait for input, then adds their transcripts to all.
func (f *fleet) settleMembers(ms []*member, all map[*member]transcript) map[*member]transcript {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, m := range ms {
		for {
			tr := f.read(m)
			all[m] = tr
			if tr.session.State == shared.SessionWaitingForInput && tr.streamEnded() {
				break
			}
			if time.Now().After(deadline) {
				f.t.Errorf("%s: the stream did not end within 60 s (session %s)", m.name, tr.session.State)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return all
}

// streamEnded reports whether the transcript holds a stream's answer that
// no longer streams.
func (tr transcript) streamEnded() bool {
	for _, msg := range tr.messages {
		if msg.Type == shared.MessageAgent && strings.HasPrefix(msg.Content, "0 ") && msg.Status != shared.MessageStreaming {
			return true
		}
	}
	return false
}

// zombies waits up to limit for the server to reap its exited children
// and returns how many it has not.
func zombies(h *herd, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		n := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			var pid int
			if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
				continue
			}
			if st, err := readStat(pid); err == nil && st.ppid == h.cmd.Process.Pid && st.state == 'Z' {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}
