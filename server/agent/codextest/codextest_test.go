package codextest_test

import (
	"testing"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
	"github.com/herd-dev/herd/server/agent/codextest"
	"github.com/herd-dev/herd/server/agent/openaitest"
)

// The real Codex, pointed at the scripted Responses endpoint, streams the
// endpoint's reply through herd's runtime as text events, one per delta,
// and ends the turn with end_turn; the endpoint saw the person's prompt.
func TestCodexStreamsAScriptedTurn(t *testing.T) {
	codextest.Require(t)
	reply := openaitest.Say("Hello ", "from the ", "scripted Responses endpoint")
	srv, err := openaitest.Start(func(req *openaitest.Request) openaitest.Reply {
		if !req.IsMain() {
			return openaitest.Say("Scripted title")
		}
		return reply
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	const prompt = "Say hello from the scripted endpoint"
	stop, texts := adaptertest.Turn(t, codextest.Profile(t, srv.URL), prompt)
	if stop != agent.StopEndTurn {
		t.Errorf("stop reason = %q, want %q", stop, agent.StopEndTurn)
	}
	if got := adaptertest.Joined(texts); got != reply.Text() {
		t.Errorf("streamed text = %q, want %q", got, reply.Text())
	}
	if len(texts) < 2 {
		t.Errorf("the reply arrived in %d text event(s), want one per delta: %q", len(texts), adaptertest.Joined(texts))
	}
	for _, ev := range texts {
		if ev.MessageID == "" || ev.MessageID != texts[0].MessageID {
			t.Errorf("text chunks carry message ids %q and %q, want one id for the one message", texts[0].MessageID, ev.MessageID)
			break
		}
	}

	var main *openaitest.Request
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
	if main.Model != codextest.Model || !main.Stream {
		t.Errorf("request model %q stream %v, want %q streamed", main.Model, main.Stream, codextest.Model)
	}
	if want := "Bearer " + codextest.APIKey; main.Authorization != want {
		t.Errorf("Authorization = %q, want %q", main.Authorization, want)
	}
}
