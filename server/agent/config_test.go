package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/server/agent/claudeframes"
	"github.com/herd-dev/herd/shared"
)

// claudeNewSession returns the session/new answer the real Claude adapter
// sent in the recording name.
func claudeNewSession(t *testing.T, name string) acp.NewSessionResponse {
	t.Helper()
	rec, err := claudeframes.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rec.Frames {
		var msg struct {
			ID     json.RawMessage        `json:"id"`
			Result acp.NewSessionResponse `json:"result"`
		}
		if json.Unmarshal(f, &msg) == nil && string(msg.ID) == "2" && msg.Result.SessionId != "" {
			return msg.Result
		}
	}
	t.Fatalf("recording %s has no session/new answer", name)
	return acp.NewSessionResponse{}
}

func TestClaudesSessionNewBecomesItsConfigOptionsAndIgnoresTheOlderModes(t *testing.T) {
	ns := claudeNewSession(t, "shell")
	if ns.Modes == nil || len(ns.ConfigOptions) == 0 {
		t.Fatal("the recording should hold both modes and config options")
	}
	c := configOf(ns.ConfigOptions, ns.Modes, ns.Models).snapshot()
	var ids []string
	for _, o := range c.Options {
		ids = append(ids, o.ID+"/"+o.Category+"="+o.CurrentValue)
	}
	// ACP asks clients to prefer config options: the modes are the mode
	// option's values already and do not come twice.
	want := "mode/mode=bypassPermissions model/model=default effort/thought_level=default fast/model_config=off ultracode/model_config=off"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("options = %s\nwant      %s", got, want)
	}
	model, _ := c.Option("model")
	if model.Type != shared.ConfigSelect || model.Name != "Model" || len(model.Values) != 5 {
		t.Fatalf("model option = %+v", model)
	}
	sonnet := model.Values[3]
	if sonnet.Value != "sonnet" || sonnet.Name != "Sonnet 5.5" || !strings.HasPrefix(sonnet.Description, "Sonnet 5.5 · Efficient") {
		t.Fatalf("sonnet = %+v", sonnet)
	}
	var via []configVia
	for range c.Options {
		via = append(via, viaConfigOption)
	}
	if got := configOf(ns.ConfigOptions, ns.Modes, ns.Models).via; fmt.Sprint(got) != fmt.Sprint(via) {
		t.Fatalf("via = %v: every option is set with session/set_config_option", got)
	}
}

func TestAnAgentWithOnlyModesAndModelsGetsAnOptionForEach(t *testing.T) {
	desc := "Plans first"
	c := configOf(nil,
		&acp.SessionModeState{CurrentModeId: "plan", AvailableModes: []acp.SessionMode{{Id: "code", Name: "Code"}, {Id: "plan", Name: "Plan", Description: &desc}}},
		&acp.SessionModelState{CurrentModelId: "m2", AvailableModels: []acp.ModelInfo{{ModelId: "m1", Name: "One"}, {ModelId: "m2", Name: ""}}},
	)
	got := c.snapshot()
	if len(got.Options) != 2 || c.via[0] != viaMode || c.via[1] != viaModel {
		t.Fatalf("config = %+v via %v", got, c.via)
	}
	mode, model := got.Options[0], got.Options[1]
	if mode.ID != "mode" || mode.Category != shared.ConfigCategoryMode || mode.CurrentValue != "plan" || mode.Values[1].Description != desc {
		t.Fatalf("mode = %+v", mode)
	}
	if model.ID != "model" || model.Category != shared.ConfigCategoryModel || model.CurrentValue != "m2" || model.Values[1].Name != "m2" {
		t.Fatalf("model = %+v (a value without a name is named by its id)", model)
	}
	if empty := configOf(nil, &acp.SessionModeState{}, nil); len(empty.options) != 0 {
		t.Fatalf("no modes offered became %+v", empty.options)
	}
}

