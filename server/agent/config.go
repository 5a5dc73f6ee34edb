package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/shared"
)

// configVia says which ACP method changes a config option.
type configVia uint8

// The ways an option is set. An agent that offers session config options
// is set through session/set_config_option alone, as ACP asks clients to
// prefer them over the older modes and models; the others stand in for
// agents that offer only those.
const (
	viaConfigOption configVia = iota // session/set_config_option
	viaMode                          // session/set_mode
	viaModel                         // session/set_model (unstable in ACP)
)

// The ids herd gives the options it makes of an agent's modes and models.
const (
	modeOptionID  = "mode"
	modelOptionID = "model"
)

// ConfigState is a session's configuration at one point: Seq orders the
// states an execution reports, and those of later executions follow
// those of earlier ones, so a reader that gets two states by different
// paths keeps the one with the higher Seq.
type ConfigState struct {
	Config shared.SessionConfig
	Seq    uint64
}

// configSeq numbers configuration states across executions.
var configSeq atomic.Uint64

// sessionConfig is an execution's view of its session's configuration:
// the options and how each is set.
type sessionConfig struct {
	options []shared.ConfigOption
	via     []configVia // parallel to options
}

// configOf reads the configuration an agent reports when it opens a
// session (session/new, session/resume, session/load): its config options
// when it offers any, else options made of its modes and its models.
func configOf(opts []acp.SessionConfigOption, modes *acp.SessionModeState, models *acp.SessionModelState) sessionConfig {
	var c sessionConfig
	if len(opts) > 0 {
		for _, o := range opts {
			if opt, ok := optionOf(o); ok {
				c.add(opt, viaConfigOption)
			}
		}
		return c
	}
	if modes != nil && len(modes.AvailableModes) > 0 {
		opt := shared.ConfigOption{
			ID: modeOptionID, Name: "Mode", Category: shared.ConfigCategoryMode,
			Type: shared.ConfigSelect, CurrentValue: string(modes.CurrentModeId),
		}
		for _, m := range modes.AvailableModes {
			opt.Values = appendValue(opt.Values, string(m.Id), m.Name, deref(m.Description), "")
		}
		c.add(opt, viaMode)
	}
	if models != nil && len(models.AvailableModels) > 0 {
		opt := shared.ConfigOption{
			ID: modelOptionID, Name: "Model", Category: shared.ConfigCategoryModel,
			Type: shared.ConfigSelect, CurrentValue: string(models.CurrentModelId),
		}
		for _, m := range models.AvailableModels {
			opt.Values = appendValue(opt.Values, string(m.ModelId), m.Name, deref(m.Description), "")
		}
		c.add(opt, viaModel)
	}
	return c
}

// add appends an option within shared.MaxConfigOptions.
func (c *sessionConfig) add(o shared.ConfigOption, via configVia) {
	if len(c.options) >= shared.MaxConfigOptions || !validID(o.ID) {
		return
	}
	if o.Type == shared.ConfigSelect && len(o.Values) == 0 {
		return // nothing to choose from
	}
	c.options = append(c.options, o)
	c.via = append(c.via, via)
}

// optionOf converts one ACP config option. Ids are the agent's to match,
// so an option or a value whose id is too long or not storable is left
// out rather than cut; names and descriptions are cut to
// shared.MaxConfigTextBytes.
func optionOf(o acp.SessionConfigOption) (shared.ConfigOption, bool) {
	switch {
	case o.Select != nil:
		s := o.Select
		opt := shared.ConfigOption{
			ID: string(s.Id), Name: configText(s.Name), Description: configText(deref(s.Description)),
			Type: shared.ConfigSelect, CurrentValue: string(s.CurrentValue),
		}
		if s.Category != nil {
			opt.Category = configText(string(*s.Category))
		}
		if u := s.Options.Ungrouped; u != nil {
			for _, v := range *u {
				opt.Values = appendValue(opt.Values, string(v.Value), v.Name, deref(v.Description), "")
			}
		}
		if g := s.Options.Grouped; g != nil {
			for _, group := range *g {
				for _, v := range group.Options {
					opt.Values = appendValue(opt.Values, string(v.Value), v.Name, deref(v.Description), group.Name)
				}
			}
		}
		return opt, true
	case o.Boolean != nil:
		b := o.Boolean
		opt := shared.ConfigOption{
			ID: string(b.Id), Name: configText(b.Name), Description: configText(deref(b.Description)),
			Type: shared.ConfigBoolean, CurrentValue: boolValue(b.CurrentValue),
		}
		if b.Category != nil {
			opt.Category = configText(string(*b.Category))
		}
		return opt, true
	}
	return shared.ConfigOption{}, false
}

