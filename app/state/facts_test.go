package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

var agentCommands = []shared.SlashCommand{
	{Name: "review", Description: "Review the changes on this branch", Hint: "[pr#|branch]"},
	{Name: "compact", Description: "Clear the conversation but keep a summary in context"},
	{Name: "debug", Description: "Debug the current session", Hint: "[issue description]"},
	{Name: "security-review", Description: "Complete a security review"},
}

func names(cmds []shared.SlashCommand) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return out
}

func TestCommandQueryOnlyInTheFirstWord(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		caret      int
		query      string
		ok         bool
	}{
		{"a lone slash", "/", 1, "", true},
		{"part of a name", "/rev", 4, "rev", true},
		{"caret inside the name", "/review", 3, "re", true},
		{"after the name's space", "/review ", 8, "", false},
		{"not at the start", "please /review", 14, "", false},
		{"no slash", "review", 3, "", false},
		{"caret before the slash", "/rev", 0, "", false},
		{"caret past the end", "/rev", 9, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, ok := CommandQuery(tc.text, tc.caret)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.query, q)
		})
	}
}

func TestMatchCommandsRanksNamesBeforeDescriptions(t *testing.T) {
	assert.Equal(t, []string{"review", "compact", "debug", "security-review"}, names(MatchCommands(agentCommands, "")), "all, in the agent's order")
	assert.Equal(t, []string{"review", "security-review"}, names(MatchCommands(agentCommands, "REV")), "prefix first, then inside the name, any case")
	assert.Equal(t, []string{"security-review", "debug"}, names(MatchCommands(agentCommands, "se")), "name prefix, then description (\"session\")")
	assert.Empty(t, MatchCommands(agentCommands, "zzz"))
	many := make([]shared.SlashCommand, 40)
	for i := range many {
		many[i] = shared.SlashCommand{Name: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))}
	}
	assert.Len(t, MatchCommands(many, "c"), MaxCompletions, "bounded")
}

func TestCompletionByKeyboard(t *testing.T) {
	var c Completion
	c.Update("/", 1, agentCommands)
	require.True(t, c.Open())
	assert.Len(t, c.Matches(), 4)
	c.Move(-1)
	assert.Equal(t, 3, c.Active(), "up from the first wraps to the last")
	c.Move(1)
	c.Move(1)
	assert.Equal(t, 1, c.Active())

	c.Update("/re", 3, agentCommands)
	assert.Equal(t, []string{"review", "security-review", "debug"}, names(c.Matches()), "debug's description says \"current\"")
	c.Move(1)
	c.Update("/rev", 4, agentCommands)
	assert.Equal(t, "security-review", c.Matches()[c.Active()].Name, "the highlighted command stays while it matches")

	text, ok := c.Pick(c.Active())
	require.True(t, ok)
	assert.Equal(t, "/security-review ", text)
	assert.False(t, c.Open(), "picking closes the list")
	c.Update(text, len(text), agentCommands)
	assert.False(t, c.Open(), "the caret is past the name")
}

func TestCompletionEscapeClosesUntilTheTextChanges(t *testing.T) {
	var c Completion
	c.Update("/d", 2, agentCommands)
	require.True(t, c.Open())
	c.Dismiss()
	assert.False(t, c.Open())
	c.Update("/d", 2, agentCommands)
	assert.False(t, c.Open(), "the same text keeps it closed")
	c.Update("/de", 3, agentCommands)
	assert.True(t, c.Open(), "typing opens it again")
	_, ok := c.Pick(5)
	assert.False(t, ok, "an index the list does not show")
}

func TestCompletionKeepsTheArgumentsTypedAfterTheName(t *testing.T) {
	var c Completion
	c.Update("/de the login page", 3, agentCommands)
	require.True(t, c.Open())
	text, ok := c.Pick(0)
	require.True(t, ok)
	assert.Equal(t, "/debug the login page", text)
}

func TestCompletionNeedsCommands(t *testing.T) {
	var c Completion
	c.Update("/", 1, nil)
	assert.False(t, c.Open(), "an agent without commands opens no list")
}

func TestCommandHintOnceTheNameIsComplete(t *testing.T) {
	name, hint := CommandHint("/debug ", agentCommands)
	assert.Equal(t, "debug", name)
	assert.Equal(t, "[issue description]", hint)
	_, hint = CommandHint("/debug", agentCommands)
	assert.Empty(t, hint, "still typing the name")
	name, hint = CommandHint("/compact now", agentCommands)
	assert.Equal(t, "compact", name)
	assert.Empty(t, hint, "a command without input")
	name, _ = CommandHint("/unknown x", agentCommands)
	assert.Empty(t, name)
}

