package geminitest_test

import (
	"testing"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
	"github.com/herd-dev/herd/server/agent/geminiapitest"
	"github.com/herd-dev/herd/server/agent/geminitest"
)

// The real Gemini CLI, pointed at the scripted Gemini API endpoint, streams
// the endpoint's reply through herd's runtime as text events, one per
// chunk, and ends the turn with end_turn; the endpoint saw the person's
// prompt.
func TestGeminiStreamsAScriptedTurn(t *testing.T) {
	geminitest.Require(t)
	reply := geminiapitest.Say("Hello ", "from the ", "scripted Gemini endpoint")
	srv, err := geminiapitest.Start(func(*geminiapitest.Request) geminiapitest.Reply { return reply })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	const prompt = "Say hello from the scripted endpoint"
	stop, texts := adaptertest.Turn(t, geminitest.Profile(t, srv.URL), prompt)
	if stop != agent.StopEndTurn {
		t.Errorf("stop reason = %q, want %q", stop, agent.StopEndTurn)
	}
	if got := adaptertest.Joined(texts); got != reply.Text() {
		t.Errorf("streamed text = %q, want %q", got, reply.Text())
	}
	if len(texts) < 2 {
		t.Errorf("the reply arrived in %d text event(s), want one per chunk: %q", len(texts), adaptertest.Joined(texts))
	}

	var main *geminiapitest.Request
	for _, req := range srv.Requests() {
		if req.IsMain() {
			main = req
			break
		}
	}
	if main == nil {
		t.Fatalf("the endpoint saw no request of the agent's loop among %d", len(srv.Requests()))
	}
	if main.LastUserText() != prompt {
		t.Errorf("the model was shown %q, want the prompt %q", main.LastUserText(), prompt)
	}
	if main.Model != geminitest.Model || !main.Stream {
		t.Errorf("request model %q stream %v, want %q streamed", main.Model, main.Stream, geminitest.Model)
	}
	if main.APIKey != geminitest.APIKey {
		t.Errorf("x-goog-api-key = %q, want %q", main.APIKey, geminitest.APIKey)
	}
}
