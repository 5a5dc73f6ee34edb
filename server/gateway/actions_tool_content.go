package gateway

import (
	"context"

	"github.com/herd-dev/herd/shared"
)

// toolContentGet answers message.tool_content.get: a page of the rest of
// a tool call's content part that the wire carried truncated.
func (g *Gateway) toolContentGet(ctx context.Context, _ *conn, req shared.ToolContentGetRequest) (any, error) {
	if err := requireID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	if err := requireID("message_id", req.MessageID); err != nil {
		return nil, err
	}
	// The store checks the rest of the request before it reads a row.
	return g.cfg.Sessions.ToolContentPage(ctx, req)
}
