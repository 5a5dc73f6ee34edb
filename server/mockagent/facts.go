package mockagent

import (
	"strconv"

	acp "github.com/coder/acp-go-sdk"
)

// factCommands are the slash commands the facts scenario offers: one
// takes input (its hint), the others none.
var factCommands = []acp.AvailableCommand{
	{Name: "review", Description: "Review the changes on this branch", Input: &acp.AvailableCommandInput{
		Unstructured: &acp.UnstructuredCommandInput{Hint: "[pr#|branch]"},
	}},
	{Name: "compact", Description: "Clear the conversation but keep a summary in context"},
	{Name: "debug", Description: "Debug the current session", Input: &acp.AvailableCommandInput{
		Unstructured: &acp.UnstructuredCommandInput{Hint: "[issue description]"},
	}},
}

// facts plays `facts [USED SIZE [COST [CURRENCY]]]`: the facts Claude's
// adapter reports about a session besides its transcript, in Claude's
// order: the command list, a usage update without cost, the answer
// "facts reported", a usage update with the session's cumulative cost
// (default 84000 of 200000 tokens, 0.42 USD), and the title
// "Facts from the mock agent".
func (t *turn) facts(args []string) error {
	used, size, amount, currency := 84_000, 200_000, 0.42, "USD"
	bad := func(what string) error {
		return acp.NewInvalidParams(map[string]any{"error": "facts: bad " + what})
	}
	if len(args) == 1 || len(args) > 4 {
		return acp.NewInvalidParams(map[string]any{"error": "facts takes USED SIZE [COST [CURRENCY]]"})
	}
	var err error
	if len(args) >= 2 {
		if used, err = strconv.Atoi(args[0]); err != nil {
			return bad("USED")
		}
		if size, err = strconv.Atoi(args[1]); err != nil {
			return bad("SIZE")
		}
	}
	if len(args) >= 3 {
		if amount, err = strconv.ParseFloat(args[2], 64); err != nil {
			return bad("COST")
		}
	}
	if len(args) == 4 {
		currency = args[3]
	}
	title := "Facts from the mock agent"
	err = t.sendAll(
		acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{
			SessionUpdate: "available_commands_update", AvailableCommands: factCommands,
		}},
		acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{SessionUpdate: "usage_update", Used: used / 2, Size: size}},
	)
	if err != nil {
		return err
	}
	if err := t.say("facts reported"); err != nil {
		return err
	}
	return t.sendAll(
		acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{
			SessionUpdate: "usage_update", Used: used, Size: size,
			Cost: &acp.Cost{Amount: amount, Currency: currency},
		}},
		acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{SessionUpdate: "session_info_update", Title: &title}},
	)
}