func TestContextBarNumbers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage *shared.SessionUsage
		ok    bool
		want  ContextBar
	}{
		{"no usage yet", nil, false, ContextBar{}},
		{"Claude's wording", &shared.SessionUsage{Used: 84_000, Size: 200_000}, true, ContextBar{Percent: 42, Label: "context 42% · 84k of 200k tokens"}},
		{"a fresh session", &shared.SessionUsage{Used: 115, Size: 1_000_000}, true, ContextBar{Percent: 0, Label: "context 0% · 115 of 1M tokens"}},
		{"small thousands keep a decimal", &shared.SessionUsage{Used: 8_400, Size: 10_000}, true, ContextBar{Percent: 84, Label: "context 84% · 8.4k of 10k tokens"}},
		{"over the window is full", &shared.SessionUsage{Used: 300, Size: 200}, true, ContextBar{Percent: 100, Label: "context 100% · 300 of 200 tokens"}},
		{"no window size", &shared.SessionUsage{Used: 1_500_000}, true, ContextBar{Percent: -1, Label: "context 1.5M tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bar, ok := ContextBarOf(tc.usage)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, bar)
		})
	}
}

func TestCostsPerCurrencyAndWords(t *testing.T) {
	usd := func(a float64) shared.Cost { return shared.Cost{Amount: a, Currency: "USD"} }
	one := CostsOf([]shared.Cost{usd(0.42)})
	assert.Equal(t, "$0.42", one.String())
	assert.Equal(t, "cost $0.42", CostLabel(one))
	assert.False(t, one.Mixed())
	assert.Equal(t, "<$0.01", CostsOf([]shared.Cost{usd(0.0007)}).String(), "a real first turn")
	assert.Equal(t, "", CostLabel(Costs{}))

	mixed := CostsOf([]shared.Cost{usd(1.2), {Amount: 0.3, Currency: "EUR"}})
	assert.True(t, mixed.Mixed())
	assert.Equal(t, "€0.30 + $1.20", mixed.String())
	assert.Equal(t, "cost in mixed currencies: €0.30 + $1.20", CostLabel(mixed))
	assert.Equal(t, "5.00 CHF", CostsOf([]shared.Cost{{Amount: 5, Currency: "CHF"}}).String())

	rows := []Row{{Cost: one}, {Cost: CostsOf([]shared.Cost{usd(0.08)})}, {}}
	assert.Equal(t, "$0.50", WorkspaceCost(rows).String(), "the workspace total adds the rows'")
	var wide Costs
	for _, cur := range []string{"AUD", "CAD", "CHF", "EUR", "USD"} {
		wide = wide.Plus(CostsOf([]shared.Cost{{Amount: 1, Currency: cur}}))
	}
	assert.Equal(t, "1.00 AUD + 1.00 CAD + 1.00 CHF + €1.00 + more", wide.String(), "bounded, and says so")
	assert.Equal(t, one, CostsOf([]shared.Cost{usd(0.42)}), "comparable, so rows compare with ==")
}

func TestRowAndTabCarryTheFacts(t *testing.T) {
	row := RowOf(shared.Task{ID: "t", StatusSummary: &shared.TaskStatusSummary{Cost: []shared.Cost{{Amount: 2, Currency: "USD"}}}})
	assert.Equal(t, "$2.00", row.Cost.String())
	assert.Equal(t, "Session 2 · Running", TabTitle(1, shared.Session{}, "Running"))
	assert.Equal(t, "Fix the login page · Running", TabTitle(1, shared.Session{Title: "Fix the login page"}, "Running"))
}

func TestSessionDetailAppliesFacts(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1", StateRevision: 3}, Commands: agentCommands[:1]})
	assert.Equal(t, agentCommands[:1], d.Commands())
	usage := &shared.SessionUsage{Used: 10, Size: 100, Cost: &shared.Cost{Amount: 0.5, Currency: "USD"}}
	assert.False(t, d.Push(note(shared.NotifySessionInfoUpdated, 1, shared.SessionInfoEvent{SessionID: "s1", Title: "Named", Usage: usage})))
	assert.False(t, d.Push(note(shared.NotifySessionCommandsUpdated, 2, shared.SessionCommandsEvent{SessionID: "s1", Commands: agentCommands})))
	assert.Equal(t, "Named", d.Session().Title)
	assert.Equal(t, usage, d.Session().Usage)
	assert.Equal(t, int64(3), d.Session().StateRevision, "facts are no state change")
	assert.Equal(t, agentCommands, d.Commands())
	d.Reset()
	assert.Equal(t, agentCommands, d.Commands(), "kept across a reset until the next snapshot")
	assert.False(t, d.Push(note(shared.NotifySessionInfoUpdated, 1, shared.SessionInfoEvent{SessionID: "other", Title: "x"})))
	assert.Equal(t, "Named", d.Session().Title, "another session's facts are ignored")
}

func TestByteOffsetOfACaret(t *testing.T) {
	assert.Equal(t, 0, ByteOffset("/é😀x", 0))
	assert.Equal(t, 1, ByteOffset("/é😀x", 1))
	assert.Equal(t, 3, ByteOffset("/é😀x", 2), "é is one unit, two bytes")
	assert.Equal(t, 7, ByteOffset("/é😀x", 4), "😀 is two units, four bytes")
	assert.Equal(t, 8, ByteOffset("/é😀x", 99))
}
