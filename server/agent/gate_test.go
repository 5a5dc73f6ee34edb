package agent

import (
	"io"
	"strings"
	"testing"
	"time"
)

// A gated read waits for Open, then reads through; Open twice is harmless.
func TestReadGateHoldsReadsUntilOpen(t *testing.T) {
	g := NewReadGate(strings.NewReader("frame"))
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(g)
		got <- string(b)
	}()
	select {
	case s := <-got:
		t.Fatalf("read %q before Open", s)
	case <-time.After(50 * time.Millisecond):
	}
	g.Open()
	g.Open()
	select {
	case s := <-got:
		if s != "frame" {
			t.Fatalf("read %q, want %q", s, "frame")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read still held after Open")
	}
}
