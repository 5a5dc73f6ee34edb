package mockagent

import (
	"context"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// The ways the mock offers its session configuration (flag --config, env
// HERD_MOCK_CONFIG).
const (
	configOptions = "options" // ACP session config options (the default)
	configLegacy  = "legacy"  // modes and models only, set with set_mode and set_model
	configNone    = "none"    // nothing to configure
)

// mockOption is one setting the mock offers: a select when it has values,
// else a boolean.
type mockOption struct {
	id, name, category, initial string
	values                      [][3]string // value, name, description
}

// mockOptions are the mock's settings, in the order it reports them. The
// model cannot change while a turn runs (the mock's rule, so that a
// refusal can be seen); the mode and thinking can.
var mockOptions = []mockOption{
	{id: "mode", name: "Mode", category: "mode", initial: "ask", values: [][3]string{
		{"ask", "Ask first", "Asks before every edit"},
		{"code", "Code", "Edits without asking"},
		{"plan", "Plan", "Plans and edits nothing"},
	}},
	{id: "model", name: "Model", category: "model", initial: "mock-fast", values: [][3]string{
		{"mock-fast", "Mock Fast", "Quick answers"},
		{"mock-smart", "Mock Smart", "Careful answers"},
	}},
	{id: "thinking", name: "Extended thinking", category: "thought_level", initial: "false"},
}

// value returns the session's current value of option id.
func (s *session) value(id string) string {
	if v, ok := s.Config[id]; ok {
		return v
	}
	for _, o := range mockOptions {
		if o.id == id {
			return o.initial
		}
	}
	return ""
}

// setValue checks and sets one option. It is called with m.mu held.
func (s *session) setValue(id, value string) error {
	for _, o := range mockOptions {
		if o.id != id {
			continue
		}
		ok := len(o.values) == 0 && (value == "true" || value == "false")
		for _, v := range o.values {
			ok = ok || v[0] == value
		}
		if !ok {
			return acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("mock agent: %s has no value %q", id, value)})
		}
		if s.Config == nil {
			s.Config = make(map[string]string)
		}
		s.Config[id] = value
		return nil
	}
	return acp.NewInvalidParams(map[string]any{"error": "mock agent: no option " + id})
}

// configOptionsOf reports a session's settings as ACP config options.
func configOptionsOf(s *session) []acp.SessionConfigOption {
	out := make([]acp.SessionConfigOption, 0, len(mockOptions))
	for _, o := range mockOptions {
		category := acp.SessionConfigOptionCategory(o.category)
		if len(o.values) == 0 {
			out = append(out, acp.SessionConfigOption{Boolean: &acp.SessionConfigOptionBoolean{
				Id: acp.SessionConfigId(o.id), Name: o.name, Category: &category, Type: "boolean",
				CurrentValue: s.value(o.id) == "true",
			}})
			continue
		}
		values := make(acp.SessionConfigSelectOptionsUngrouped, len(o.values))
		for i, v := range o.values {
			values[i] = acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(v[0]), Name: v[1], Description: acp.Ptr(v[2])}
		}
		out = append(out, acp.SessionConfigOption{Select: &acp.SessionConfigOptionSelect{
			Id: acp.SessionConfigId(o.id), Name: o.name, Category: &category, Type: "select",
			CurrentValue: acp.SessionConfigValueId(s.value(o.id)),
			Options:      acp.SessionConfigSelectOptions{Ungrouped: &values},
		}})
	}
	return out
}

// modesOf and modelsOf report the mode and model settings the legacy way.
func modesOf(s *session) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeId: acp.SessionModeId(s.value("mode"))}
	for _, v := range mockOptions[0].values {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{Id: acp.SessionModeId(v[0]), Name: v[1], Description: acp.Ptr(v[2])})
	}
	return st
}

func modelsOf(s *session) *acp.SessionModelState {
	st := &acp.SessionModelState{CurrentModelId: acp.ModelId(s.value("model"))}
	for _, v := range mockOptions[1].values {
		st.AvailableModels = append(st.AvailableModels, acp.ModelInfo{ModelId: acp.ModelId(v[0]), Name: v[1], Description: acp.Ptr(v[2])})
	}
	return st
}

