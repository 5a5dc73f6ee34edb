package mockagent

import (
	"encoding/base64"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// content answers with what the prompt held besides its first text block,
// one entry per block, so tests can see what herd sent:
//
//	image MIME N bytes
//	resource_link NAME URI [size N]
//	resource URI N bytes
//	text N bytes
func (t *turn) content() error {
	var got []string
	for _, b := range t.blocks[min(1, len(t.blocks)):] {
		switch {
		case b.Image != nil:
			n, err := base64.StdEncoding.DecodeString(b.Image.Data)
			size := strconv.Itoa(len(n)) + " bytes"
			if err != nil {
				size = "undecodable"
			}
			got = append(got, "image "+b.Image.MimeType+" "+size)
		case b.ResourceLink != nil:
			l := b.ResourceLink
			entry := "resource_link " + l.Name + " " + l.Uri
			if l.Size != nil {
				entry += " size " + strconv.Itoa(*l.Size)
			}
			got = append(got, entry)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			got = append(got, "resource "+r.Uri+" "+strconv.Itoa(len(r.Text))+" bytes")
		case b.Text != nil:
			got = append(got, "text "+strconv.Itoa(len(b.Text.Text))+" bytes")
		default:
			got = append(got, "other")
		}
	}
	if len(got) == 0 {
		return t.say("received: nothing but text")
	}
	return t.say("received: " + strings.Join(got, "; "))
}

// permissionKinds asks with one option of each ACP kind and answers with
// the kind chosen: "chose allow_always". With die, the agent exits with
// status 3 while the request waits, as an agent that crashes would.
func (t *turn) permissionKinds(die bool) error {
	id := acp.ToolCallId(t.msg + "-exec")
	title := "Run make test"
	if err := t.send(t.ctx, acp.StartToolCall(id, title, acp.WithStartKind(acp.ToolKindExecute),
		acp.WithStartStatus(acp.ToolCallStatusPending))); err != nil {
		return err
	}
	options := []acp.PermissionOption{
		{OptionId: "once", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
		{OptionId: "always", Name: "Allow always", Kind: acp.PermissionOptionKindAllowAlways},
		{OptionId: "no", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		{OptionId: "never", Name: "Reject always", Kind: acp.PermissionOptionKindRejectAlways},
	}
	if die {
		// The process ends here, whatever it was doing: nothing to wait for.
		go func() {
			_ = pause(t.m.ctx, 200*time.Millisecond)
			t.m.log.Error("dying while a permission request waits (scenario permission-kinds die)")
			os.Exit(3)
		}()
	}
	resp, err := t.m.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{
		SessionId: t.sid,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: acp.Ptr(acp.ToolKindExecute)},
		Options:   options,
	})
	if err != nil {
		return err
	}
	if resp.Outcome.Cancelled != nil {
		return errWithdrawn
	}
	for _, o := range options {
		if resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == o.OptionId {
			status := acp.ToolCallStatusFailed
			if strings.HasPrefix(string(o.Kind), "allow") {
				status = acp.ToolCallStatusCompleted
			}
			if err := t.send(t.ctx, acp.UpdateToolCall(id, acp.WithUpdateStatus(status))); err != nil {
				return err
			}
			return t.say("chose " + string(o.Kind))
		}
	}
	return t.say("chose an option it never offered")
}

// plan works through an n-step plan, gap apart: each step in turn goes in
// progress, then completed, each change a whole new plan as ACP sends it.
// With the last step in progress it asks permission to finish (options
// "allow" and "reject"), so a test can look at the plan while the turn
// waits on the person rather than on the clock; allowed, it completes the
// step and answers "planned N steps", rejected "stopped at step N".
func (t *turn) plan(n int, gap time.Duration) error {
	if n < 1 {
		return acp.NewInvalidParams(map[string]any{"error": "usage: /scenario plan N [MS] with N at least 1"})
	}
	steps := make([]acp.PlanEntry, n)
	for i := range steps {
		steps[i] = acp.PlanEntry{Content: "Step " + strconv.Itoa(i+1), Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusPending}
	}
	send := func() error {
		if err := t.send(t.ctx, acp.UpdatePlan(append([]acp.PlanEntry(nil), steps...)...)); err != nil {
			return err
		}
		return pause(t.ctx, gap)
	}
	if err := send(); err != nil {
		return err
	}
	for i := range steps {
		steps[i].Status = acp.PlanEntryStatusInProgress
		if err := send(); err != nil {
			return err
		}
		if i == n-1 {
			break
		}
		steps[i].Status = acp.PlanEntryStatusCompleted
	}
	title := "Finish the plan"
	resp, err := t.m.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{
		SessionId: t.sid,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(t.msg + "-finish"), Title: &title},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Finish", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Stop", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	switch {
	case err != nil:
		return err
	case resp.Outcome.Cancelled != nil:
		return errWithdrawn
	case resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId != "allow":
		return t.say("stopped at step " + strconv.Itoa(n))
	}
	steps[n-1].Status = acp.PlanEntryStatusCompleted
	if err := send(); err != nil {
		return err
	}
	return t.say("planned " + strconv.Itoa(n) + " steps")
}

// permissionPair asks two permissions at once, for two execute calls, as
// an agent running tools in parallel does, and logs to stderr how each was
// answered ("permission answered" with tool and outcome: the option id, or
// cancelled), so a test can see what the client told it. It answers
// "chose A and B" once both are chosen; a cancelled one ends the turn
// cancelled.
func (t *turn) permissionPair() error {
	ids := []acp.ToolCallId{acp.ToolCallId(t.msg + "-left"), acp.ToolCallId(t.msg + "-right")}
	for _, id := range ids {
		if err := t.send(t.ctx, acp.StartToolCall(id, "Run "+string(id), acp.WithStartKind(acp.ToolKindExecute),
			acp.WithStartStatus(acp.ToolCallStatusPending))); err != nil {
			return err
		}
	}
	outcomes := make([]string, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			title := "Run " + string(id)
			// Asked on the process's context, not the turn's: after a
			// session/cancel the agent still waits for the client's
			// answers, as ACP has it, so it sees what they were.
			resp, err := t.m.conn.RequestPermission(t.m.ctx, acp.RequestPermissionRequest{
				SessionId: t.sid,
				ToolCall:  acp.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: acp.Ptr(acp.ToolKindExecute)},
				Options: []acp.PermissionOption{
					{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
					{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
				},
			})
			switch {
			case err != nil:
				errs[i] = err
				outcomes[i] = "error"
			case resp.Outcome.Cancelled != nil:
				outcomes[i] = "cancelled"
			case resp.Outcome.Selected != nil:
				outcomes[i] = string(resp.Outcome.Selected.OptionId)
			}
			t.m.log.Info("permission answered", "tool", string(id), "outcome", outcomes[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if slices.Contains(outcomes, "cancelled") {
		return errWithdrawn
	}
	return t.say("chose " + outcomes[0] + " and " + outcomes[1])
}
