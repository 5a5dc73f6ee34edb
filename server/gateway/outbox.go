package gateway

import "sync"

// Lane capacities. The control lane holds responses and errors; it is sized
// well above the per-connection in-flight request limit, so it fills only
// when a client stops reading. The semantic lane holds ordered notifications.
const (
	defaultControlCap  = 256
	defaultSemanticCap = 1024
)

// laneClass names an outbound queue in metrics and close reasons.
type laneClass string

const (
	laneControl  laneClass = "control"
	laneSemantic laneClass = "semantic"
)

// outbox is one connection's set of bounded outbound queues, drained by the
// connection's single writer goroutine in priority order: control first,
// then semantic. Producers never block: a full lane reports overflow, and
// the connection is closed (overflow policy "close the peer"), because a
// dropped response or ordered notification would leave the client wrong.
type outbox struct {
	wake chan struct{} // capacity 1: signals the writer that work is queued

	mu          sync.Mutex // guards the fields below
	control     [][]byte
	semantic    [][]byte
	controlCap  int
	semanticCap int
	closed      bool
}

func newOutbox(controlCap, semanticCap int) *outbox {
	return &outbox{
		wake:        make(chan struct{}, 1),
		controlCap:  controlCap,
		semanticCap: semanticCap,
	}
}

// push appends an encoded frame to a lane. It reports false when the lane is
// full or the outbox is closed; the caller then closes the connection.
func (o *outbox) push(lane laneClass, frame []byte) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	switch lane {
	case laneControl:
		if len(o.control) >= o.controlCap {
			o.mu.Unlock()
			return false
		}
		o.control = append(o.control, frame)
	default:
		if len(o.semantic) >= o.semanticCap {
			o.mu.Unlock()
			return false
		}
		o.semantic = append(o.semantic, frame)
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return true
}

// next removes and returns the highest-priority queued frame.
func (o *outbox) next() ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.control) > 0 {
		f := o.control[0]
		o.control[0] = nil
		o.control = o.control[1:]
		return f, true
	}
	if len(o.semantic) > 0 {
		f := o.semantic[0]
		o.semantic[0] = nil
		o.semantic = o.semantic[1:]
		return f, true
	}
	return nil, false
}

// close empties the outbox and refuses further frames, freeing its memory.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.control = nil
	o.semantic = nil
	o.mu.Unlock()
}
