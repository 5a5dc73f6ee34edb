package shared

// The bounds of what a session keeps of its agent's facts. The server cuts
// longer text on a character boundary, ending it in "…", and drops what is
// beyond a count.
const (
	// MaxSessionTitleBytes bounds Session.Title.
	MaxSessionTitleBytes = 120
	// MaxSlashCommands bounds the commands a session keeps; the agent's
	// later ones are dropped.
	MaxSlashCommands = 128
	// MaxCommandNameBytes bounds SlashCommand.Name; a longer name is
	// dropped with its command, since a cut name would not run.
	MaxCommandNameBytes = 64
	// MaxCommandDescriptionBytes bounds SlashCommand.Description.
	MaxCommandDescriptionBytes = 240
	// MaxCommandHintBytes bounds SlashCommand.Hint.
	MaxCommandHintBytes = 120
	// MaxSummaryCurrencies bounds TaskStatusSummary.Cost.
	MaxSummaryCurrencies = 4
)

// SessionUsage is a session's latest context usage and its cumulative
// cost, as its agent last reported them (ACP usage_update).
type SessionUsage struct {
	// Used is the tokens in the agent's context.
	Used int `json:"used"`
	// Size is the context window in tokens; 0 when the agent did not say.
	Size int `json:"size"`
	// Cost is the session's cumulative cost; absent until the agent
	// reports one (Claude does at the end of each model cycle).
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is an amount of money.
type Cost struct {
	// Amount is finite and not negative.
	Amount float64 `json:"amount"`
	// Currency is an ISO 4217 code in upper case ("USD").
	Currency string `json:"currency"`
}

// SlashCommand is a command the session's agent offers (ACP
// available_commands_update). A person runs it by sending a prompt that
// starts with "/" and its name; the agent reads the rest of the prompt as
// its input.
type SlashCommand struct {
	// Name is the command without its "/": no white space or control
	// characters, at most MaxCommandNameBytes.
	Name string `json:"name"`
	// Description says what the command does, at most
	// MaxCommandDescriptionBytes on one line; may be empty.
	Description string `json:"description,omitempty"`
	// Hint describes the input the command takes ("[issue description]"),
	// at most MaxCommandHintBytes; empty when it takes none.
	Hint string `json:"hint,omitempty"`
}

// SessionInfoEvent is the payload of session.info.updated: a session's
// title and usage, sent to its subscribers whenever either changes.
type SessionInfoEvent struct {
	SessionID string `json:"session_id"`
	TaskID    string `json:"task_id"`
	// Title as Session's; empty while the agent has not named the session.
	Title string `json:"title,omitempty"`
	// Usage as Session's; absent until the agent reports usage.
	Usage *SessionUsage `json:"usage,omitempty"`
}

// SessionInfoEventOf returns the info event of a session.
func SessionInfoEventOf(s Session) SessionInfoEvent {
	return SessionInfoEvent{SessionID: s.ID, TaskID: s.TaskID, Title: s.Title, Usage: s.Usage}
}

// SessionCommandsEvent is the payload of session.commands.updated: the
// whole command list of a session, sent to its subscribers when it changes.
type SessionCommandsEvent struct {
	SessionID string `json:"session_id"`
	// Commands is never null; empty when the agent offers none.
	Commands []SlashCommand `json:"commands"`
}
