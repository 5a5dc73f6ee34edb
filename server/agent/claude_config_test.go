package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
	"github.com/herd-dev/herd/shared"
)

// The real Claude adapter offers its model and mode as config options; a
// model chosen through herd is the model of the next request Claude Code
// makes, and plan mode is what the adapter then reports.
func TestRealClaudeTakesTheModelAndModeChosenThroughHerd(t *testing.T) {
	srv, err := anthropictest.Start(claudeScript)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := &claudeHandler{wake: make(chan struct{}, 1)}
	ex, err := agent.Start(context.Background(), agent.Options{
		Profile: claudetest.Profile(t, srv.URL, claudetest.ModeAsk), Cwd: t.TempDir(), Handler: h, ClientVersion: "test",
	})
	if err != nil {
		t.Fatalf("start the real Claude adapter: %v", err)
	}
	defer ex.Close()
	opened := ex.Config().Config
	model, ok := opened.Option("model")
	if !ok || model.Category != shared.ConfigCategoryModel || len(model.Values) < 2 {
		t.Fatalf("opened with %+v", opened)
	}
	var haiku string
	for _, v := range model.Values {
		if v.Value == "haiku" {
			haiku = v.Value
		}
	}
	if haiku == "" {
		t.Fatalf("no haiku among %+v", model.Values)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	state, err := ex.SetConfig(ctx, "model", haiku)
	if err != nil {
		t.Fatalf("set the model: %v", err)
	}
	if o, _ := state.Config.Option("model"); o.CurrentValue != haiku {
		t.Fatalf("after the change the adapter reports model %q", o.CurrentValue)
	}
	if stop, err := ex.Prompt(ctx, "hello"); err != nil || stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	var main *anthropictest.Request
	for _, req := range srv.Requests() {
		if req.IsMain() && req.LastUserText() == "hello" {
			main = req
		}
	}
	if main == nil || !strings.Contains(main.Model, "haiku") {
		t.Fatalf("the turn's request asked for model %v", main)
	}

	state, err = ex.SetConfig(ctx, "mode", "plan")
	if err != nil {
		t.Fatalf("set the mode: %v", err)
	}
	if o, _ := state.Config.Option("mode"); o.CurrentValue != "plan" {
		t.Fatalf("mode = %q", o.CurrentValue)
	}
	var configs int
	for _, ev := range h.snapshot() {
		if ev.Kind == agent.EventConfig {
			configs++
		}
	}
	if configs < 3 {
		t.Fatalf("%d configuration events, want the opening one and one per change", configs)
	}
}
