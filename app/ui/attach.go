package ui

import (
	"context"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// Element ids of the composer's attachments and completion.
const (
	idAttachInput  = "composer-attach-input"
	idAttachButton = "composer-attach"
	idMentionList  = "mention-list"
)

// composerContent is what the composer sends beside its text: the
// attachments, the @file completion and the last refusal to attach. It
// belongs to the open session and is reset when another opens.
type composerContent struct {
	attach      state.Attachments
	completions state.Completions
	// mention is the mention the caret is at, while completing.
	mention state.Mention
	// caret is the caret's byte offset into the text when the mention was
	// read.
	caret int
	err   string
}

// promptCaps returns what the open session's agent takes in a prompt, nil
// while unknown.
func (v *sessionView) promptCaps() *shared.PromptCapabilities {
	if v.detail == nil {
		return nil
	}
	return v.detail.Session().PromptCapabilities
}

// renderAttachments draws the attachments the next prompt carries, each
// with a remove control (images as thumbnails, files as chips), the button
// that picks images when the agent takes them, and the last refusal.
func (v *sessionView) renderAttachments() app.UI {
	list := v.content.attach.List()
	caps := v.promptCaps()
	takesImages := caps != nil && caps.Image
	return app.Div().Class("composer-attachments").Body(
		app.Ul().Class("attachment-list").Aria("label", "Attachments").Body(
			app.Range(list).Slice(func(i int) app.UI {
				a := list[i]
				label := state.AttachmentLabel(a)
				return app.Li().Class("attachment", "attachment-"+a.Type).DataSet("type", a.Type).Body(
					app.If(state.ImageSource(a) != "", func() app.UI {
						return app.Img().Class("attachment-thumb").Src(state.ImageSource(a)).Alt("Image to send")
					}).Else(func() app.UI {
						return app.Span().Class("attachment-name").Text(label)
					}),
					app.Button().Class("attachment-remove").Type("button").
						Aria("label", "Remove attachment "+strconv.Itoa(i+1)).OnClick(v.onRemoveAttachment(i)).Text("×"),
				)
			}),
		),
		app.If(takesImages, func() app.UI {
			return app.Span().Class("attach-slot").Body(
				app.Input().ID(idAttachInput).Class("visually-hidden").Type("file").
					Accept("image/png,image/jpeg,image/gif,image/webp").Multiple(true).
					Aria("label", "Attach images").OnChange(v.onPickImages),
				app.Button().ID(idAttachButton).Class("text-button", "attach-button").Type("button").
					OnClick(v.onAttachClick).Text("Attach image"),
			)
		}),
		app.If(v.content.err != "", func() app.UI {
			return app.P().ID("attach-error").Class("attach-error").Role("alert").Text(v.content.err)
		}),
	)
}

func (v *sessionView) onRemoveAttachment(i int) app.EventHandler {
	return func(app.Context, app.Event) {
		v.content.attach.Remove(i)
		v.content.err = ""
	}
}

// onAttachClick opens the browser's file picker.
func (v *sessionView) onAttachClick(app.Context, app.Event) {
	if el := app.Window().GetElementByID(idAttachInput); el.Truthy() {
		el.Call("click")
	}
}

// onPickImages reads the picked files and attaches them.
func (v *sessionView) onPickImages(ctx app.Context, _ app.Event) {
	input := ctx.JSSrc()
	files := input.Get("files")
	for i := 0; i < files.Length(); i++ {
		v.readImage(files.Index(i))
	}
	input.Set("value", "")
}

// readImage reads a browser File (or Blob) and attaches it once read. A
// file over the bound, or one the agent cannot take, is refused before it
// is read.
func (v *sessionView) readImage(file app.Value) {
	name, mime, size := "", file.Get("type").String(), file.Get("size").Int()
	if n := file.Get("name"); n.Truthy() {
		name = n.String()
	}
	if caps := v.promptCaps(); caps == nil || !caps.Image {
		v.content.err = "This agent does not take images."
		return
	}
	if size > shared.MaxImageBytes {
		v.content.err = "Images of one prompt take at most " + strconv.Itoa(shared.MaxImageBytes>>10) + " KiB together; " +
			orText(name, "this one") + " is " + strconv.Itoa((size+1023)>>10) + " KiB."
		return
	}
	detail := v.detail
	var then app.Func
	then = app.FuncOf(func(_ app.Value, args []app.Value) any {
		defer then.Release()
		buf := app.Window().Get("Uint8Array").New(args[0])
		data := make([]byte, buf.Length())
		app.CopyBytesToGo(data, buf)
		dispatch(v.ui(), func(app.Context) {
			if v.detail != detail {
				return
			}
			if err := v.content.attach.AddImage(v.promptCaps(), name, mime, data); err != nil {
				v.content.err = err.Error()
				return
			}
			v.content.err = ""
		})
		return nil
	})
	file.Call("arrayBuffer").Call("then", then)
}

// listenForPaste attaches images pasted into the composer. It is the
// browser's own listener, like listenForEnter: the clipboard's files are
// readable only inside the event.
func (v *sessionView) listenForPaste() {
	v.paste = app.FuncOf(func(_ app.Value, args []app.Value) any {
		if len(args) == 0 {
			return nil
		}
		e := args[0]
		if e.Get("target").Get("id").String() != idComposerInput {
			return nil
		}
		files := e.Get("clipboardData").Get("files")
		var images []app.Value
		for i := 0; i < files.Length(); i++ {
			if f := files.Index(i); strings.HasPrefix(f.Get("type").String(), "image/") {
				images = append(images, f)
			}
		}
		if len(images) == 0 {
			return nil // text pastes as usual
		}
		e.Call("preventDefault") // the image, not its file name, is what was pasted
		dispatch(v.ui(), func(app.Context) {
			for _, f := range images {
				v.readImage(f)
			}
		})
		return nil
	})
	app.Window().Get("document").Call("addEventListener", "paste", v.paste)
}

// stopListeningForPaste removes the listener and frees its function.
func (v *sessionView) stopListeningForPaste() {
	app.Window().Get("document").Call("removeEventListener", "paste", v.paste)
	v.paste.Release()
}

// readMention looks for an @ mention at the composer's caret and asks for
// the worktree's files that match it.
func (v *sessionView) readMention(input app.Value) {
	value := input.Get("value").String()
	caret := state.ByteOffset(value, input.Get("selectionStart").Int())
	m, ok := state.MentionAt(value, caret)
	if !ok {
		if v.content.completions.Open() {
			v.content.completions.Close()
		}
		return
	}
	v.content.mention, v.content.caret = m, caret
	n := v.content.completions.Ask(m.Query)
	req := shared.FileListRequest{SessionID: v.openID, Query: m.Query, Limit: state.MaxMentionChoices}
	ctx, detail := v.ui(), v.detail
	ctx.Async(func() {
		var resp shared.FileListResponse
		err := v.client().Request(context.Background(), shared.ActionSessionFilesList, req, &resp)
		dispatch(ctx, func(app.Context) {
			if v.detail != detail {
				return
			}
			if err != nil {
				resp.Files = nil
			}
			v.content.completions.Answer(n, resp.Files)
		})
	})
}

// renderMentions lists the files an @ mention completes to, above the
// composer; empty when no completion is under way.
func (v *sessionView) renderMentions() app.UI {
	c := &v.content.completions
	files := c.Files()
	if !c.Open() {
		return nil
	}
	return app.Ul().ID(idMentionList).Class("mention-list").Role("listbox").Aria("label", "Files of the worktree").Body(
		app.If(len(files) == 0, func() app.UI {
			return app.Li().Class("mention-empty").Text("No matching file")
		}),
		app.Range(files).Slice(func(i int) app.UI {
			return app.Li().Class("mention-choice").Role("option").
				Aria("selected", strconv.FormatBool(i == c.Selected)).
				DataSet("path", files[i]).
				OnClick(v.onPickMention(files[i]), app.EventScope(files[i])).
				Text(files[i])
		}),
	)
}

func (v *sessionView) onPickMention(path string) app.EventHandler {
	return func(app.Context, app.Event) { v.pickMention(path) }
}

// pickMention completes the mention to path in the composer and attaches
// the file.
func (v *sessionView) pickMention(path string) {
	text, caret := v.content.mention.Complete(v.input, v.content.caret, path)
	v.content.completions.Close()
	if err := v.content.attach.AddFile(path); err != nil {
		v.content.err = err.Error()
	}
	v.input = text
	v.drafts.Set(v.taskID, text)
	if el := app.Window().GetElementByID(idComposerInput); el.Truthy() {
		el.Set("value", text)
		// The caret goes after the path.
		units := state.UTF16Len(text[:caret])
		el.Call("setSelectionRange", units, units)
		el.Call("focus")
	}
}

// mentionKey handles a key that completing took: the arrows move the
// highlight, Enter and Tab pick, Escape closes.
func (v *sessionView) mentionKey(key string) {
	c := &v.content.completions
	switch key {
	case "ArrowDown":
		c.Move(1)
	case "ArrowUp":
		c.Move(-1)
	case "Escape":
		c.Close()
	case "Enter", "Tab":
		if path, ok := c.Choice(); ok {
			v.pickMention(path)
		}
	}
}

// completing reports whether key, pressed in the composer, belongs to an
// open @ completion: the arrows and Escape while it is open, Enter and Tab
// while it has a choice to pick.
func (v *sessionView) completing(key string) bool {
	c := &v.content.completions
	switch key {
	case "ArrowDown", "ArrowUp", "Escape":
		return c.Open()
	case "Enter", "Tab":
		_, ok := c.Choice()
		return c.Open() && ok
	}
	return false
}

// renderSentAttachments shows what a prompt carried: images as thumbnails,
// files as chips that say whether their text went along or a link did.
func renderSentAttachments(list []shared.Attachment) app.UI {
	if len(list) == 0 {
		return nil
	}
	return app.Ul().Class("attachment-list", "sent-attachments").Aria("label", "Attachments").Body(
		app.Range(list).Slice(func(i int) app.UI {
			a := list[i]
			label := state.AttachmentLabel(a)
			item := app.Li().Class("attachment", "attachment-"+a.Type).DataSet("type", a.Type)
			if src := state.ImageSource(a); src != "" {
				// The server renders this on the first screen, whose
				// attributes take no user text: the name stays out.
				return item.Body(app.Img().Class("attachment-thumb").Src(src).Alt("Attached image"))
			}
			how := "linked"
			if a.Embedded {
				how = "embedded"
			}
			return item.DataSet("how", how).Title(how).Body(app.Span().Class("attachment-name").Text("@" + label))
		}),
	)
}
