package loadbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/shared"
)

// promptSeq numbers client_message_ids; every bench server is fresh, so
// a process-wide counter keeps them unique.
var promptSeq atomic.Uint64

func nextClientMessageID() string { return "bench-" + strconv.FormatUint(promptSeq.Add(1), 10) }

// createWorkspace creates a workspace and returns its id.
func createWorkspace(ctx context.Context, c *wsClient, name string) (string, error) {
	var ws shared.Workspace
	if err := c.call(ctx, shared.ActionWorkspaceCreate, map[string]any{"name": name}, &ws); err != nil {
		return "", err
	}
	return ws.ID, nil
}

// createTasks creates n tasks titled prefix 1…n, a few at a time, and
// returns their ids in title order.
func createTasks(ctx context.Context, c *wsClient, workspaceID, prefix string, n int) ([]string, error) {
	ids := make([]string, n)
	err := parallel(ctx, n, 8, func(ctx context.Context, i int) error {
		var t shared.Task
		err := c.call(ctx, shared.ActionTaskCreate, shared.TaskCreateRequest{
			WorkspaceID: workspaceID, Title: fmt.Sprintf("%s %d", prefix, i+1),
		}, &t)
		ids[i] = t.ID
		return err
	})
	return ids, err
}

// startSessions starts a mock session for each task and waits until every
// one waits for input. It returns the session ids in task order.
func startSessions(ctx context.Context, c *wsClient, taskIDs []string) ([]string, error) {
	ids := make([]string, len(taskIDs))
	err := parallel(ctx, len(taskIDs), 8, func(ctx context.Context, i int) error {
		var s shared.Session
		err := c.call(ctx, shared.ActionSessionCreate, shared.SessionCreateRequest{TaskID: taskIDs[i], AgentProfileID: agent.MockProfileID}, &s)
		ids[i] = s.ID
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range taskIDs {
		if err := awaitSessionState(ctx, c, taskIDs[i], ids[i], 60*time.Second, shared.SessionWaitingForInput); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// awaitSessionState polls session.list until the session is in one of
// the wanted states. FAILED ends the wait with an error unless wanted.
func awaitSessionState(ctx context.Context, c *wsClient, taskID, sessionID string, limit time.Duration, want ...shared.SessionState) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		var list shared.SessionListResponse
		if err := c.call(ctx, shared.ActionSessionList, shared.TaskRef{TaskID: taskID}, &list); err != nil {
			return fmt.Errorf("wait for session %s: %w", sessionID, err)
		}
		for _, s := range list.Sessions {
			if s.ID != sessionID {
				continue
			}
			for _, w := range want {
				if s.State == w {
					return nil
				}
			}
			if s.State == shared.SessionFailed {
				return fmt.Errorf("session %s failed: %s", sessionID, s.ErrorMessage)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %s not %v in %s", sessionID, want, limit)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// addMessage sends a prompt and returns the response and its round trip.
func addMessage(ctx context.Context, c *wsClient, sessionID, content string) (shared.MessageAddResponse, time.Duration, error) {
	raw, rtt, err := c.roundTrip(ctx, shared.ActionMessageAdd, shared.MessageAddRequest{
		SessionID: sessionID, ClientMessageID: nextClientMessageID(), Content: content,
	})
	if err != nil {
		return shared.MessageAddResponse{}, rtt, err
	}
	var resp shared.MessageAddResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return resp, rtt, fmt.Errorf("decode message.add response: %w", err)
	}
	return resp, rtt, nil
}

// echoTurn prompts an idle session with plain text and waits until it is
// idle again, giving it a short transcript.
func echoTurn(ctx context.Context, c *wsClient, taskID, sessionID, text string) error {
	if _, _, err := addMessage(ctx, c, sessionID, text); err != nil {
		return err
	}
	// The turn may not have started yet when we look: wait for the answer
	// in the transcript, then for the session to wait for input.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list shared.MessageListResponse
		if err := c.call(ctx, shared.ActionMessageList, shared.MessageListRequest{SessionID: sessionID, Limit: 5}, &list); err != nil {
			return err
		}
		if n := len(list.Messages); n > 0 && list.Messages[n-1].Type != shared.MessageUser && list.Messages[n-1].Status != shared.MessageStreaming {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s did not answer %q", sessionID, text)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return awaitSessionState(ctx, c, taskID, sessionID, 30*time.Second, shared.SessionWaitingForInput)
}

// dialMany opens n connections, a few at a time, each set up by setup.
// onNote(i) gives connection i's notification handler.
func dialMany(ctx context.Context, addr string, n int, onNote func(i int) func(benchNote), setup func(context.Context, *wsClient) error) ([]*wsClient, error) {
	conns := make([]*wsClient, n)
	err := parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		var h func(benchNote)
		if onNote != nil {
			h = onNote(i)
		}
		c, err := dialBench(ctx, addr, h)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		conns[i] = c
		if setup != nil {
			if err := setup(ctx, c); err != nil {
				return fmt.Errorf("connection %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		closeAll(conns)
		return nil, err
	}
	return conns, nil
}

// parallel runs f for 0…n-1, at most limit at a time, and returns the
// first error; the others then see their context cancelled. Every
// goroutine it starts has ended when it returns.
func parallel(ctx context.Context, n, limit int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// closeAll closes every non-nil connection.
func closeAll(conns []*wsClient) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if c != nil {
			wg.Go(c.close)
		}
	}
	wg.Wait()
}

// sessionGroup is one logical client whose open sessions may span several
// connections: the server caps the sessions one connection may open, and
// the bench spreads the rest over further connections rather than
// measuring something smaller than asked.
type sessionGroup struct {
	conns []*wsClient
	// limit is the number of sessions the server let one connection open,
	// or 0 when it never refused.
	limit int
	// refusal is the server's message when it refused.
	refusal string
}

// subscribeSpread subscribes to the sessions in order, on first (which
// must already be open) until the server refuses another, then on further
// connections opened with dial. When the first connection fills up, its
// last reserve sessions move on to the next connection, so the first keeps
// reserve slots free for the caller.
func subscribeSpread(ctx context.Context, first *wsClient, sessions []string, reserve int, dial func(context.Context) (*wsClient, error)) (*sessionGroup, error) {
	g := &sessionGroup{conns: []*wsClient{first}}
	cur := first
	var onCur []string
	for i := 0; i < len(sessions); {
		id := sessions[i]
		var resp shared.SessionSubscribeResponse
		err := cur.call(ctx, shared.ActionSessionSubscribe, shared.SessionRef{SessionID: id}, &resp)
		var we *shared.Error
		if errors.As(err, &we) && we.Code == shared.CodeBadRequest && len(onCur) > 0 {
			// The connection is full.
			if g.limit == 0 {
				g.limit, g.refusal = len(onCur), we.Message
			}
			if cur == first && reserve > 0 {
				back := min(reserve, len(onCur)-1)
				for _, sid := range onCur[len(onCur)-back:] {
					if err := cur.call(ctx, shared.ActionSessionUnsubscribe, shared.SessionRef{SessionID: sid}, nil); err != nil {
						return g, err
					}
				}
				i -= back
			}
			next, err := dial(ctx)
			if err != nil {
				return g, err
			}
			g.conns = append(g.conns, next)
			cur, onCur = next, nil
			continue
		}
		if err != nil {
			return g, fmt.Errorf("subscribe to session %s: %w", id, err)
		}
		if !resp.Joined || resp.Snapshot == nil {
			return g, fmt.Errorf("subscribe to session %s: not joined or no snapshot", id)
		}
		onCur = append(onCur, id)
		i++
	}
	return g, nil
}

// takeCounts sums and resets the group's frame counts.
func (g *sessionGroup) takeCounts() frameCounts {
	fc := newFrameCounts()
	for _, c := range g.conns {
		fc.merge(c.takeCounts())
	}
	return fc
}

// sessionOf extracts session_id from a session notification's payload.
func sessionOf(payload json.RawMessage) string {
	var p struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal(payload, &p)
	return p.SessionID
}

// isSessionAction reports whether a notification belongs to a session's
// stream.
func isSessionAction(action string) bool { return strings.HasPrefix(action, "session.") }

// openWorkspace dials the client that sets a scenario up and creates its
// workspace; the caller closes the client.
func openWorkspace(ctx context.Context, addr, name string) (*wsClient, string, error) {
	setup, err := dialBench(ctx, addr, nil)
	if err != nil {
		return nil, "", err
	}
	ws, err := createWorkspace(ctx, setup, name)
	if err != nil {
		setup.close()
		return nil, "", err
	}
	return setup, ws, nil
}
