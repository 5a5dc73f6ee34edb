package attention

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/herd-dev/herd/shared"
)

// pass tells the feed and the devices what changed of one task since they
// were last told. It returns the first read that failed; what it had
// published by then is remembered, so the retry repeats nothing.
func (a *Attention) pass(ctx context.Context, taskID string, m *mark) error {
	task, err := a.cfg.Store.GetTask(ctx, taskID)
	if shared.ErrorCode(err) == shared.CodeNotFound {
		delete(a.told, taskID)
		return nil
	}
	if err != nil {
		return err
	}
	open, err := a.cfg.Store.OpenRequestsOfTask(ctx, taskID, task.WorkspaceID)
	if err != nil {
		return err
	}
	t := a.told[taskID]
	if t == nil {
		t = &told{open: make(map[string]shared.InboxRequest), fresh: true}
		a.told[taskID] = t
	}
	if err := a.announce(ctx, task, t, open, m); err != nil {
		return err
	}
	if err := a.push(ctx, task, t, open, m); err != nil {
		return err
	}
	t.fresh = false
	return nil
}

// announce publishes inbox.request.opened for each request open now and
// not announced, and inbox.request.closed for each announced one no longer
// open.
func (a *Attention) announce(ctx context.Context, task shared.Task, t *told, open []shared.InboxRequest, m *mark) error {
	now := make(map[string]bool, len(open))
	for _, r := range open {
		now[r.PendingID] = true
	}
	for id, r := range t.open {
		if now[id] {
			continue
		}
		status, ok := m.closed[id]
		if !ok {
			msg, err := a.cfg.Store.RequestByPendingID(ctx, r.SessionID, id)
			switch {
			case shared.ErrorCode(err) == shared.CodeNotFound:
				status = shared.MessageCancelled
			case err != nil:
				return err
			default:
				status = msg.Status
			}
		}
		a.publish(task.WorkspaceID, shared.NotifyInboxRequestClosed, shared.InboxRequestClosed{
			WorkspaceID: task.WorkspaceID, TaskID: task.ID, SessionID: r.SessionID, PendingID: id, Status: status,
		})
		delete(t.open, id)
	}
	for _, r := range open {
		if _, ok := t.open[r.PendingID]; ok {
			continue
		}
		a.publish(task.WorkspaceID, shared.NotifyInboxRequestOpened, r)
		t.open[r.PendingID] = r
	}
	return nil
}

func (a *Attention) publish(workspaceID, action string, payload any) {
	if a.pub != nil {
		a.pub.PublishWorkspace(workspaceID, action, payload)
	}
}

// push sends what the devices must show of the task now: its oldest open
// request while there is one, else a close for a request they show, then
// any error, pull request or finished turn the summary change reports.
func (a *Attention) push(ctx context.Context, task shared.Task, t *told, open []shared.InboxRequest, m *mark) error {
	if a.cfg.Pusher == nil {
		return nil
	}
	type out struct {
		msg    shared.PushMessage
		since  time.Time
		except string
	}
	var msgs []out
	shown := ""
	if len(open) > 0 {
		shown = open[0].PendingID
		if shown != t.shown {
			msgs = append(msgs, out{msg: fitted(requestMessage(task, open)), since: open[0].CreatedAt})
		}
	} else {
		// A summary whose request cleared before this process told the
		// devices anything of the task (a restart cancelled it, or
		// another replica showed it) closes what they may still show.
		cleared := t.fresh && m.summaries && m.next != nil && m.next.PendingAction == "" &&
			(m.prev == nil || m.prev.PendingAction != "")
		if t.shown != "" || cleared {
			msgs = append(msgs, out{msg: base(task, shared.PushClose), since: m.since, except: a.decider(t.shown)})
		}
		if msg, ok := summaryMessage(task, m, a.draining); ok {
			msgs = append(msgs, out{msg: fitted(msg), since: m.since})
		}
	}
	if len(msgs) > 0 {
		pending, err := a.cfg.Store.CountOpenRequests(ctx, task.WorkspaceID)
		if err != nil {
			return err
		}
		sent := a.cfg.Now().UTC()
		for _, o := range msgs {
			o.msg.Pending, o.msg.SentAt = pending, sent
			if err := a.cfg.Pusher.Push(ctx, task.WorkspaceID, o.msg, o.since, o.except); err != nil {
				return err
			}
		}
	}
	t.shown = shown
	return nil
}

