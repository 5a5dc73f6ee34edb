package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/shared"
)

// StopReason says why a turn ended.
type StopReason string

// The stop reasons of ACP v1.
const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// Prompt sends text, followed by its attachments (see promptBlocks), as
// the next turn and blocks until the turn ends. When it
// returns, OnEvent has been called for every update the agent sent before
// its answer. A JSON-RPC error from the agent is returned as *AgentError and
// leaves the execution usable. ctx bounds the wait; to stop a turn cleanly
// use Cancel, after which Prompt returns StopCancelled. If the agent ends,
// Prompt waits for Done and returns Err. A second Prompt while one runs
// returns ErrTurnInProgress, unless the adapter attests the handoff
// (Capabilities.Handoff): then the caller, which owns prompt admission,
// may send a successor while the earlier request is still open.
func (e *Execution) Prompt(ctx context.Context, text string, attachments ...shared.Attachment) (StopReason, error) {
	if !e.caps.Handoff {
		if !e.turn.TryLock() {
			return "", ErrTurnInProgress
		}
		defer e.turn.Unlock()
	}
	turn := e.beginTurn()
	resp, err := e.conn.Prompt(ctx, acp.PromptRequest{
		SessionId: e.sessionID,
		Prompt:    promptBlocks(text, attachments),
	})
	e.endTurn(ctx, turn, err == nil && StopReason(resp.StopReason) != StopCancelled, !e.peerGone())
	if err == nil {
		return StopReason(resp.StopReason), nil
	}
	select {
	case <-e.conn.Done():
		<-e.done
		return "", fmt.Errorf("prompt: %w", e.Err())
	default:
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("prompt: %w", ctx.Err())
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return "", fmt.Errorf("prompt: %w", agentError(re))
	}
	return "", fmt.Errorf("prompt: %w", err)
}

// peerGone reports whether the agent's output has ended.
func (e *Execution) peerGone() bool {
	select {
	case <-e.conn.Done():
		return true
	default:
		return false
	}
}

// Cancel sends session/cancel and withdraws every permission or
// clarification request the Handler has not answered, which then reach the
// agent as cancelled outcomes.
func (e *Execution) Cancel(ctx context.Context) error {
	e.cancelRequests(false)
	if err := e.conn.Cancel(ctx, acp.CancelNotification{SessionId: e.sessionID}); err != nil {
		select {
		case <-e.done:
			return fmt.Errorf("session/cancel: %w", e.Err())
		default:
			return fmt.Errorf("session/cancel: %w", err)
		}
	}
	return nil
}

// Close ends the execution: it closes the agent's stdin, sends SIGTERM to
// its process group, SIGKILL after KillGrace, and waits for Done. It may be
// called any number of times and always returns nil once the process group
// is gone; Err says how the execution ended.
func (e *Execution) Close() error {
	e.mu.Lock()
	if e.err == nil {
		e.closing = true
	}
	e.mu.Unlock()
	e.requestStop()
	<-e.done
	return nil
}

// fail records err as why the execution ended, unless a reason is already
// known, and starts teardown.
func (e *Execution) fail(err error) {
	e.mu.Lock()
	if e.err == nil && !e.closing {
		e.err = err
	}
	e.mu.Unlock()
	e.requestStop()
}

// requestStop starts teardown without recording a reason.
func (e *Execution) requestStop() {
	e.stopOnce.Do(func() { close(e.stop) })
}

// wait reaps the process.
func (e *Execution) wait() {
	e.waitErr = e.cmd.Wait()
	e.state = e.cmd.ProcessState
	close(e.exited)
}

