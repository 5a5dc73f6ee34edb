package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// renderSessionPane draws the selected task's sessions: the session tabs
// with the start button, then the open session. Every piece of user or
// agent text is a text node; attributes carry only ids and enum values.
func (v *sessionView) renderSessionPane() app.UI {
	profiles := v.shell.store.AgentProfiles()
	return app.Div().Class("session-pane").Body(
		app.Div().Class("session-bar").Body(
			app.If(len(v.sessions) > 0, func() app.UI {
				return app.Ul().Class("session-tabs").Body(
					app.Range(v.sessions).Slice(func(i int) app.UI {
						s := v.sessions[i]
						b := app.Button().Class("session-tab").Type("button").DataSet("session-id", s.ID).OnClick(v.onOpenSession(s.ID)).
							Text(fmt.Sprintf("Session %d · %s", i+1, state.SessionIndicator(s).Label()))
						if s.ID == v.openID {
							b = b.Aria("current", "true")
						}
						return app.Li().Body(b)
					}),
				)
			}),
			app.Span().Class("session-new").Body(
				app.Label().For("session-profile").Class("visually-hidden").Text("Agent profile"),
				app.Select().ID("session-profile").OnChange(v.onProfile).Body(
					app.Range(profiles).Slice(func(i int) app.UI {
						p := profiles[i]
						o := app.Option().Value(p.ID).Text(p.Name)
						switch {
						case !p.Available:
							// Named with what it lacks, and not choosable.
							o = app.Option().Value(p.ID).Text(p.Name + " (unavailable)").Title(p.Missing).Disabled(true)
						case len(p.AuthRequired) > 0:
							o = o.Text(p.Name + " (needs authentication)").Title(authHint(p.AuthRequired))
						}
						if p.ID == v.profileID {
							o = o.Selected(true)
						}
						return o
					}),
				),
				busyButton("session-start", "Start session", "Starting…", v.starting).OnClick(v.onStart),
			),
		),
		app.If(v.listErr != "", func() app.UI {
			return app.P().Class("banner", "banner-error").Role("alert").Text("Could not list sessions: " + v.listErr)
		}),
		app.If(v.err != "", func() app.UI {
			return app.P().Class("banner", "banner-error").Role("alert").Text(v.err)
		}),
		app.If(v.detail != nil, v.renderOpenSession).
			ElseIf(len(v.sessions) == 0 && v.listErr == "", func() app.UI {
				return app.P().Class("muted").Text("No session yet. Start one to put an agent to work on this task.")
			}),
	)
}

// renderOpenSession draws the open session: state, transcript, queue and
// composer.
func (v *sessionView) renderOpenSession() app.UI {
	d := v.detail
	sess := d.Session()
	msgs := d.Messages()
	queue := d.Queue()
	shown := make(map[string]bool, len(msgs)+len(queue))
	for _, m := range msgs {
		if m.ClientMessageID != "" {
			shown[m.ClientMessageID] = true
		}
	}
	for _, q := range queue {
		shown[q.ClientMessageID] = true
	}
	return app.Section().
		ID("session-view").
		Class("session-view").
		DataSet("session-id", d.ID()).
		DataSet("state", string(sess.State)).
		Aria("label", "Session").
		Body(
			app.Div().Class("session-head").Body(
				renderSessionState(sess),
				app.If(sess.State == shared.SessionRunning, func() app.UI {
					return app.Button().ID("session-cancel").Class("text-button", "danger").Type("button").OnClick(v.onCancel).Text("Cancel")
				}),
			),
			app.If(sess.ErrorMessage != "", func() app.UI {
				return app.P().Class("banner", "banner-error").Role("alert").Text("Session failed: " + sess.ErrorMessage)
			}),
			app.If(!d.Loaded(), func() app.UI {
				return app.P().Class("muted").Text("Loading the transcript…")
			}),
			app.Div().Class("transcript").Role("log").Aria("live", "polite").Body(
				app.Range(msgs).Slice(func(i int) app.UI { return v.renderMessage(msgs[i]) }),
				v.renderOutgoing(shown),
			),
			app.If(len(queue) > 0, func() app.UI {
				return app.Section().Class("queue").Aria("label", "Queued prompts").Body(
					app.H3().Class("queue-title").Text(queuedPrompts(len(queue))),
					app.Ul().Class("queue-list").Body(
						app.Range(queue).Slice(func(i int) app.UI {
							q := queue[i]
							return app.Li().Class("queue-item").DataSet("queue-id", q.ID).Body(
								app.Span().Class("queue-text").Text(q.Content),
								app.Button().Class("text-button", "queue-remove").Type("button").Aria("label", "Remove from queue").
									OnClick(v.onQueueRemove(q.ID)).Text("Remove"),
							)
						}),
					),
				)
			}),
			v.renderComposer(),
		)
}

