package attention

import (
	"context"
	"strings"

	"github.com/herd-dev/herd/shared"
)

// Responder makes the decisions the session view makes; the session
// manager implements it.
type Responder interface {
	RespondPermission(ctx context.Context, req shared.PermissionRespondRequest) (shared.Message, error)
	RespondClarification(ctx context.Context, req shared.ClarificationRespondRequest) (shared.Message, error)
}

// maxAnswerBytes bounds a clarification's answer, as clarification.respond
// does.
const maxAnswerBytes = 64 << 10

// Decide answers one pending request for a device, in its workspace, through
// the same path as the session view. It takes only a request of that
// workspace, named by its exact pending id; a decision repeated with the
// same choice answers again what was stored, so a retried post is safe.
func (a *Attention) Decide(ctx context.Context, r Responder, device shared.PushDevice, req shared.PushDecisionRequest) (shared.PushDecisionResponse, error) {
	workspaceID := device.WorkspaceID
	if err := validDecision(req); err != nil {
		return shared.PushDecisionResponse{}, err
	}
	if req.WorkspaceID != workspaceID {
		return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeForbidden, "this device belongs to another workspace")
	}
	msg, err := a.cfg.Store.RequestByPendingID(ctx, req.SessionID, req.PendingID)
	if err != nil {
		return shared.PushDecisionResponse{}, err
	}
	task, err := a.cfg.Store.GetTask(ctx, msg.TaskID)
	if err != nil {
		return shared.PushDecisionResponse{}, err
	}
	if task.WorkspaceID != workspaceID {
		return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeForbidden, "the request is not in this device's workspace")
	}
	permission := msg.Type == shared.MessagePermissionRequest
	if permission != (req.OptionID != "") {
		if permission {
			return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeBadRequest, "a permission request takes option_id")
		}
		return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeBadRequest, "a clarification takes answer")
	}
	if msg.Status == shared.MessagePending {
		a.decided(req.PendingID, device.ID)
		var answered shared.Message
		if permission {
			answered, err = r.RespondPermission(ctx, shared.PermissionRespondRequest{
				SessionID: req.SessionID, PendingID: req.PendingID, OptionID: req.OptionID})
		} else {
			answered, err = r.RespondClarification(ctx, shared.ClarificationRespondRequest{
				SessionID: req.SessionID, PendingID: req.PendingID, Answer: req.Answer})
		}
		if err == nil {
			return shared.PushDecisionResponse{Message: answered}, nil
		}
		a.undecided(req.PendingID)
		if shared.ErrorCode(err) != shared.CodeNotFound {
			return shared.PushDecisionResponse{}, err
		}
		// Answered or withdrawn meanwhile, or its agent is not waiting on
		// it any more: what is stored now says which.
		if msg, err = a.cfg.Store.RequestByPendingID(ctx, req.SessionID, req.PendingID); err != nil {
			return shared.PushDecisionResponse{}, err
		}
		if msg.Status == shared.MessagePending {
			return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeConflict, "the agent is no longer waiting on this request")
		}
	}
	return repeated(msg, req)
}

// repeated answers a decision about a request that is no longer pending:
// the same choice again is the stored answer; any other is a conflict.
func repeated(msg shared.Message, req shared.PushDecisionRequest) (shared.PushDecisionResponse, error) {
	if msg.Status != shared.MessageResolved {
		return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeConflict, "the agent withdrew this request")
	}
	var md shared.MessageMetadata
	if msg.Metadata != nil {
		md = *msg.Metadata
	}
	if req.OptionID != "" && md.SelectedOptionID == req.OptionID || req.OptionID == "" && md.Answer == req.Answer {
		return shared.PushDecisionResponse{Message: msg, Repeated: true}, nil
	}
	if req.OptionID != "" {
		return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeConflict, "already answered: %s", optionName(md))
	}
	return shared.PushDecisionResponse{}, shared.Errorf(shared.CodeConflict, "already answered")
}

func optionName(md shared.MessageMetadata) string {
	for _, o := range md.Options {
		if o.OptionID == md.SelectedOptionID {
			return o.Name
		}
	}
	return md.SelectedOptionID
}

// validDecision checks a decision's shape before anything is read.
func validDecision(req shared.PushDecisionRequest) error {
	for _, f := range []struct{ name, value string }{
		{"workspace_id", req.WorkspaceID}, {"session_id", req.SessionID}, {"pending_id", req.PendingID},
	} {
		if strings.TrimSpace(f.value) == "" {
			return shared.Errorf(shared.CodeBadRequest, "%s is required", f.name)
		}
	}
	switch {
	case req.OptionID != "" && req.Answer != "":
		return shared.Errorf(shared.CodeBadRequest, "send option_id or answer, not both")
	case req.OptionID == "" && strings.TrimSpace(req.Answer) == "":
		return shared.Errorf(shared.CodeBadRequest, "option_id or answer is required")
	case len(req.Answer) > maxAnswerBytes:
		return shared.Errorf(shared.CodeBadRequest, "answer is longer than %d bytes", maxAnswerBytes)
	}
	return nil
}