// sessionConfig is what a session/new, session/resume or session/load
// answer reports of a session's settings, as the --config mode offers them.
func (m *mock) sessionConfig(s *session) ([]acp.SessionConfigOption, *acp.SessionModeState, *acp.SessionModelState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.configMode {
	case configOptions:
		return configOptionsOf(s), nil, nil
	case configLegacy:
		return nil, modesOf(s), modelsOf(s)
	}
	return nil, nil, nil
}

// set changes one setting of session id, as the method named allows.
func (m *mock) set(id acp.SessionId, method, option, value string) (*session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	switch {
	case !ok:
		return nil, acp.NewInvalidParams(map[string]any{"error": "unknown session " + string(id)})
	case m.configMode == configNone,
		m.configMode == configOptions && method != acp.AgentMethodSessionSetConfigOption,
		m.configMode == configLegacy && method == acp.AgentMethodSessionSetConfigOption:
		return nil, acp.NewMethodNotFound(method)
	}
	if option == "model" && s.running > 0 {
		return nil, acp.NewInvalidRequest(map[string]any{"error": "mock agent: the model cannot change while a turn runs"})
	}
	if err := s.setValue(option, value); err != nil {
		return nil, err
	}
	if err := m.save(id, s); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return s, nil
}

// SetSessionConfigOption sets one config option, with --config options.
func (m *mock) SetSessionConfigOption(_ context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	var (
		sid           acp.SessionId
		option, value string
	)
	switch {
	case p.ValueId != nil:
		sid, option, value = p.ValueId.SessionId, string(p.ValueId.ConfigId), string(p.ValueId.Value)
	case p.Boolean != nil:
		sid, option, value = p.Boolean.SessionId, string(p.Boolean.ConfigId), fmt.Sprint(p.Boolean.Value)
	default:
		return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "no value"})
	}
	s, err := m.set(sid, acp.AgentMethodSessionSetConfigOption, option, value)
	if err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return acp.SetSessionConfigOptionResponse{ConfigOptions: configOptionsOf(s)}, nil
}

// SetSessionMode sets the mode, with --config legacy.
func (m *mock) SetSessionMode(_ context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	_, err := m.set(p.SessionId, acp.AgentMethodSessionSetMode, "mode", string(p.ModeId))
	return acp.SetSessionModeResponse{}, err
}

// UnstableSetSessionModel sets the model, with --config legacy.
func (m *mock) UnstableSetSessionModel(_ context.Context, p acp.UnstableSetSessionModelRequest) (acp.UnstableSetSessionModelResponse, error) {
	_, err := m.set(p.SessionId, acp.AgentMethodSessionSetModel, "model", string(p.ModelId))
	return acp.UnstableSetSessionModelResponse{}, err
}

// showConfig answers with the session's settings, so a test can tell
// what a change did: "mode=ask model=mock-fast thinking=false".
func (t *turn) showConfig() error {
	t.m.mu.Lock()
	var parts []string
	for _, o := range mockOptions {
		parts = append(parts, o.id+"="+t.s.value(o.id))
	}
	t.m.mu.Unlock()
	return t.say(strings.Join(parts, " "))
}

// selfConfig changes a setting the agent's own way, as an agent that
// leaves plan mode by itself does, telling the client with
// config_option_update (with --config legacy, current_mode_update for the
// mode), then answers "set OPTION=VALUE".
func (t *turn) selfConfig(option, value string) error {
	t.m.mu.Lock()
	err := t.s.setValue(option, value)
	mode := t.m.configMode
	options := configOptionsOf(t.s)
	t.m.mu.Unlock()
	if err != nil {
		return err
	}
	switch {
	case mode == configOptions:
		err = t.send(t.ctx, acp.SessionUpdate{ConfigOptionUpdate: &acp.SessionConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: options}})
	case mode == configLegacy && option == "mode":
		err = t.send(t.ctx, acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeId: acp.SessionModeId(value)}})
	}
	if err != nil {
		return err
	}
	return t.say("set " + option + "=" + value)
}
