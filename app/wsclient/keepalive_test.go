package wsclient

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/shared"
)

// pingServer answers every request except, when mute says so, pings; it
// reports each ping it reads on pinged.
func pingServer(pinged chan<- struct{}, mute func() bool) serveFunc {
	return func(ctx context.Context, c *websocket.Conn) {
		for {
			req, err := readRequest(ctx, c)
			if err != nil {
				return
			}
			if req.Action == shared.ActionPing {
				select {
				case pinged <- struct{}{}:
				default:
				}
				if mute() {
					continue
				}
			}
			if respond(ctx, c, req, shared.Empty{}) != nil {
				return
			}
		}
	}
}

func TestAQuietConnectionIsCheckedWithPings(t *testing.T) {
	pinged := make(chan struct{}, 1)
	var connects atomic.Int32
	url := startServer(t, pingServer(pinged, func() bool { return false }))
	c := startClient(t, url, Options{
		PingInterval: 10 * time.Millisecond,
		OnConnect:    func(context.Context) { connects.Add(1) },
	})
	connected(t, c)
	for range 3 {
		receive(t, pinged, "a ping")
	}
	assert.Equal(t, int32(1), connects.Load(), "answered pings keep the connection")
}

// A connection whose ping goes unanswered is dead (a phone that lost its
// network answers nothing): the client drops it and connects again.
func TestAnUnansweredPingDropsTheConnectionAndReconnects(t *testing.T) {
	pinged := make(chan struct{}, 1)
	var dials atomic.Int32
	serve := pingServer(pinged, func() bool { return true })
	url := startServer(t, func(ctx context.Context, c *websocket.Conn) {
		if dials.Add(1) == 1 {
			serve(ctx, c) // the first connection never answers a ping
			return
		}
		echoServer(ctx, c)
	})
	reconnected := make(chan struct{}, 2)
	c := startClient(t, url, Options{
		PingInterval: 10 * time.Millisecond,
		PingTimeout:  50 * time.Millisecond,
		OnConnect: func(context.Context) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		},
	})
	receive(t, reconnected, "the first connection")
	receive(t, pinged, "a ping")
	receive(t, reconnected, "a new connection")
	assert.NoError(t, c.Request(t.Context(), "echo", number{N: 1}, nil), "the new connection serves requests")
}
