package gateway

import (
	"context"

	"github.com/herd-dev/herd/shared"
)

// Sessions runs agent sessions; the session actions call it.
type Sessions interface {
	Create(ctx context.Context, req shared.SessionCreateRequest) (shared.Session, error)
	Get(ctx context.Context, sessionID string) (shared.Session, error)
	List(ctx context.Context, taskID string) ([]shared.Session, error)
	// Snapshot returns a session's current state, its newest messages, its
	// queue and its unanswered requests.
	Snapshot(ctx context.Context, sessionID string) (shared.SessionSnapshot, error)
	AddMessage(ctx context.Context, sessionID, clientMessageID, content string, attachments ...shared.Attachment) (shared.MessageAddResponse, error)
	// ListFiles lists or searches the files of a session's worktree.
	ListFiles(ctx context.Context, req shared.FileListRequest) (shared.FileListResponse, error)
	ListMessages(ctx context.Context, req shared.MessageListRequest) (shared.MessageListResponse, error)
	GetMessage(ctx context.Context, sessionID, messageID string) (shared.Message, error)
	// ToolContentPage returns a page of a part of a tool call's content.
	ToolContentPage(ctx context.Context, req shared.ToolContentGetRequest) (shared.ToolContentPage, error)
	Queue(ctx context.Context, sessionID string) ([]shared.QueuedPrompt, error)
	RemoveQueued(ctx context.Context, sessionID, queueID string) ([]shared.QueuedPrompt, error)
	RespondPermission(ctx context.Context, req shared.PermissionRespondRequest) (shared.Message, error)
	RespondClarification(ctx context.Context, req shared.ClarificationRespondRequest) (shared.Message, error)
	Cancel(ctx context.Context, sessionID string) (shared.Session, error)
	// SetConfig sets one option of a session's configuration through its
	// agent and returns the configuration that results.
	SetConfig(ctx context.Context, req shared.SessionConfigSetRequest) (shared.SessionConfigEvent, error)
	// EndTask ends the sessions of an archived task and stops their agents.
	EndTask(ctx context.Context, taskID string) error
}

// Input bounds for the session actions.
const (
	maxClientMessageIDBytes = 128
	maxAnswerBytes          = 64 << 10
)

// sessionActions lists the session actions, served when a Sessions is
// configured.
func (g *Gateway) sessionActions() map[string]action {
	actions := map[string]action{
		shared.ActionSessionList:          {run: handle(g.sessionList)},
		shared.ActionSessionCreate:        {run: handle(g.sessionCreate)},
		shared.ActionSessionSubscribe:     {run: handle(g.sessionSubscribe), ordered: true},
		shared.ActionSessionUnsubscribe:   {run: handle(g.sessionUnsubscribe), ordered: true},
		shared.ActionSessionFocus:         {run: handle(g.sessionFocus), ordered: true},
		shared.ActionSessionGitRefresh:    {run: handle(g.sessionGitRefresh)},
		shared.ActionSessionCancel:        {run: handle(g.sessionCancel)},
		shared.ActionSessionConfigSet:     {run: handle(g.sessionConfigSet)},
		shared.ActionSessionFilesList:     {run: handle(g.filesList)},
		shared.ActionMessageAdd:           {run: handle(g.messageAdd)},
		shared.ActionMessageList:          {run: handle(g.messageList)},
		shared.ActionMessageGet:           {run: handle(g.messageGet)},
		shared.ActionMessageQueueGet:      {run: handle(g.queueGet)},
		shared.ActionMessageQueueRemove:   {run: handle(g.queueRemove)},
		shared.ActionPermissionRespond:    {run: handle(g.permissionRespond)},
		shared.ActionClarificationRespond: {run: handle(g.clarificationRespond)},
	}
	actions[shared.ActionMessageToolContentGet] = action{run: handle(g.toolContentGet)}
	return actions
}

func (g *Gateway) sessionList(ctx context.Context, _ *conn, req shared.TaskRef) (any, error) {
	if err := requireID("task_id", req.TaskID); err != nil {
		return nil, err
	}
	if _, err := g.cfg.Store.GetTask(ctx, req.TaskID); err != nil {
		return nil, err
	}
	sessions, err := g.cfg.Sessions.List(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	return shared.SessionListResponse{Sessions: sessions}, nil
}

func (g *Gateway) sessionCreate(ctx context.Context, _ *conn, req shared.SessionCreateRequest) (any, error) {
	if err := requireID("task_id", req.TaskID); err != nil {
		return nil, err
	}
	if len(req.Prompt) > shared.MaxPromptBytes {
		return nil, shared.Errorf(shared.CodeBadRequest, "prompt is %d bytes; the limit is %d", len(req.Prompt), shared.MaxPromptBytes)
	}
	return g.cfg.Sessions.Create(ctx, req)
}

// sessionSubscribe opens a session on the connection. The connection joins
// the session's stream before the snapshot is read, so nothing produced
// after the snapshot is missed; a notification produced in between may
// arrive before the response and is also in the snapshot (clients apply
// notifications with seq ≥ 1 after the snapshot). A repeat only
// acknowledges: no replay.
func (g *Gateway) sessionSubscribe(ctx context.Context, c *conn, req shared.SessionRef) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	joined, err := c.joinSession(req.SessionID)
	if err != nil || !joined {
		return shared.SessionSubscribeResponse{Joined: false}, err
	}
	snapshot, err := g.cfg.Sessions.Snapshot(ctx, req.SessionID)
	if err == nil {
		snapshot.Git, err = g.cfg.Store.RepositoryGits(ctx, snapshot.Session.TaskID)
	}
	if err != nil {
		c.leaveSession(req.SessionID)
		return nil, err
	}
	return shared.SessionSubscribeResponse{Joined: true, Snapshot: &snapshot}, nil
}

