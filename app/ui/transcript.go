package ui

import (
	"context"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/markdown"
	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// transcriptPage is how many older messages each "Show earlier messages"
// fetches. A session opens with the newest messages its snapshot carries
// (100), so a long session opens as fast as a short one; the transcript
// renders every message it holds, new ones appended at its end.
const transcriptPage = 150

// renderSessionPane draws the selected task's sessions: the session tabs
// with the start button, then the open session. Every piece of user or
// agent text is a text node; attributes carry only ids and enum values.
func (v *sessionView) renderSessionPane() app.UI {
	profiles := v.tv.Profiles
	return app.Div().Class("session-pane").Body(
		app.Div().Class("session-bar").Body(
			app.If(len(v.sessions) > 0, func() app.UI {
				return app.Ul().Class("session-tabs").Body(
					app.Range(v.sessions).Slice(func(i int) app.UI {
						s := v.sessions[i]
						b := app.A().Class("session-tab").
							Href(state.Route{TaskID: v.taskID, SessionID: s.ID}.Path()).
							DataSet("session-id", s.ID).
							Text(state.TabTitle(i, v.tabSession(s), v.tabLabel(s)))
						if s.ID == v.openID {
							b = b.Aria("current", "page")
						}
						return app.Li().Body(b)
					}),
				)
			}),
			app.If(len(v.tv.Task.Repositories) > 0, func() app.UI {
				return app.A().ID("session-review").Class("text-button", "session-review").
					Href(state.Route{TaskID: v.taskID, Review: true, SessionID: v.openID}.Path()).
					Text("Review changes")
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
		// One stable slot for the banners: go-app matches children by
		// position, and a banner before the session view that came and
		// went would rebuild the view (its scroll position and the
		// composer's text with it).
		app.Div().Class("session-banners").Body(
			app.If(v.listErr != "", func() app.UI {
				return app.P().Class("banner", "banner-error").Role("alert").Text("Could not list sessions: " + v.listErr)
			}),
			app.If(v.err != "", func() app.UI {
				return app.P().ID("session-error").Class("banner", "banner-error").Role("alert").Text(v.err)
			}),
		),
		app.If(v.detail != nil, v.renderOpenSession).
			ElseIf(len(v.sessions) == 0 && v.listErr == "", func() app.UI {
				return app.P().Class("muted", "session-none").Text("No session yet. Start one to put an agent to work on this task.")
			}),
	)
}

// liveMessages is how many of the newest messages the transcript renders
// as entries of its own; the older ones render as one block, which a
// render of the transcript skips unless one of them changed. A long
// transcript then streams as fast as a short one: a frame compares the
// block's counters instead of thousands of entries. The boundary moves in
// steps of olderStep, so a new message rarely re-renders the block.
const (
	liveMessages = 200
	olderStep    = 100
)

// transcriptView is what the transcript renders, derived once per change
// of the detail rather than once per use in a render.
type transcriptView struct {
	// detail, joins, writes and loaded say what it was derived from: a
	// join resets the detail (its write count starts over), so the join
	// is part of it.
	detail *state.SessionDetail
	joins  uint64
	writes uint64
	loaded bool
	msgs   []shared.Message
	open   []shared.Message
	retry  map[string]string
	// older is how many of msgs the block renders; olderRev changes
	// whenever one of them does.
	older    int
	olderRev uint64
}

// transcript returns the open session's transcript as it renders now.
func (v *sessionView) transcript() *transcriptView {
	d, tr := v.detail, &v.tr
	if tr.detail == d && tr.joins == v.joins && tr.writes == d.Writes() && tr.loaded == d.Loaded() {
		return tr
	}
	if tr.detail != d || tr.joins != v.joins {
		*tr = transcriptView{detail: d, joins: v.joins, olderRev: tr.olderRev + 1}
	}
	tr.writes, tr.loaded = d.Writes(), d.Loaded()
	tr.msgs = d.Messages()
	tr.open = state.OpenRequests(tr.msgs)
	tr.retry = v.retries(tr.msgs)
	older := 0
	if n := len(tr.msgs) - liveMessages; n > 0 {
		older = n / olderStep * olderStep
	}
	lowest := d.TakeLowestChanged()
	if older != tr.older || (older > 0 && lowest > 0 && lowest <= tr.msgs[older-1].Seq) {
		tr.olderRev++
	}
	tr.older = older
	return tr
}

// olderMessages renders the transcript's older messages as one block; see
// liveMessages. Its input is counters, so an unchanged block costs a
// render nothing.
type olderMessages struct {
	app.Compo

	// View is the pane, whose transcript the block renders; it never
	// changes.
	View *sessionView
	// Count is how many of the oldest messages it renders; Rev changes
	// whenever one of them does.
	Count      int
	Rev        uint64
	Promptable bool
}

// Render draws the block's entries.
func (b *olderMessages) Render() app.UI {
	tr := b.View.transcript()
	msgs := tr.msgs[:min(b.Count, len(tr.msgs))]
	return app.Div().Class("transcript-older").Body(
		app.Range(msgs).Slice(func(i int) app.UI {
			m := msgs[i]
			return &messageItem{Msg: m, Retry: tr.retry[m.ID], Promptable: b.Promptable, View: b.View, ToolRev: b.View.tools.Rev(m.ID)}
		}),
	)
}

// tabLabel names a session's state on its tab: the open session's with
// its open requests first, as its header does.
func (v *sessionView) tabLabel(s shared.Session) string {
	if s.ID == v.openID && v.detail != nil {
		return state.HeadlineLabel(state.Headline(v.detail.Session(), v.openRequests()))
	}
	return state.SessionIndicator(s).Label()
}

// tabSession is the copy of a listed session its tab shows: the open
// session's from its detail, which session.info.updated keeps current.
func (v *sessionView) tabSession(s shared.Session) shared.Session {
	if s.ID == v.openID && v.detail != nil {
		return v.detail.Session()
	}
	return s
}

// renderOpenSession draws the open session: its header, the transcript in
// a scroll area of its own, and docked below it the requests the agent
// waits on, the queue and the composer.
func (v *sessionView) renderOpenSession() app.UI {
	d := v.detail
	sess := d.Session()
	tr := v.transcript()
	msgs, open := tr.msgs, tr.open
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
	retry := tr.retry
	promptable := state.Promptable(sess.State)
	older := tr.older
	live := msgs[older:]
	return app.Section().
		ID("session-view").
		Class("session-view").
		DataSet("session-id", d.ID()).
		DataSet("state", string(sess.State)).
		Aria("label", "Session").
		Body(
			app.Div().Class("session-head").Body(
				renderSessionState(sess, open),
				renderSessionFacts(sess),
				v.renderConfig(sess),
				app.If(sess.State == shared.SessionRunning, func() app.UI {
					return app.Button().ID("session-cancel").Class("text-button", "danger").Type("button").OnClick(v.onCancel).Text("Cancel")
				}),
			),
			// Stable slots again (see renderSessionPane): what comes and
			// goes sits inside one, so the transcript and the composer keep
			// their elements.
			app.Div().Class("session-failure").Body(
				app.If(sess.ErrorMessage != "", func() app.UI {
					return plainError("session-failed", "The session stopped: "+failureWords(sess.ErrorMessage), sess.ErrorMessage)
				}),
			),
			app.Div().Class("transcript-frame").Body(
				app.Div().ID(idTranscript).Class("transcript").Role("log").Aria("live", "polite").Aria("label", "Transcript").Body(
					app.Div().Class("transcript-top").Body(
						app.If(!d.Loaded(), func() app.UI {
							return app.P().Class("muted", "transcript-loading").Text("Loading the transcript…")
						}),
						app.If(d.Loaded() && d.HasEarlier(), func() app.UI {
							return busyButton("show-earlier", "Show earlier messages", "Loading earlier messages…", v.earlier.busy).
								Class("show-earlier").OnClick(v.onShowEarlier)
						}),
						app.If(v.earlier.err != "", func() app.UI {
							return app.P().Class("banner", "banner-error").Role("alert").Text("Could not load earlier messages: " + v.earlier.err)
						}),
					),
					app.If(older > 0, func() app.UI {
						return &olderMessages{View: v, Count: older, Rev: tr.olderRev, Promptable: promptable}
					}),
					app.Range(live).Slice(func(i int) app.UI {
						m := live[i]
						return &messageItem{Msg: m, Retry: retry[m.ID], Promptable: promptable, View: v, ToolRev: v.tools.Rev(m.ID)}
					}),
					v.renderOutgoing(shown),
				),
				app.If(v.follow.Unseen(), func() app.UI {
					return app.Button().ID(idJumpLatest).Class("jump-latest").Type("button").
						OnClick(v.onJumpLatest).Text("↓ New output")
				}),
			),
			app.Div().Class("session-dock").Body(
				app.Div().Class("dock-plan").Body(v.renderPlan(msgs, sess)),
				app.Div().Class("dock-requests").Body(v.renderOpenRequests(open)),
				app.Div().Class("dock-queue").Body(app.If(len(queue) > 0, func() app.UI {
					return app.Section().Class("queue").Aria("label", "Queued prompts").Body(
						app.H3().Class("queue-title").Text(queuedPrompts(len(queue))),
						app.Ul().Class("queue-list").Body(
							app.Range(queue).Slice(func(i int) app.UI {
								q := queue[i]
								return app.Li().Class("queue-item").DataSet("queue-id", q.ID).Body(
									app.Span().Class("queue-text").Text(q.Content),
									app.Button().Class("text-button", "queue-remove").Type("button").Aria("label", "Remove from queue").
										OnClick(v.onQueueRemove(q.ID), app.EventScope(q.ID)).Text("Remove"),
								)
							}),
						),
					)
				})),
				v.renderComposer(open),
			),
		)
}

// retries finds, for the marks of turns that did not end normally after
// the last prompt, the prompt a Retry sends again: the turn's own prompt,
// by its message id.
// Marks before a later prompt get none: the person has moved on.
func (v *sessionView) retries(msgs []shared.Message) map[string]string {
	out := make(map[string]string)
	prompts := make(map[string]bool)
	last := -1
	for i, m := range msgs {
		if m.Type == shared.MessageUser {
			prompts[m.ID] = true
			last = i
		}
	}
	for i, m := range msgs {
		if mark := turnMarkOf(m); mark != nil && i > last && prompts[mark.PromptMessageID] {
			out[m.ID] = mark.PromptMessageID
		}
	}
	return out
}

// onShowEarlier fetches the page of messages before the oldest one held.
func (v *sessionView) onShowEarlier(ctx app.Context, _ app.Event) {
	d := v.detail
	if d == nil || v.earlier.busy {
		return
	}
	ctx = v.ui()
	v.earlier = request{busy: true}
	gen := v.joins
	req := shared.MessageListRequest{SessionID: d.ID(), BeforeSeq: d.OldestSeq(), Limit: transcriptPage}
	ctx.Async(func() {
		var resp shared.MessageListResponse
		err := v.client().Request(context.Background(), shared.ActionMessageList, req, &resp)
		dispatch(ctx, func(ctx app.Context) {
			if v.detail != d || v.joins != gen {
				// Reloaded since: this page may not join what is held.
				v.earlier = request{}
				return
			}
			v.earlier.answered(err)
			if err != nil {
				return
			}
			keepDistanceFromEnd(ctx)
			d.Earlier(resp.Messages, resp.HasMore)
		})
	})
}

// messageItem is one transcript entry. Its exported fields are its whole
// input, so go-app re-renders only the entries that changed: a streaming
// message re-renders on every frame, the rest of the transcript does not.
type messageItem struct {
	app.Compo

	Msg shared.Message
	// Retry is the message id of the prompt a turn mark's Retry sends
	// again; empty for none.
	Retry string
	// Promptable says whether the session takes a prompt now.
	Promptable bool
	// View is the pane, for the entry's actions; it never changes.
	View *sessionView
	// ToolRev changes when what a tool call shows of its fetched content
	// does (see state.ToolFetches).
	ToolRev uint64
}

// Render draws the entry by its type.
func (it *messageItem) Render() app.UI {
	m := it.Msg
	el := app.Div().
		Class("message", "message-"+string(m.Type)).
		DataSet("message-id", m.ID).
		DataSet("type", string(m.Type)).
		DataSet("status", string(m.Status))
	switch m.Type {
	case shared.MessageUser:
		return el.Body(app.Div().Class("message-text").Text(m.Content), renderSentAttachments(metadataOf(m).Attachments))
	case shared.MessageAgent:
		// Rendered as Markdown, the text on screen is not the bytes the
		// agent sent; their count is kept for whoever checks them.
		return el.DataSet("bytes", len(m.Content)).Body(app.Div().Class("message-text", "message-markdown").Body(markdown.Render(m.Content)), cutOff(m))
	case shared.MessageThinking:
		return el.Body(app.Details().Class("thinking").Body(
			app.Summary().Text(reasoningLabel(m)),
			app.Div().Class("message-text").Text(m.Content),
		), cutOff(m))
	case shared.MessageToolCall:
		return el.Body(it.renderTool())
	case shared.MessagePermissionRequest:
		return el.Body(it.renderPermission())
	case shared.MessageClarificationRequest:
		return el.Body(it.renderClarification())
	case shared.MessageError:
		// The turn's mark, right after, offers the Retry.
		return el.Body(plainError("", agentErrorWords(m.Content), m.Content))
	case shared.MessagePlan:
		return el.Body(
			app.Div().Class("message-label").Text("Plan"),
			app.Div().Class("message-text", "plan-text").Text(m.Content),
		)
	case shared.MessageStatus:
		if mark := turnMarkOf(m); mark != nil {
			return el.Class("turn-mark", "turn-"+string(mark.Outcome)).DataSet("outcome", string(mark.Outcome)).Body(
				app.Span().Class("turn-mark-text").Text(m.Content),
				it.retryButton(),
			)
		}
		return el.Body(app.Div().Class("message-text").Text(m.Content))
	default:
		return el.Body(app.Div().Class("message-text").Text(m.Content))
	}
}

// retryButton sends the entry's prompt again as a new prompt.
func (it *messageItem) retryButton() app.UI {
	if it.Retry == "" {
		return nil
	}
	b := app.Button().Class("text-button", "turn-retry").Type("button").OnClick(it.onRetry).Text("Retry")
	if !it.Promptable {
		b = b.Disabled(true).Title("The session cannot take a prompt now")
	}
	return b
}

func (it *messageItem) onRetry(ctx app.Context, _ app.Event) {
	it.View.sendPrompt(ctx, it.Retry)
}

// renderPermission draws a permission request in the transcript: while it
// waits, a pointer to the card docked above the composer, which holds its
// choices; once answered, which option was chosen, in its kind's colour.
func (it *messageItem) renderPermission() app.UI {
	m := it.Msg
	choice := state.ChosenOption(m)
	outcome := app.P().Class("card-outcome").Text(choice.Words)
	if m.Status == shared.MessagePending {
		outcome = app.P().Class("card-waiting").Text(choice.Words)
	} else if choice.Kind != "" {
		outcome = outcome.Class("option-"+state.OptionTone(choice.Kind)).DataSet("kind", choice.Kind)
	}
	return app.Div().Class("card", "permission-card").Body(
		app.Div().Class("card-head").Body(
			app.Span().Class("card-kind").Text("Permission"),
			app.Span().Class("badge", "badge-"+string(m.Status)).Text(statusWords(m.Status)),
		),
		app.P().Class("message-text").Text(m.Content),
		outcome,
	)
}

// renderClarification draws a question in the transcript with its answer
// once given.
func (it *messageItem) renderClarification() app.UI {
	m := it.Msg
	answer := metadataOf(m).Answer
	return app.Div().Class("card", "clarification-card").Body(
		app.Div().Class("card-head").Body(
			app.Span().Class("card-kind").Text("Question"),
			app.Span().Class("badge", "badge-"+string(m.Status)).Text(statusWords(m.Status)),
		),
		app.P().Class("message-text").Text(m.Content),
		app.If(m.Status == shared.MessagePending, func() app.UI {
			return app.P().Class("card-waiting").Text("Waiting for your answer, below.")
		}).ElseIf(answer != "", func() app.UI {
			return app.P().Class("clarification-given").Body(app.Text("Answered: "), app.Span().Text(answer))
		}),
	)
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

// plainError says what went wrong in plain words, with the agent's or
// server's own text behind a disclosure. id may be empty.
func plainError(id, words, detail string) app.UI {
	el := app.Div().Class("plain-error").Role("alert")
	if id != "" {
		el = el.ID(id)
	}
	return el.Body(
		app.P().Class("plain-error-words").Text(words),
		app.If(detail != "" && detail != words, func() app.UI {
			return app.Details().Class("plain-error-detail").Body(
				app.Summary().Text("Details"),
				app.Pre().Class("error-text").Text(detail),
			)
		}),
	)
}

// jsonRPCWords names the JSON-RPC error codes agents answer a failed
// prompt with.
var jsonRPCWords = map[string]string{
	"-32700": "the agent could not read what herd sent",
	"-32600": "the agent refused herd's request",
	"-32601": "the agent does not support what herd asked for",
	"-32602": "the agent refused the request's parameters",
	"-32603": "the agent hit an internal error",
	"-32000": "the agent needs you to sign in",
	"-32002": "the agent could not find what the request named",
}

// agentErrorWords says in plain words why an agent's turn failed; the raw
// text stays behind the disclosure.
func agentErrorWords(raw string) string {
	for code, words := range jsonRPCWords {
		if strings.Contains(raw, code) {
			return "The turn failed: " + words + "."
		}
	}
	return "The turn failed: the agent reported an error."
}

// failureWords says in plain words why a session stopped.
func failureWords(raw string) string {
	for code, words := range jsonRPCWords {
		if strings.Contains(raw, code) {
			return words + "."
		}
	}
	switch {
	case strings.Contains(raw, "exit status"), strings.Contains(raw, "signal:"):
		return "the agent's process ended."
	case strings.Contains(raw, "executable file not found"), strings.Contains(raw, "no such file"):
		return "the agent's program could not be started."
	}
	return "the agent could not go on."
}

// turnMarkOf returns the mark of a status message that marks a turn that
// did not end normally; nil for any other message.
func turnMarkOf(m shared.Message) *shared.TurnMark {
	if m.Type != shared.MessageStatus || m.Metadata == nil {
		return nil
	}
	return m.Metadata.Turn
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

// renderSessionState shows what a session is doing: an open request
// first ("Needs your permission"), else the task rows' indicators
// (generating, working in the background, waiting, failed…) and, while
// subagents run, how many.
func renderSessionState(sess shared.Session, open []shared.Message) app.UI {
	ind := state.Headline(sess, open)
	n := sess.ActiveSubagentCount
	return app.Span().
		ID("session-state").
		Class("session-state", "session-state-"+string(ind)).
		Role("status").
		Body(
			stateIconBeside(ind),
			app.Span().Class("session-state-label").Text(state.HeadlineLabel(ind)),
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