// renderMessage draws one transcript entry by its type.
func (v *sessionView) renderMessage(m shared.Message) app.UI {
	el := app.Div().
		Class("message", "message-"+string(m.Type)).
		DataSet("message-id", m.ID).
		DataSet("type", string(m.Type)).
		DataSet("status", string(m.Status))
	switch m.Type {
	case shared.MessageThinking:
		return el.Body(app.Details().Class("thinking").Body(
			app.Summary().Text(reasoningLabel(m)),
			app.Div().Class("message-text").Text(m.Content),
		), cutOff(m))
	case shared.MessageToolCall:
		return el.Body(v.renderTool(m))
	case shared.MessagePermissionRequest:
		return el.Body(v.renderPermission(m))
	case shared.MessageClarificationRequest:
		return el.Body(v.renderClarification(m))
	case shared.MessageError:
		return el.Role("alert").Body(app.Div().Class("message-text", "error-text").Text(m.Content))
	case shared.MessagePlan:
		return el.Body(
			app.Div().Class("message-label").Text("Plan"),
			app.Div().Class("message-text", "plan-text").Text(m.Content),
		)
	default:
		return el.Body(app.Div().Class("message-text").Text(m.Content), cutOff(m))
	}
}

// cutOff notes a streamed message that ended before its agent finished it:
// failed when the agent died (or herd did, and found it streaming when it
// started again), cancelled when herd stopped the agent. Nothing for a
// message that ended normally.
func cutOff(m shared.Message) app.UI {
	switch m.Status {
	case shared.MessageFailed:
		return app.P().Class("message-note").Text("Cut off: the agent stopped before it finished this message.")
	case shared.MessageCancelled:
		return app.P().Class("message-note").Text("Stopped before the agent finished this message.")
	}
	return nil
}

func reasoningLabel(m shared.Message) string {
	if m.Status == shared.MessageStreaming {
		return "Reasoning…"
	}
	return "Reasoning"
}

// renderTool draws a tool call card with its collapsible input and output.
func (v *sessionView) renderTool(m shared.Message) app.UI {
	meta := metadataOf(m)
	input, output := meta.Input, meta.Output
	return app.Div().Class("card", "tool-card").Body(
		app.Div().Class("card-head").Body(
			app.Span().Class("tool-title").Text(m.Content),
			app.Span().Class("badge", "badge-"+string(m.Status)).Text(statusWords(m.Status)),
		),
		app.If(input != "", func() app.UI {
			return app.Details().Class("tool-io").Body(app.Summary().Text("Input"), app.Pre().Text(input))
		}),
		app.If(output != "", func() app.UI {
			return app.Details().Class("tool-io").Body(app.Summary().Text("Output"), app.Pre().Text(output))
		}),
	)
}

// renderPermission draws a permission request with one button per option;
// once answered it says which option was chosen.
func (v *sessionView) renderPermission(m shared.Message) app.UI {
	meta := metadataOf(m)
	opts, selected := meta.Options, meta.SelectedOptionID
	pending := m.Status == shared.MessagePending
	return app.Div().Class("card", "permission-card").Body(
		app.Div().Class("card-head").Body(
			app.Span().Class("card-kind").Text("Permission"),
			app.Span().Class("badge", "badge-"+string(m.Status)).Text(statusWords(m.Status)),
		),
		app.P().Class("message-text").Text(m.Content),
		app.Div().Class("permission-options").Body(
			app.Range(opts).Slice(func(i int) app.UI {
				o := opts[i]
				b := app.Button().Class("permission-option").Type("button").DataSet("option-id", o.OptionID).
					OnClick(v.onPermission(m.PendingID, o.OptionID)).Text(orText(o.Name, o.OptionID))
				if o.OptionID == selected {
					b = b.Class("chosen").Aria("pressed", "true")
				}
				if !pending {
					b = b.Disabled(true)
				}
				return b
			}),
		),
	)
}