func (g *Gateway) sessionUnsubscribe(_ context.Context, c *conn, req shared.SessionRef) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	c.leaveSession(req.SessionID)
	return shared.Empty{}, nil
}

// sessionFocus records the session the client shows in front: its task's
// repositories get the fast git cadence while it stays there. A
// connection focuses one session at a time; focusing another, or closing,
// gives the focus back. It never replays anything.
func (g *Gateway) sessionFocus(ctx context.Context, c *conn, req shared.SessionRef) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	if _, err := g.cfg.Sessions.Get(ctx, req.SessionID); err != nil {
		return nil, err
	}
	if g.cfg.Git == nil || c.focus == req.SessionID {
		return shared.Empty{}, nil
	}
	release, err := g.cfg.Git.Focus(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	c.setFocus(req.SessionID, release)
	return shared.Empty{}, nil
}

// sessionGitRefresh schedules a fresh git observation of the session's
// repositories; focus and membership stay as they are. The result
// reaches the session's subscribers as session.git.updated and the task
// row as its summary.
func (g *Gateway) sessionGitRefresh(ctx context.Context, _ *conn, req shared.SessionRef) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	if _, err := g.cfg.Sessions.Get(ctx, req.SessionID); err != nil {
		return nil, err
	}
	if g.cfg.Git == nil {
		return nil, shared.Errorf(shared.CodeUnavailable, "this server does not observe git repositories")
	}
	if err := g.cfg.Git.Refresh(ctx, req.SessionID); err != nil {
		return nil, err
	}
	return shared.Empty{}, nil
}

func (g *Gateway) sessionCancel(ctx context.Context, _ *conn, req shared.SessionRef) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	return g.cfg.Sessions.Cancel(ctx, req.SessionID)
}

// sessionConfigSet sets one option of a session's configuration; the
// option and value are the agent's ids, matched exactly.
func (g *Gateway) sessionConfigSet(ctx context.Context, _ *conn, req shared.SessionConfigSetRequest) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, value string }{{"option_id", req.OptionID}, {"value", req.Value}} {
		switch {
		case f.value == "":
			return nil, shared.Errorf(shared.CodeBadRequest, "%s is required", f.name)
		case len(f.value) > shared.MaxConfigIDBytes:
			return nil, shared.Errorf(shared.CodeBadRequest, "%s is longer than %d bytes", f.name, shared.MaxConfigIDBytes)
		}
	}
	return g.cfg.Sessions.SetConfig(ctx, req)
}

// messageAdd sends a prompt; message_id is accepted as an alias of
// client_message_id.
func (g *Gateway) messageAdd(ctx context.Context, _ *conn, req shared.MessageAddRequest) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	id := req.ClientMessageID
	if id == "" {
		id = req.MessageID
	}
	switch {
	case id == "":
		return nil, shared.Errorf(shared.CodeBadRequest, "client_message_id is required: a fresh id per prompt, reused when retrying it")
	case len(id) > maxClientMessageIDBytes:
		return nil, shared.Errorf(shared.CodeBadRequest, "client_message_id is longer than %d bytes", maxClientMessageIDBytes)
	}
	// The prompt is checked but kept byte for byte: leading indentation or
	// trailing newlines may matter to the agent.
	if _, err := boundedText("content", req.Content, shared.MaxPromptBytes, true); err != nil {
		return nil, err
	}
	if _, err := shared.CheckAttachments(req.Attachments); err != nil {
		return nil, err
	}
	return g.cfg.Sessions.AddMessage(ctx, req.SessionID, id, req.Content, req.Attachments...)
}

func (g *Gateway) filesList(ctx context.Context, _ *conn, req shared.FileListRequest) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	return g.cfg.Sessions.ListFiles(ctx, req)
}

func (g *Gateway) messageList(ctx context.Context, _ *conn, req shared.MessageListRequest) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	return g.cfg.Sessions.ListMessages(ctx, req)
}

func (g *Gateway) messageGet(ctx context.Context, _ *conn, req shared.MessageGetRequest) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	if err := requireID("message_id", req.MessageID); err != nil {
		return nil, err
	}
	return g.cfg.Sessions.GetMessage(ctx, req.SessionID, req.MessageID)
}

func (g *Gateway) queueGet(ctx context.Context, _ *conn, req shared.SessionRef) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	queue, err := g.cfg.Sessions.Queue(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	return shared.QueueResponse{Queue: queue}, nil
}

func (g *Gateway) queueRemove(ctx context.Context, _ *conn, req shared.QueueRemoveRequest) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	if err := requireID("queue_id", req.QueueID); err != nil {
		return nil, err
	}
	queue, err := g.cfg.Sessions.RemoveQueued(ctx, req.SessionID, req.QueueID)
	if err != nil {
		return nil, err
	}
	return shared.QueueResponse{Queue: queue}, nil
}

func (g *Gateway) permissionRespond(ctx context.Context, _ *conn, req shared.PermissionRespondRequest) (any, error) {
	for _, f := range [][2]string{{"session_id", req.SessionID}, {"pending_id", req.PendingID}, {"option_id", req.OptionID}} {
		if err := requireID(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	return g.cfg.Sessions.RespondPermission(ctx, req)
}

func (g *Gateway) clarificationRespond(ctx context.Context, _ *conn, req shared.ClarificationRespondRequest) (any, error) {
	for _, f := range [][2]string{{"session_id", req.SessionID}, {"pending_id", req.PendingID}} {
		if err := requireID(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	answer, err := boundedText("answer", req.Answer, maxAnswerBytes, true)
	if err != nil {
		return nil, err
	}
	req.Answer = answer
	return g.cfg.Sessions.RespondClarification(ctx, req)
}