// appendValue adds a select's choice within shared.MaxConfigValues.
func appendValue(vs []shared.ConfigValue, value, name, description, group string) []shared.ConfigValue {
	if len(vs) >= shared.MaxConfigValues || !validID(value) {
		return vs
	}
	if name == "" {
		name = value
	}
	return append(vs, shared.ConfigValue{
		Value: value, Name: configText(name), Description: configText(description), Group: configText(group),
	})
}

// validID reports whether an agent's id can be stored and sent back as is.
func validID(id string) bool {
	return id != "" && len(id) <= shared.MaxConfigIDBytes && utf8.ValidString(id) && !strings.ContainsRune(id, 0)
}

// configText makes agent text storable and bounded: NUL becomes U+FFFD
// (PostgreSQL's text cannot hold it) and the text is cut on a rune
// boundary at shared.MaxConfigTextBytes.
func configText(s string) string {
	return shared.Clip(strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD"), shared.MaxConfigTextBytes)
}

func boolValue(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// find returns the index of the option with the given id, or -1.
func (c *sessionConfig) find(id string) int {
	for i, o := range c.options {
		if o.ID == id {
			return i
		}
	}
	return -1
}

// snapshot copies the configuration for an event or a caller.
func (c sessionConfig) snapshot() shared.SessionConfig {
	out := shared.SessionConfig{Options: make([]shared.ConfigOption, len(c.options))}
	for i, o := range c.options {
		o.Values = append([]shared.ConfigValue(nil), o.Values...)
		out.Options[i] = o
	}
	return out
}

// setCurrent sets an option's current value and reports whether it changed.
func (c *sessionConfig) setCurrent(i int, value string) bool {
	if c.options[i].CurrentValue == value {
		return false
	}
	c.options[i].CurrentValue = value
	return true
}

// Config returns the session's configuration as the agent last reported
// it; its Options are empty when the agent offers none.
func (e *Execution) Config() ConfigState {
	e.cfgMu.Lock()
	defer e.cfgMu.Unlock()
	return ConfigState{Config: e.config.snapshot(), Seq: e.configAt}
}

// replaceConfig adopts the configuration the agent reported when it
// opened the session, queues it as an EventConfig (under cfgMu, so events
// leave in the order of the changes) and waits until the Handler has seen
// it, so the session's configuration is known before Start returns. An
// agent that offers no configuration sends no event.
func (e *Execution) replaceConfig(ctx context.Context, c sessionConfig) {
	e.cfgMu.Lock()
	if len(c.options) == 0 && len(e.config.options) == 0 {
		e.cfgMu.Unlock()
		return
	}
	e.config = c
	e.pushConfigLocked()
	e.cfgMu.Unlock()
	e.deliver(ctx)
}

// pushConfigLocked numbers the current configuration and queues it as an
// EventConfig.
func (e *Execution) pushConfigLocked() ConfigState {
	e.configAt = configSeq.Add(1)
	state := ConfigState{Config: e.config.snapshot(), Seq: e.configAt}
	if !e.seq.push(Event{Kind: EventConfig, Config: &state}) {
		e.fail(errors.New("agent event queue overflow"))
	}
	return state
}

// applyConfigUpdate turns a config_option_update (EventConfig) or a
// current_mode_update (EventMode) into the session's whole configuration,
// which it queues as an EventConfig. A mode update changes the mode
// option: herd's own of the agent's modes, else the agent's config option
// of category mode that offers the new mode. A mode update that changes
// nothing is queued as it came.
func (e *Execution) applyConfigUpdate(ev Event) {
	e.cfgMu.Lock()
	defer e.cfgMu.Unlock()
	switch ev.Kind {
	case EventConfig:
		e.config = ev.configUpdate
		e.pushConfigLocked()
		return
	case EventMode:
		if i := e.modeOption(ev.Mode); i >= 0 && e.config.setCurrent(i, ev.Mode) {
			e.pushConfigLocked()
			return
		}
	}
	if !e.seq.push(ev) {
		e.fail(errors.New("agent event queue overflow"))
	}
}

// modeOption returns the index of the option a current_mode_update to
// mode changes, or -1.
func (e *Execution) modeOption(mode string) int {
	if i := e.config.find(modeOptionID); i >= 0 && e.config.via[i] == viaMode {
		return i
	}
	for i, o := range e.config.options {
		if o.Category != shared.ConfigCategoryMode {
			continue
		}
		for _, v := range o.Values {
			if v.Value == mode {
				return i
			}
		}
	}
	return -1
}

// SetConfig asks the agent to set one option of its session and returns
// the configuration that results, once the Handler has seen it as an
// EventConfig. The value must be one the option
// offers ("true" or "false" for a boolean): anything else is refused
// without asking the agent. The agent decides whether the change may
// happen now (during a turn, say); its refusal comes back as a conflict
// with its own words.
func (e *Execution) SetConfig(ctx context.Context, optionID, value string) (ConfigState, error) {
	e.cfgMu.Lock()
	i := e.config.find(optionID)
	if i < 0 {
		e.cfgMu.Unlock()
		return ConfigState{}, shared.Errorf(shared.CodeNotFound, "the agent offers no option %q for this session", optionID)
	}
	opt, via := e.config.options[i], e.config.via[i]
	e.cfgMu.Unlock()
	if err := checkValue(opt, value); err != nil {
		return ConfigState{}, err
	}
	sid := e.sessionID
	var (
		method  string
		err     error
		options []acp.SessionConfigOption
	)
	switch {
	case via == viaMode:
		method = acp.AgentMethodSessionSetMode
		_, err = e.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sid, ModeId: acp.SessionModeId(value)})
	case via == viaModel:
		method = acp.AgentMethodSessionSetModel
		_, err = e.conn.UnstableSetSessionModel(ctx, acp.UnstableSetSessionModelRequest{SessionId: sid, ModelId: acp.UnstableModelId(value)})
	case opt.Type == shared.ConfigBoolean:
		method = acp.AgentMethodSessionSetConfigOption
		var resp acp.SetSessionConfigOptionResponse
		resp, err = e.conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{Boolean: &acp.SetSessionConfigOptionBoolean{
			SessionId: sid, ConfigId: acp.SessionConfigId(optionID), Type: "boolean", Value: value == "true",
		}})
		options = resp.ConfigOptions
	default:
		method = acp.AgentMethodSessionSetConfigOption
		var resp acp.SetSessionConfigOptionResponse
		resp, err = e.conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{
			SessionId: sid, ConfigId: acp.SessionConfigId(optionID), Value: acp.SessionConfigValueId(value),
		}})
		options = resp.ConfigOptions
	}
	if err != nil {
		var re *acp.RequestError
		if errors.As(err, &re) {
			words := dataText(re.Data)
			if words == "" {
				words = re.Message
			}
			return ConfigState{}, shared.Errorf(shared.CodeConflict, "the agent refused: %s", words)
		}
		if e.peerGone() {
			return ConfigState{}, shared.Errorf(shared.CodeUnavailable, "the agent stopped before it answered %s", method)
		}
		return ConfigState{}, fmt.Errorf("%s: %w", method, err)
	}
	e.cfgMu.Lock()
	if len(options) > 0 {
		e.config = configOf(options, nil, nil)
	} else if i := e.config.find(optionID); i >= 0 {
		// set_mode and set_model answer nothing; an agent's
		// set_config_option answer should hold every option, and one
		// that holds none is taken to have changed just this one.
		e.config.setCurrent(i, value)
	}
	state := e.pushConfigLocked()
	e.cfgMu.Unlock()
	e.deliver(ctx)
	return state, nil
}

// checkValue refuses a value the option does not offer.
func checkValue(o shared.ConfigOption, value string) error {
	if o.Type == shared.ConfigBoolean {
		if value != "true" && value != "false" {
			return shared.Errorf(shared.CodeBadRequest, "%s is a yes/no option: value must be \"true\" or \"false\"", o.Name)
		}
		return nil
	}
	for _, v := range o.Values {
		if v.Value == value {
			return nil
		}
	}
	return shared.Errorf(shared.CodeBadRequest, "%s has no value %q", o.Name, value)
}
