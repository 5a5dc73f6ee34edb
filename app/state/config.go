package state

import (
	"slices"

	"github.com/herd-dev/herd/shared"
)

// ConfigControl is one control of a session's configuration as the
// session header shows it.
type ConfigControl struct {
	Option shared.ConfigOption
	// Value is what the control shows: the value being set while a
	// change is on its way to the agent, else the current one.
	Value string
	// Busy is set while a change is on its way.
	Busy bool
}

// categoryRank puts the options people change most first: the model, the
// mode, the thinking effort; the agent's others follow in its order.
func categoryRank(category string) int {
	switch category {
	case shared.ConfigCategoryModel:
		return 0
	case shared.ConfigCategoryMode:
		return 1
	case shared.ConfigCategoryThoughtLevel:
		return 2
	}
	return 3
}

// ConfigControls returns the controls of a configuration, ordered for the
// header (see categoryRank; options of one rank keep the agent's order),
// with setting holding the values being set, by option id. A nil
// configuration has none.
func ConfigControls(c *shared.SessionConfig, setting map[string]string) []ConfigControl {
	if c == nil {
		return nil
	}
	out := make([]ConfigControl, 0, len(c.Options))
	for _, o := range c.Options {
		ctl := ConfigControl{Option: o, Value: o.CurrentValue}
		if v, ok := setting[o.ID]; ok {
			ctl.Value, ctl.Busy = v, true
		}
		out = append(out, ctl)
	}
	slices.SortStableFunc(out, func(a, b ConfigControl) int {
		return categoryRank(a.Option.Category) - categoryRank(b.Option.Category)
	})
	return out
}

// ValueName returns the name of a select's value, or the value itself
// when the option does not list it (an agent that reports a current value
// it does not offer).
func ValueName(o shared.ConfigOption, value string) string {
	for _, v := range o.Values {
		if v.Value == value {
			return v.Name
		}
	}
	return value
}

// Choices returns a select's values for a list of choices: the agent's,
// and first the current value when the agent does not offer it, so the
// control can show what is in force.
func Choices(o shared.ConfigOption) []shared.ConfigValue {
	for _, v := range o.Values {
		if v.Value == o.CurrentValue {
			return o.Values
		}
	}
	if o.CurrentValue == "" {
		return o.Values
	}
	return append([]shared.ConfigValue{{Value: o.CurrentValue, Name: o.CurrentValue}}, o.Values...)
}