func TestConfigFromAnAgentIsBounded(t *testing.T) {
	long := strings.Repeat("é", shared.MaxConfigTextBytes)
	values := acp.SessionConfigSelectOptionsUngrouped{
		{Value: "ok", Name: long},
		{Value: acp.SessionConfigValueId(strings.Repeat("v", shared.MaxConfigIDBytes+1)), Name: "too long an id"},
		{Value: "nul\x00", Name: "an id that cannot be stored"},
		{Value: "named", Name: "with\x00nul"},
	}
	var opts []acp.SessionConfigOption
	for i := 0; i < shared.MaxConfigOptions+5; i++ {
		opts = append(opts, acp.SessionConfigOption{Select: &acp.SessionConfigOptionSelect{
			Id: acp.SessionConfigId(fmt.Sprintf("o%d", i)), Name: "n", CurrentValue: "ok",
			Options: acp.SessionConfigSelectOptions{Ungrouped: &values},
		}})
	}
	opts = append([]acp.SessionConfigOption{{Select: &acp.SessionConfigOptionSelect{Id: "empty", Name: "nothing to choose"}}}, opts...)
	c := configOf(opts, nil, nil).snapshot()
	if len(c.Options) != shared.MaxConfigOptions || c.Options[0].ID != "o0" {
		t.Fatalf("%d options, first %q: want %d, the select without values left out", len(c.Options), c.Options[0].ID, shared.MaxConfigOptions)
	}
	vs := c.Options[0].Values
	if len(vs) != 2 || vs[0].Value != "ok" || vs[1].Value != "named" {
		t.Fatalf("values = %+v: ids that cannot round-trip are left out, not cut", vs)
	}
	if len(vs[0].Name) > shared.MaxConfigTextBytes || !strings.HasSuffix(vs[0].Name, "…") {
		t.Fatalf("long name kept %d bytes", len(vs[0].Name))
	}
	if vs[1].Name != "with\uFFFDnul" {
		t.Fatalf("name = %q: NUL becomes U+FFFD", vs[1].Name)
	}
}

func TestAGroupedSelectKeepsItsGroups(t *testing.T) {
	groups := acp.SessionConfigSelectOptionsGrouped{
		{Group: "a", Name: "Anthropic", Options: []acp.SessionConfigSelectOption{{Value: "opus", Name: "Opus"}}},
		{Group: "o", Name: "Other", Options: []acp.SessionConfigSelectOption{{Value: "x", Name: "X"}}},
	}
	c := configOf([]acp.SessionConfigOption{{Select: &acp.SessionConfigOptionSelect{
		Id: "model", Name: "Model", CurrentValue: "x", Options: acp.SessionConfigSelectOptions{Grouped: &groups},
	}}}, nil, nil).snapshot()
	vs := c.Options[0].Values
	if len(vs) != 2 || vs[0].Group != "Anthropic" || vs[1].Group != "Other" {
		t.Fatalf("values = %+v", vs)
	}
}

// waitConfig waits until the recorder holds a configuration whose option
// id has value.
func waitConfig(t *testing.T, rec *recorder, id, value string) ConfigState {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		rec.mu.Lock()
		var last *ConfigState
		if n := len(rec.configs); n > 0 {
			last = &rec.configs[n-1]
		}
		rec.mu.Unlock()
		if last != nil {
			if o, ok := last.Config.Option(id); ok && o.CurrentValue == value {
				return *last
			}
		}
		select {
		case <-rec.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no configuration with %s=%s; last %+v", id, value, last)
		}
	}
}

func TestSetConfigChangesTheAgentsSettingsAndReportsThem(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	first := waitConfig(t, rec, "model", "mock-fast")
	if len(first.Config.Options) != 3 {
		t.Fatalf("opened with %+v", first.Config)
	}
	ctx := context.Background()
	state, err := e.SetConfig(ctx, "model", "mock-smart")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := state.Config.Option("model"); o.CurrentValue != "mock-smart" || state.Seq <= first.Seq {
		t.Fatalf("after set: %+v (seq %d after %d)", o, state.Seq, first.Seq)
	}
	if ev := waitConfig(t, rec, "model", "mock-smart"); ev.Seq != state.Seq {
		t.Fatalf("event seq %d, answer seq %d", ev.Seq, state.Seq)
	}
	if _, err := e.SetConfig(ctx, "thinking", "true"); err != nil {
		t.Fatal(err)
	}
	MustPrompt(t, e, "/scenario config")
	if got := rec.text(EventText); got != "mode=ask model=mock-smart thinking=true" {
		t.Fatalf("the agent says %q", got)
	}
}

