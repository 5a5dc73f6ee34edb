package gateway

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Keepalive defaults. The timeout is longer than a write's deadline, so a
// ping queued behind a slow frame still has time to be answered.
const (
	defaultPingInterval = 30 * time.Second
	defaultPingTimeout  = 20 * time.Second
)

// keepalive pings the client about every Config.PingInterval (jittered, so
// connections opened together do not ping together) until the connection
// ends. A dead peer, such as a phone that lost its network, is otherwise
// noticed only when a write to it times out, and nothing may need writing
// for a long time.
//
// The client's pong is read by the reader goroutine, and the ping is
// written between the writer's frames, so a ping counts as unanswered only
// when the reader has been waiting in the same socket read since before
// the ping and the writer was not stuck in one write all along: then
// nothing at all came from the client within Config.PingTimeout, and the
// connection is closed without a close frame (the client is not
// listening). A reader held back meanwhile (by the connection's own
// backpressure or an ordered request), one that read a frame, or a ping
// that could not be written proves nothing either way; the next ping
// tries again, and the write deadline still bounds a peer that stopped
// reading.
func (c *conn) keepalive() {
	t := time.NewTimer(jittered(c.g.cfg.PingInterval))
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		reads, writes := c.reads.Load(), c.writes.Load()
		ctx, cancel := context.WithTimeout(c.ctx, c.g.cfg.PingTimeout)
		err := c.ws.Ping(ctx)
		cancel()
		switch {
		case c.ctx.Err() != nil:
			return
		case err == nil:
			c.g.metrics.pings.WithLabelValues("pong").Inc()
		case !errors.Is(err, context.DeadlineExceeded):
			return // the socket closed; the reader ends the connection
		case c.silentSince(reads, writes):
			c.g.metrics.pings.WithLabelValues("timeout").Inc()
			c.closeOnce.Do(func() {
				c.g.metrics.closes.WithLabelValues("ping_timeout").Inc()
				c.g.log.Info("closing connection", "conn", c.id, "remote", c.remote, "reason", "ping_timeout")
			})
			c.ws.CloseNow()
			return
		default:
			c.g.metrics.pings.WithLabelValues("held").Inc()
		}
		t.Reset(jittered(c.g.cfg.PingInterval))
	}
}

// silentSince reports whether the reader has been waiting in one socket
// read since the counts were taken, while the writer was not in one write
// all that time.
func (c *conn) silentSince(reads, writes uint64) bool {
	stuckWriting := writes%2 == 1 && c.writes.Load() == writes
	return reads%2 == 1 && c.reads.Load() == reads && !stuckWriting
}

// jittered returns d give or take a fifth, at random.
func jittered(d time.Duration) time.Duration {
	return d - d/5 + rand.N(2*d/5+1)
}
