package loadbench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/herd-dev/herd/shared"
)

// streamDriver keeps sessions streaming: it prompts each with the stream
// scenario and prompts it again whenever its turn settles, until stopped.
// Settled turns reach it through observe, called by the notification
// handler of a connection subscribed to the sessions. Its goroutine is
// started by start and ended by stop.
type streamDriver struct {
	c        *wsClient // sends the prompts; follows nothing
	sessions []string
	isStream map[string]bool // read-only after construction

	settled chan string // sessions whose turn settled
	quit    chan struct{}
	done    chan struct{}
	turns   atomic.Int64 // prompts sent
	lost    atomic.Int64 // settles dropped because settled was full
	errMu   sync.Mutex   // guards err
	err     error

	promptMu sync.Mutex // guards prompt
	prompt   string

	tally chunkTally
}

// streamPrompt is the mock agent's scenario streaming chunks gapMS apart.
func streamPrompt(chunks, gapMS int) string {
	return fmt.Sprintf("/scenario stream %d %d", chunks, gapMS)
}

func newStreamDriver(c *wsClient, sessions []string, prompt string) *streamDriver {
	d := &streamDriver{
		c:        c,
		prompt:   prompt,
		sessions: sessions,
		isStream: make(map[string]bool, len(sessions)),
		settled:  make(chan string, 4*len(sessions)+16),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		tally:    chunkTally{msg: map[string]*textSeen{}},
	}
	for _, s := range sessions {
		d.isStream[s] = true
	}
	return d
}

// observe watches one subscriber connection's notifications: settled
// turns of streaming sessions, and the text they stream. It runs on that
// connection's reader goroutine and never blocks.
func (d *streamDriver) observe(n benchNote) {
	switch n.Action {
	case "session.turn.settled":
		if sid := sessionOf(n.Payload); d.isStream[sid] {
			select {
			case d.settled <- sid:
			default:
				d.lost.Add(1)
			}
		}
	case "session.message.added", "session.message.updated":
		d.tally.observe(n.Payload, d.isStream)
	}
}

// start prompts every session, then re-prompts settled ones until stop.
func (d *streamDriver) start(ctx context.Context) {
	go func() {
		defer close(d.done)
		for _, s := range d.sessions {
			d.send(ctx, s)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.quit:
				return
			case s := <-d.settled:
				d.send(ctx, s)
			}
		}
	}()
}

func (d *streamDriver) send(ctx context.Context, session string) {
	if _, _, err := addMessage(ctx, d.c, session, d.currentPrompt()); err != nil {
		d.errMu.Lock()
		if d.err == nil && ctx.Err() == nil {
			d.err = err
		}
		d.errMu.Unlock()
		return
	}
	d.turns.Add(1)
}

// retarget switches the streams to a new prompt: it cancels the running
// turns, and the driver prompts each session anew as its turn settles.
func (d *streamDriver) retarget(ctx context.Context, prompt string) error {
	d.setPrompt(prompt)
	return parallel(ctx, len(d.sessions), 8, func(ctx context.Context, i int) error {
		return d.c.call(ctx, shared.ActionSessionCancel, shared.SessionRef{SessionID: d.sessions[i]}, nil)
	})
}

// setPrompt sets the prompt before start.
func (d *streamDriver) setPrompt(prompt string) {
	d.promptMu.Lock()
	d.prompt = prompt
	d.promptMu.Unlock()
}

// currentPrompt is the prompt streams are started with.
func (d *streamDriver) currentPrompt() string {
	d.promptMu.Lock()
	defer d.promptMu.Unlock()
	return d.prompt
}

// stop ends re-prompting; running turns go on until the server stops. It
// returns the first prompting error.
func (d *streamDriver) stop() error {
	close(d.quit)
	<-d.done
	d.errMu.Lock()
	defer d.errMu.Unlock()
	return d.err
}

// chunkTally counts the stream chunks a subscriber has seen. A stream
// chunk is "N ", so a message's chunks are the spaces in its text. An
// update carries either the whole text so far or, as an append delta
// (append_from), the bytes after what the connection already has.
type chunkTally struct {
	mu  sync.Mutex           // guards msg
	msg map[string]*textSeen // message id → what was seen of its text
}

// textSeen is how much of one message's text a subscriber has.
type textSeen struct {
	bytes, chunks int64
}

func (t *chunkTally) observe(payload json.RawMessage, isStream map[string]bool) {
	var m struct {
		ID         string `json:"id"`
		SessionID  string `json:"session_id"`
		Type       string `json:"type"`
		Content    string `json:"content"`
		AppendFrom *int64 `json:"append_from"`
	}
	if json.Unmarshal(payload, &m) != nil || !isStream[m.SessionID] || m.Type != string(shared.MessageAgent) {
		return
	}
	n := int64(strings.Count(m.Content, " "))
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := t.msg[m.ID]
	if seen == nil {
		seen = &textSeen{}
		t.msg[m.ID] = seen
	}
	switch {
	case m.AppendFrom == nil:
		// A whole state; never count less than was already seen.
		if n >= seen.chunks {
			seen.bytes, seen.chunks = int64(len(m.Content)), n
		}
	case *m.AppendFrom == seen.bytes:
		seen.bytes += int64(len(m.Content))
		seen.chunks += n
	case *m.AppendFrom > seen.bytes:
		// A gap (a delta against bytes this client never got, which the
		// server does not send): count what arrived.
		seen.bytes = *m.AppendFrom + int64(len(m.Content))
		seen.chunks += n
	}
}

// total returns the chunks seen so far.
func (t *chunkTally) total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sum int64
	for _, s := range t.msg {
		sum += s.chunks
	}
	return sum
}