func TestSetConfigRefusesWhatTheOptionDoesNotOfferWithoutAskingTheAgent(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	waitConfig(t, rec, "model", "mock-fast")
	ctx := context.Background()
	for _, tc := range []struct {
		option, value string
		code          shared.Code
	}{
		{"no-such-option", "x", shared.CodeNotFound},
		{"model", "gpt-nothing", shared.CodeBadRequest},
		{"thinking", "yes", shared.CodeBadRequest},
	} {
		if _, err := e.SetConfig(ctx, tc.option, tc.value); shared.ErrorCode(err) != tc.code {
			t.Errorf("%s=%s: %v, want %s", tc.option, tc.value, err, tc.code)
		}
	}
	if n := len(rec.configs); n != 1 {
		t.Fatalf("%d configurations reported, want only the first", n)
	}
}

func TestAChangeDuringATurnFollowsTheAgentsRules(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	waitConfig(t, rec, "model", "mock-fast")
	done := make(chan error, 1)
	go func() {
		_, err := e.Prompt(context.Background(), "/scenario stream 30 50")
		done <- err
	}()
	// The first chunk says the turn runs in the agent.
	for rec.text(EventText) == "" {
		<-rec.wake
	}
	ctx := context.Background()
	// The mock lets the mode change during a turn, and not the model.
	if _, err := e.SetConfig(ctx, "mode", "plan"); err != nil {
		t.Fatalf("mode during a turn: %v", err)
	}
	_, err := e.SetConfig(ctx, "model", "mock-smart")
	if shared.ErrorCode(err) != shared.CodeConflict || !strings.Contains(err.Error(), "cannot change while a turn runs") {
		t.Fatalf("model during a turn: %v, want a conflict in the agent's words", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c := e.Config().Config
	if o, _ := c.Option("model"); o.CurrentValue != "mock-fast" {
		t.Fatalf("model = %s after a refused change", o.CurrentValue)
	}
	if _, err := e.SetConfig(ctx, "model", "mock-smart"); err != nil {
		t.Fatalf("model after the turn: %v", err)
	}
}

func TestAnAgentChangingItsOwnSettingsIsReported(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	waitConfig(t, rec, "mode", "ask")
	MustPrompt(t, e, "/scenario set-config mode code")
	waitConfig(t, rec, "mode", "code")
	c := e.Config().Config
	if o, _ := c.Option("mode"); o.CurrentValue != "code" {
		t.Fatalf("mode = %s", o.CurrentValue)
	}
}

func TestAnAgentWithModesAndModelsIsSetWithSetModeAndSetModel(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile("--config", "legacy"), rec)
	first := waitConfig(t, rec, "mode", "ask")
	if len(first.Config.Options) != 2 {
		t.Fatalf("opened with %+v", first.Config)
	}
	ctx := context.Background()
	if _, err := e.SetConfig(ctx, "model", "mock-smart"); err != nil {
		t.Fatalf("set_model: %v", err)
	}
	if _, err := e.SetConfig(ctx, "mode", "plan"); err != nil {
		t.Fatalf("set_mode: %v", err)
	}
	MustPrompt(t, e, "/scenario config")
	if got := rec.text(EventText); got != "mode=plan model=mock-smart thinking=false" {
		t.Fatalf("the agent says %q", got)
	}
	// The agent's own mode change arrives as current_mode_update.
	MustPrompt(t, e, "/scenario set-config mode code")
	waitConfig(t, rec, "mode", "code")
}

func TestAnAgentWithoutSettingsReportsNone(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile("--config", "none"), rec)
	MustPrompt(t, e, "hello")
	if n := len(rec.configs); n != 0 {
		t.Fatalf("%d configurations reported", n)
	}
	if _, err := e.SetConfig(context.Background(), "model", "x"); shared.ErrorCode(err) != shared.CodeNotFound {
		t.Fatalf("set: %v", err)
	}
}
