package tracker

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkFrame measures the tracker's cost per agent frame: output
// chunks, tool calls and their updates, as a streaming foreground sends
// them, with a claim held. Parallel runs spread frames over many sessions.
func BenchmarkFrame(b *testing.B) {
	for _, sessions := range []int{1, 64} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			tr, err := New(Config{Publish: func(context.Context, Change) error { return nil }})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			execs := make([]Exec, sessions)
			for i := range execs {
				id := fmt.Sprint("s", i)
				execs[i] = tr.Attach(id, "t", claude)
				if _, err := tr.Claim(id, "t"); err != nil {
					b.Fatal(err)
				}
			}
			frames := []Frame{
				{Kind: FrameOutput}, {Kind: FrameOutput}, {Kind: FrameOutput},
				{Kind: FrameToolCall, ToolID: "read-1"}, {Kind: FrameToolUpdate, ToolID: "read-1"},
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					tr.Frame(execs[i%sessions], frames[i%len(frames)])
					i++
				}
			})
		})
	}
}