// renderClarification draws a question with an answer box while it waits.
func (v *sessionView) renderClarification(m shared.Message) app.UI {
	pending := m.Status == shared.MessagePending
	answer := metadataOf(m).Answer
	return app.Div().Class("card", "clarification-card").Body(
		app.Div().Class("card-head").Body(
			app.Span().Class("card-kind").Text("Question"),
			app.Span().Class("badge", "badge-"+string(m.Status)).Text(statusWords(m.Status)),
		),
		app.P().Class("message-text").Text(m.Content),
		app.If(pending, func() app.UI {
			return app.Form().Class("clarification-form").OnSubmit(v.onClarify(m.PendingID)).Body(
				app.Textarea().Class("clarification-answer").Rows(2).Aria("label", "Your answer").
					OnInput(v.onAnswerInput(m.PendingID)),
				app.Button().Class("primary-button").Type("submit").Text("Answer"),
			)
		}).ElseIf(answer != "", func() app.UI {
			return app.P().Class("clarification-given").Body(app.Text("Answered: "), app.Span().Text(answer))
		}),
	)
}

func (v *sessionView) onPermission(pendingID, optionID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		req := shared.PermissionRespondRequest{SessionID: v.openID, PendingID: pendingID, OptionID: optionID}
		v.act(ctx, shared.ActionPermissionRespond, req, "Could not answer the permission request")
	}
}

func (v *sessionView) onAnswerInput(pendingID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		v.answers[pendingID] = ctx.JSSrc().Get("value").String()
	}
}

func (v *sessionView) onClarify(pendingID string) app.EventHandler {
	return func(ctx app.Context, e app.Event) {
		e.PreventDefault()
		answer := v.answers[pendingID]
		if strings.TrimSpace(answer) == "" {
			return
		}
		req := shared.ClarificationRespondRequest{SessionID: v.openID, PendingID: pendingID, Answer: answer}
		v.act(ctx, shared.ActionClarificationRespond, req, "Could not send the answer")
	}
}

func (v *sessionView) onQueueRemove(queueID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		req := shared.QueueRemoveRequest{SessionID: v.openID, QueueID: queueID}
		v.act(ctx, shared.ActionMessageQueueRemove, req, "Could not remove the queued prompt")
	}
}

func (v *sessionView) onCancel(ctx app.Context, _ app.Event) {
	v.act(ctx, shared.ActionSessionCancel, shared.SessionRef{SessionID: v.openID}, "Could not cancel")
}

// act sends a request whose effect arrives through the session stream;
// only a failure is shown.
func (v *sessionView) act(ctx app.Context, action string, req any, failure string) {
	ctx = v.ui()
	v.err = ""
	ctx.Async(func() {
		err := v.client().Request(context.Background(), action, req, nil)
		if err == nil {
			return
		}
		ctx.Dispatch(func(app.Context) { v.err = failure + ": " + describeAction(err) })
	})
}

// describeAction explains a failed session action.
func describeAction(err error) string {
	if lostConnection(err) {
		return "the connection dropped; check the transcript once it is back."
	}
	return describe(err)
}

// authHint lists an agent's auth methods and the variables that would
// satisfy them.
func authHint(methods []shared.AuthMethod) string {
	parts := make([]string, len(methods))
	for i, m := range methods {
		parts[i] = m.Name
		if len(m.Vars) > 0 {
			parts[i] += ": set " + strings.Join(m.Vars, " or ")
		}
	}
	return "Sign in: " + strings.Join(parts, "; ")
}

// metadataOf returns a message's metadata; none reads as empty.
func metadataOf(m shared.Message) shared.MessageMetadata {
	if m.Metadata == nil {
		return shared.MessageMetadata{}
	}
	return *m.Metadata
}

func orText(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// renderSessionState shows a session's state with the task rows'
// indicators (generating, working in the background, waiting, failed…)
// and, while subagents run, how many.
func renderSessionState(sess shared.Session) app.UI {
	ind := state.SessionIndicator(sess)
	n := sess.ActiveSubagentCount
	return app.Span().
		ID("session-state").
		Class("session-state", "session-state-"+string(ind)).
		Role("status").
		Body(
			stateIconBeside(ind),
			app.Span().Class("session-state-label").Text(ind.Label()),
			app.If(n > 0, func() app.UI {
				return app.Span().Class("subagents").Text(plural(n, "subagent", "subagents"))
			}),
			app.If(sess.ContextLost != "", func() app.UI {
				return app.Span().Class("context-lost").Title(sess.ContextLost).
					Text("Context not restored: the agent does not remember earlier turns")
			}),
		)
}

// statusWords names a message status for people.
func statusWords(s shared.MessageState) string {
	switch s {
	case shared.MessageStreaming:
		return "running"
	case shared.MessagePending:
		return "waiting"
	case "":
		return "unknown"
	default:
		return string(s)
	}
}
