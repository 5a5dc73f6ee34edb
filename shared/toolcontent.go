package shared

// ActionMessageToolContentGet fetches a page of one part of a tool call's
// content: the rest of a part the wire carried truncated.
const ActionMessageToolContentGet = "message.tool_content.get"

// The ToolContent types.
const (
	// ToolContentText is text the call produced (a command's output, a
	// file read), or a marker for a block that is not text ("[image]").
	ToolContentText = "text"
	// ToolContentDiff is a change to a file, its body a unified diff.
	ToolContentDiff = "diff"
	// ToolContentTerminal is a terminal the agent named; herd offers no
	// terminals, so only its id is known.
	ToolContentTerminal = "terminal"
)

// Bounds of a tool call's content.
const (
	// ToolTextWireBytes bounds a text part's body on the wire.
	ToolTextWireBytes = 8 << 10
	// ToolDiffWireLines bounds a diff part's body on the wire, in lines;
	// ToolDiffWireBytes bounds it in bytes too (a line may be long).
	ToolDiffWireLines = 80
	ToolDiffWireBytes = 16 << 10
	// ToolStoredBytes bounds the bodies the server keeps of one call; the
	// part that crosses it is cut there (Cut) and later parts are empty.
	ToolStoredBytes = 4 << 20
	// ToolPageBytes bounds a message.tool_content.get page.
	ToolPageBytes = 64 << 10
)

// ToolContent is one part of a tool call's content as it travels in a
// tool_call message's metadata. Body holds the part's first bytes: all of
// it unless Truncated, in which case message.tool_content.get pages
// through the rest.
type ToolContent struct {
	// Type is ToolContentText, ToolContentDiff or ToolContentTerminal.
	Type string `json:"type"`
	// Body is a text part's text or a diff part's unified diff ("@@" hunk
	// headers, then lines starting with ' ', '-' or '+'), from its start.
	Body string `json:"body,omitempty"`
	// Size and Lines are the whole body's length in bytes and lines.
	Size  int `json:"size"`
	Lines int `json:"lines"`
	// Truncated says Body holds only the first bytes of the body.
	Truncated bool `json:"truncated,omitempty"`
	// Cut says the server keeps only the first bytes of what the agent
	// sent (see ToolStoredBytes): Size is what it kept.
	Cut bool `json:"cut,omitempty"`
	// Path is a diff's file.
	Path string `json:"path,omitempty"`
	// NewFile marks a diff that creates its file (ACP: no oldText).
	NewFile bool `json:"new_file,omitempty"`
	// Added and Removed count a diff's added and removed lines.
	Added   int `json:"added,omitempty"`
	Removed int `json:"removed,omitempty"`
	// TerminalID names a terminal part's terminal.
	TerminalID string `json:"terminal_id,omitempty"`
	// AppendFrom, on a session.message.updated only, is the byte offset
	// into the body at which Body starts: the connection already holds
	// the bytes before it (see "Append deltas").
	AppendFrom *int `json:"append_from,omitempty"`
}

// ToolLocation is a file a tool call touches.
type ToolLocation struct {
	Path string `json:"path"`
	// Line is 1-based; absent when the agent named none.
	Line int `json:"line,omitempty"`
}

// ToolContentGetRequest asks for the bytes of part Part of a tool call
// message's content from byte Offset on, at most Limit bytes (at most
// ToolPageBytes; 0 means that).
type ToolContentGetRequest struct {
	SessionID string `json:"session_id"`
	MessageID string `json:"message_id"`
	Part      int    `json:"part"`
	Offset    int    `json:"offset"`
	Limit     int    `json:"limit,omitempty"`
}

// Validate checks the request's own fields (bad_request); whether the
// message and the part exist is the server's to say (not_found).
func (r ToolContentGetRequest) Validate() error {
	switch {
	case r.SessionID == "" || r.MessageID == "":
		return Errorf(CodeBadRequest, "session_id and message_id are required")
	case r.Part < 0:
		return Errorf(CodeBadRequest, "part must be 0 or more, not %d", r.Part)
	case r.Offset < 0:
		return Errorf(CodeBadRequest, "offset must be 0 or more, not %d", r.Offset)
	case r.Limit < 0 || r.Limit > ToolPageBytes:
		return Errorf(CodeBadRequest, "limit must be between 1 and %d (0 means %d)", ToolPageBytes, ToolPageBytes)
	}
	return nil
}

// ToolContentPage is a page of a tool content part: Body holds its bytes
// from Offset on, cut on a character boundary. Size is the whole body's
// length; the page is the last when Offset+len(Body) == Size.
type ToolContentPage struct {
	MessageID string `json:"message_id"`
	Part      int    `json:"part"`
	Offset    int    `json:"offset"`
	Body      string `json:"body"`
	Size      int    `json:"size"`
}