// supervise owns teardown. It runs until the process group is gone, the
// agent's output has drained and the Handler is idle, then closes done.
func (e *Execution) supervise() {
	defer close(e.done)
	outputClosed := false
	select {
	case <-e.stop:
	case <-e.exited:
	case <-e.conn.Done():
		// Output ends just before a process exits; give it time to.
		outputClosed = true
		t := time.NewTimer(e.opts.KillGrace)
		select {
		case <-e.exited:
		case <-e.stop:
		case <-t.C:
		}
		t.Stop()
	}
	e.cancelRequests(true)
	// Killed means our signal ended it, not a status it had already set.
	killed := e.terminate() && e.state != nil && !e.state.Exited()
	// Kill whatever the agent left in its group. The group id stays taken
	// while any member lives, so this reaches no other group unless the
	// group is already empty.
	signalGroup(e.cmd.Process.Pid, syscall.SIGKILL)
	e.drain()
	e.requests.Wait()
	e.stdout.Close()

	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.err != nil:
	case e.closing:
		e.err = ErrClosed
	case outputClosed && killed:
		e.err = errors.New("agent closed its output but kept running; stopped it")
	default:
		e.err = exitError(e.state, e.waitErr, &e.stderr)
	}
}

// terminate stops the process if it still runs and waits until it has been
// reaped. It reports whether a signal was needed.
func (e *Execution) terminate() bool {
	_ = e.stdin.f.Close()
	select {
	case <-e.exited:
		return false
	default:
	}
	pid := e.cmd.Process.Pid
	signalGroup(pid, syscall.SIGTERM)
	t := time.NewTimer(e.opts.KillGrace)
	defer t.Stop()
	select {
	case <-e.exited:
	case <-t.C:
		signalGroup(pid, syscall.SIGKILL)
		<-e.exited
	}
	return true
}

// drain lets the reader deliver what the agent wrote before it ended. A
// process that left the group may still hold the pipe open; the pipe is
// closed under the reader only once it has read nothing for a whole
// KillGrace while not waiting for the Handler, so no written frame is lost.
func (e *Execution) drain() {
	tick := time.NewTicker(e.opts.KillGrace)
	defer tick.Stop()
	frames := e.reader.frames.Load()
	for waiting := true; waiting; {
		select {
		case <-e.conn.Done():
			waiting = false
		case <-tick.C:
			now := e.reader.frames.Load()
			if now == frames && e.seq.caughtUp() {
				e.stdout.Close()
			}
			frames = now
		}
	}
	select {
	case <-e.seq.done:
	case <-tick.C:
		e.seq.abort()
		<-e.seq.done
	}
}

// track gives a Handler request a context that Cancel and teardown end.
// ok is false once teardown began; the request is then answered at once.
func (e *Execution) track(ctx context.Context) (_ context.Context, release func(), ok bool) {
	ctx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		cancel()
		return ctx, func() {}, false
	}
	id := e.nextReq
	e.nextReq++
	e.pending[id] = cancel
	e.requests.Add(1)
	return ctx, func() {
		e.mu.Lock()
		delete(e.pending, id)
		e.mu.Unlock()
		cancel()
		e.requests.Done()
	}, true
}

// cancelRequests ends the context of every request the Handler holds; with
// final set no request is admitted afterwards.
func (e *Execution) cancelRequests(final bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if final {
		e.stopping = true
	}
	for _, cancel := range e.pending {
		cancel()
	}
}

// AgentError is a JSON-RPC error the agent answered a request with. It
// reports a failed turn, not a failed process: the execution stays usable.
type AgentError struct {
	Code    int
	Message string
	// Data is the error's data member, decoded from JSON; nil when absent.
	Data any
}

// Error describes the error with its data, if any.
func (e *AgentError) Error() string {
	if detail := dataText(e.Data); detail != "" {
		return fmt.Sprintf("agent error %d: %s: %s", e.Code, e.Message, detail)
	}
	return fmt.Sprintf("agent error %d: %s", e.Code, e.Message)
}

// dataText renders an error's data for people: its "error" or "message"
// text when it has one (agents commonly wrap the cause so), else compact
// JSON.
func dataText(data any) string {
	if data == nil {
		return ""
	}
	if m, ok := data.(map[string]any); ok {
		for _, key := range []string{"error", "message"} {
			if text, ok := m[key].(string); ok && len(m) == 1 {
				return text
			}
		}
	}
	if text, ok := data.(string); ok {
		return text
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Sprint(data)
	}
	return string(b)
}

func agentError(re *acp.RequestError) *AgentError {
	return &AgentError{Code: re.Code, Message: re.Message, Data: re.Data}
}