// fitted is msg cut to what a push carries: JSON escapes can make text
// six times its length, and an agent's option ids and tool kind are its
// own. What does not fit is left out, the buttons first (the person then
// answers in the app), then the body.
func fitted(msg shared.PushMessage) shared.PushMessage {
	msg.ToolKind = shared.Clip(msg.ToolKind, 32)
	for _, cut := range []func(*shared.PushMessage){
		func(*shared.PushMessage) {},
		func(m *shared.PushMessage) { m.Actions = nil },
		func(m *shared.PushMessage) { m.Body = shared.Clip(m.Body, 60) },
		func(m *shared.PushMessage) { m.Body, m.Title = "", shared.Clip(m.Title, 60) },
	} {
		cut(&msg)
		if b, err := json.Marshal(msg); err == nil && len(b) <= shared.MaxPushPayloadBytes-64 {
			break
		}
	}
	return msg
}

// base is a push message about a task with nothing said yet.
func base(task shared.Task, kind shared.PushKind) shared.PushMessage {
	return shared.PushMessage{
		Kind: kind, Tag: Tag(task.ID), WorkspaceID: task.WorkspaceID, TaskID: task.ID,
		URL: "/tasks/" + url.PathEscape(task.ID),
	}
}

// Tag names the one notification of a task.
func Tag(taskID string) string { return "task:" + taskID }

// requestMessage asks about the task's oldest open request, with the
// allow-once and reject-once choices a notification can offer.
func requestMessage(task shared.Task, open []shared.InboxRequest) shared.PushMessage {
	r := open[0]
	msg := base(task, shared.PushClarification)
	msg.SessionID, msg.PendingID = r.SessionID, r.PendingID
	msg.URL = "/tasks/" + url.PathEscape(task.ID) + "/sessions/" + url.PathEscape(r.SessionID)
	what := "asks you a question"
	if r.Kind == shared.InboxPermission {
		msg.Kind, what = shared.PushPermission, "needs your permission"
		msg.ToolKind = r.ToolKind
		msg.Actions = notificationActions(r.Options)
	}
	msg.Title = titled(task, what)
	body := r.Title
	if n := len(open) - 1; n > 0 {
		body = fmt.Sprintf("%s (and %d more)", shared.Clip(body, shared.MaxPushBodyBytes-20), n)
	}
	msg.Body = shared.Clip(body, shared.MaxPushBodyBytes)
	return msg
}

// notificationActions are the first allow-once and the first reject-once
// options: the two buttons every browser shows.
func notificationActions(options []shared.PermissionOption) []shared.PushAction {
	var out []shared.PushAction
	for _, kind := range []string{"allow_once", "reject_once"} {
		for _, o := range options {
			if o.Kind == kind {
				out = append(out, shared.PushAction{OptionID: o.OptionID, Label: shared.Clip(o.Name, 40), Kind: o.Kind})
				break
			}
		}
	}
	return out
}

// summaryMessage is what a summary change has to say while no request is
// open: a new error, a pull request turning red or green, or the primary
// session's turn settling (unless a queued prompt starts the next one at
// once, or the server is stopping every session); the first of these that
// happened.
func summaryMessage(task shared.Task, m *mark, draining bool) (shared.PushMessage, bool) {
	if !m.summaries || m.next == nil {
		return shared.PushMessage{}, false
	}
	var prev shared.TaskStatusSummary
	if m.prev != nil {
		prev = *m.prev
	}
	next := *m.next
	if e := next.ActiveError; e != nil && errorStamp(prev) != e.Stamp {
		msg := base(task, shared.PushError)
		msg.SessionID = e.SessionID
		msg.Title = titled(task, "hit an error")
		msg.Body = shared.Clip(e.Preview, shared.MaxPushBodyBytes)
		return msg, true
	}
	if st := prState(next); st != prState(prev) && (st == shared.PRFailure || st == shared.PRPassing) {
		msg := base(task, shared.PushPullRequest)
		msg.Title = titled(task, "pull request is passing")
		if st == shared.PRFailure {
			msg.Title = titled(task, "pull request is failing")
		}
		if pr := next.PullRequest; pr.Number > 0 {
			msg.Body = fmt.Sprintf("#%d", pr.Number)
		}
		return msg, true
	}
	if !draining && m.running && primaryState(next) == shared.SessionWaitingForInput && next.PendingAction == "" && next.QueuedPromptCount == 0 {
		msg := base(task, shared.PushTurn)
		msg.SessionID = next.PrimarySession.ID
		msg.URL += "/sessions/" + url.PathEscape(msg.SessionID)
		msg.Title = titled(task, "finished its turn")
		msg.Body = shared.Clip(next.Preview, shared.MaxPushBodyBytes)
		return msg, true
	}
	return shared.PushMessage{}, false
}

// titled is a notification title: the task's title, cut, and what it
// needs.
func titled(task shared.Task, what string) string {
	name := task.Title
	if name == "" {
		name = "A task"
	}
	return shared.Clip(name, 80) + " " + what
}
