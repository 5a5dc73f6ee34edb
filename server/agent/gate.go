package agent

import (
	"io"
	"sync"
)

// ReadGate holds every Read of a reader until Open is called. acp-go-sdk
// v0.13.0 starts reading the peer inside NewConnection, and its SetLogger
// writes a field that the reading goroutine reads (to log the connection's
// end, which comes at once when the peer is already gone): a connection
// whose peer reader waits for Open, called after SetLogger, reads nothing
// before it is configured.
type ReadGate struct {
	r    io.Reader
	open chan struct{}
	once sync.Once
}

// NewReadGate returns a closed gate in front of r.
func NewReadGate(r io.Reader) *ReadGate { return &ReadGate{r: r, open: make(chan struct{})} }

// Open lets reads through; it is idempotent.
func (g *ReadGate) Open() { g.once.Do(func() { close(g.open) }) }

// Read implements io.Reader, waiting for Open first.
func (g *ReadGate) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}
