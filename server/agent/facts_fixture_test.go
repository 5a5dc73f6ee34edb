package agent

import "testing"

// The facts the session view shows come from Claude's own frames: its
// command list with input hints, and its cumulative cost on the usage
// update that closes the human-origin cycle.
func TestClaudeFixtureKeepsCommandHintsAndCost(t *testing.T) {
	evs := replayFixture(t, "stream")
	var cmds []Command
	var costs []*Cost
	for _, ev := range evs {
		switch ev.Kind {
		case EventCommands:
			cmds = ev.Commands
		case EventUsage:
			costs = append(costs, ev.Usage.Cost)
		}
	}
	hints := map[string]string{}
	for _, c := range cmds {
		hints[c.Name] = c.Hint
	}
	if len(cmds) < 20 || hints["debug"] != "[issue description]" || hints["deep-research"] != "" {
		t.Fatalf("%d commands, debug hint %q, deep-research hint %q", len(cmds), hints["debug"], hints["deep-research"])
	}
	if len(costs) != 3 || costs[0] != nil || costs[1] != nil {
		t.Fatalf("costs = %v, want only the last usage update to carry one", costs)
	}
	if c := costs[2]; c == nil || c.Currency != "USD" || c.Amount <= 0 || c.Amount > 0.01 {
		t.Fatalf("cycle cost = %+v", c)
	}
}
