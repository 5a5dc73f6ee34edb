package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
)

// markMethod is the notification the wire reader inserts into the stream it
// hands to the SDK. It never travels on the agent's pipes: a frame with this
// method from the agent is dropped, so an agent cannot forge a mark.
const markMethod = "_herd/wire_mark"

// maxFrame is the longest frame accepted, the same as the SDK's limit.
const maxFrame = 10 << 20

// ErrProtocol marks errors caused by frames that break JSON-RPC framing.
var ErrProtocol = errors.New("agent protocol error")

// errDeliveryStopped ends the SDK's reading when delivery was aborted.
var errDeliveryStopped = errors.New("event delivery stopped")

// frameKind classifies a frame the way the SDK dispatches it.
type frameKind uint8

const (
	frameBlank frameKind = iota
	frameNotification
	frameCancel // $/cancel_request: the SDK handles it outside notification order
	frameMark
	frameRequest
	frameResponse
)

// classify parses just enough of a frame to know how the SDK will treat
// it. The parse validates the whole frame, so malformed JSON is caught here
// rather than skipped silently by the SDK.
func classify(line []byte) (frameKind, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return frameBlank, nil
	}
	var f struct {
		ID     *json.RawMessage `json:"id"`
		Method string           `json:"method"`
	}
	if err := json.Unmarshal(line, &f); err != nil {
		return 0, fmt.Errorf("%w: malformed frame (%v): %s", ErrProtocol, err, preview(line))
	}
	switch {
	case f.ID != nil && f.Method == "":
		return frameResponse, nil
	case f.ID != nil:
		return frameRequest, nil
	case f.Method == "$/cancel_request":
		return frameCancel, nil
	case f.Method == markMethod:
		return frameMark, nil
	case f.Method != "":
		return frameNotification, nil
	}
	return 0, fmt.Errorf("%w: frame has neither id nor method: %s", ErrProtocol, preview(line))
}

// preview quotes the start of a frame for an error message.
func preview(b []byte) string {
	const n = 120
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}

// wireReader sits between the agent's stdout and the SDK. It passes frames
// through unchanged and adds marks so that two orderings hold that the SDK
// alone does not give:
//
//   - A request or response from the agent reaches the SDK only after the
//     Handler has been given every notification that preceded it on the
//     wire. The SDK runs each request on its own goroutine at once, so
//     without this a permission request could overtake the tool_call that
//     announced it; and a prompt's result now means its updates were
//     delivered, not merely queued.
//   - No more than the window of notifications is ever read ahead of
//     delivery. A slow Handler therefore stops the reading of the agent's
//     stdout (the agent blocks on a full pipe) instead of overflowing the
//     SDK's queue, which would close the connection.
//
// Only the SDK's receive goroutine calls Read.
type wireReader struct {
	src *bufio.Reader
	seq *sequencer
	// violation is called once with a protocol error; it ends the execution.
	violation func(error)
	// trace, when set, receives every frame read (see Options.Trace).
	trace func([]byte)

	out  []byte // bytes ready for the SDK
	held []byte // a request or response waiting for heldMark to pass
	// heldMark is the mark held waits for; since counts notifications
	// passed on after the last mark.
	heldMark uint64
	since    int
	// end is why the agent's output ended; it is returned once endMark,
	// the closing mark, has passed.
	end     error
	endMark uint64

	buf, hold, long []byte // reused storage

	// heldResponse says held is a response.
	heldResponse bool

	// replay is set while a session/load replays history, whose updates
	// the client drops. The reader clears it when it passes the next
	// response (the load's answer) to the SDK: every update before the
	// answer has then been handled and no later one has been read, so the
	// replay ends exactly at the answer in wire order.
	replay atomic.Bool

	// frames counts the frames read; teardown watches it for progress.
	frames atomic.Uint64
}

// Read implements io.Reader for the SDK's scanner.
func (r *wireReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// next prepares the next bytes for the SDK in r.out.
func (r *wireReader) next() error {
	switch {
	case r.held != nil:
		if !r.seq.waitPassed(r.heldMark) {
			return errDeliveryStopped
		}
		r.out, r.held = r.held, nil
		if r.heldResponse {
			r.replay.Store(false)
		}
		return nil
	case r.endMark != 0:
		r.seq.waitPassed(r.endMark)
		return r.end
	}
	line, err := r.readFrame()
	if err != nil {
		return r.endStream(err)
	}
	r.frames.Add(1)
	if r.trace != nil {
		r.trace(append([]byte(nil), bytes.TrimRight(line, "\r\n")...))
	}
	kind, err := classify(line)
	if err != nil {
		r.violation(err)
		return r.endStream(err)
	}
	switch kind {
	case frameBlank, frameMark:
	case frameCancel:
		r.out = r.emit(line)
	case frameNotification:
		r.out = r.emit(line)
		if r.since++; r.since == markEvery {
			k, ok := r.seq.issue(true)
			if !ok {
				return errDeliveryStopped
			}
			r.out = appendMark(r.out, k)
			r.buf, r.since = r.out[:0], 0
		}
	case frameRequest, frameResponse:
		if r.since == 0 && r.seq.caughtUp() {
			r.out = r.emit(line)
			if kind == frameResponse {
				r.replay.Store(false)
			}
			return nil
		}
		k, ok := r.seq.issue(false)
		if !ok {
			return errDeliveryStopped
		}
		r.hold = append(r.hold[:0], line...)
		r.held, r.heldMark, r.since = r.hold, k, 0
		r.heldResponse = kind == frameResponse
		r.out = appendMark(r.buf[:0], k)
		r.buf = r.out[:0]
	}
	return nil
}

// emit copies a frame into the reader's own buffer: line belongs to the
// bufio.Reader and changes on the next read.
func (r *wireReader) emit(line []byte) []byte {
	r.buf = append(r.buf[:0], line...)
	return r.buf
}

// endStream forwards the closing mark; once it has passed, every event
// read before the end has been delivered and err is returned to the SDK.
func (r *wireReader) endStream(err error) error {
	k, ok := r.seq.finish()
	if !ok {
		return err
	}
	r.end, r.endMark = err, k
	r.out = appendMark(r.buf[:0], k)
	r.buf = r.out[:0]
	return nil
}

// readFrame returns the next line, newline included, or an unterminated
// last line before io.EOF.
func (r *wireReader) readFrame() ([]byte, error) {
	line, err := r.src.ReadSlice('\n')
	switch {
	case err == nil, err == io.EOF && len(line) > 0:
		return line, nil
	case err != bufio.ErrBufferFull:
		return nil, err
	}
	r.long = append(r.long[:0], line...)
	for {
		line, err = r.src.ReadSlice('\n')
		r.long = append(r.long, line...)
		if len(r.long) > maxFrame {
			err := fmt.Errorf("%w: frame longer than %d bytes: %s", ErrProtocol, maxFrame, preview(r.long))
			r.violation(err)
			return nil, err
		}
		switch {
		case err == nil, err == io.EOF && len(r.long) > 0:
			return r.long, nil
		case err != bufio.ErrBufferFull:
			return nil, err
		}
	}
}

// appendMark appends the mark frame for k to b.
func appendMark(b []byte, k uint64) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"`+markMethod+`","params":{"mark":`...)
	b = strconv.AppendUint(b, k, 10)
	return append(b, "}}\n"...)
}
