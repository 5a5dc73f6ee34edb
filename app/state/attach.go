package state

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/herd-dev/herd/shared"
)

// Attachments are what the composer will send with the next prompt:
// images pasted or picked, and files mentioned with @, in the order they
// were added. They keep message.add's bounds (shared.CheckAttachments) as
// they are added, so a prompt that shows its attachments can send them;
// what does not fit is refused with words for the person, and what was
// added already stays.
type Attachments struct {
	list []shared.Attachment
	// imageBytes is the decoded size of the images held.
	imageBytes int
}

// List returns the attachments held; callers must not modify it.
func (a *Attachments) List() []shared.Attachment { return a.list }

// Len returns how many attachments are held.
func (a *Attachments) Len() int { return len(a.list) }

// AddImage adds an image of type mime with the given bytes, named name
// (a file name, or empty for a pasted one), unless caps do not take
// images or it would go past a bound.
func (a *Attachments) AddImage(caps *shared.PromptCapabilities, name, mime string, data []byte) error {
	switch {
	case caps == nil || !caps.Image:
		return attachError("This agent does not take images.")
	case !slices.Contains(shared.ImageTypes, mime):
		return attachError("Only PNG, JPEG, GIF and WebP images can be attached.")
	case len(data) == 0:
		return attachError("The image is empty.")
	case len(a.list) >= shared.MaxAttachments:
		return attachError("A prompt takes at most " + strconv.Itoa(shared.MaxAttachments) + " attachments.")
	case a.images() >= shared.MaxImages:
		return attachError("A prompt takes at most " + strconv.Itoa(shared.MaxImages) + " images.")
	case a.imageBytes+len(data) > shared.MaxImageBytes:
		return attachError("Images of one prompt take at most " + strconv.Itoa(shared.MaxImageBytes>>10) +
			" KiB together; this one is " + strconv.Itoa((len(data)+1023)>>10) + " KiB and " +
			strconv.Itoa(a.imageBytes>>10) + " KiB are attached.")
	}
	a.list = append(a.list, shared.Attachment{
		Type: shared.AttachmentImage, Name: name, MimeType: mime,
		Data: base64.StdEncoding.EncodeToString(data), Size: int64(len(data)),
	})
	a.imageBytes += len(data)
	return nil
}

// AddFile adds the worktree file path; a file already held is not added
// twice.
func (a *Attachments) AddFile(path string) error {
	if err := shared.CheckWorktreePath(path); err != nil {
		return attachError("That path is not a file of the worktree.")
	}
	for _, x := range a.list {
		if x.Type == shared.AttachmentFile && x.Path == path {
			return nil
		}
	}
	if len(a.list) >= shared.MaxAttachments {
		return attachError("A prompt takes at most " + strconv.Itoa(shared.MaxAttachments) + " attachments.")
	}
	a.list = append(a.list, shared.Attachment{Type: shared.AttachmentFile, Path: path, Name: baseName(path)})
	return nil
}

// Remove drops the attachment at i; an index out of range changes
// nothing.
func (a *Attachments) Remove(i int) {
	if i < 0 || i >= len(a.list) {
		return
	}
	if a.list[i].Type == shared.AttachmentImage {
		a.imageBytes -= int(a.list[i].Size)
	}
	a.list = slices.Delete(a.list, i, i+1)
}

// Take returns the attachments for sending and empties the composer's.
func (a *Attachments) Take() []shared.Attachment {
	out := a.list
	a.list, a.imageBytes = nil, 0
	return out
}

func (a *Attachments) images() int {
	n := 0
	for _, x := range a.list {
		if x.Type == shared.AttachmentImage {
			n++
		}
	}
	return n
}

// Resendable returns a stored prompt's attachments as message.add takes
// them again (a Retry): what the person attached, without what the server
// added when it resolved them, so a file is read afresh.
func Resendable(stored []shared.Attachment) []shared.Attachment {
	out := make([]shared.Attachment, 0, len(stored))
	for _, a := range stored {
		switch a.Type {
		case shared.AttachmentImage:
			out = append(out, shared.Attachment{Type: a.Type, Name: a.Name, MimeType: a.MimeType, Data: a.Data})
		case shared.AttachmentFile:
			out = append(out, shared.Attachment{Type: a.Type, Path: a.Path})
		}
	}
	return out
}

// ImageSource is the data: URL that shows an image attachment, or "" when
// it is not an image herd shows: its type is not one of shared.ImageTypes
// or its data is not plain base64. The URL goes into an attribute, so
// nothing else may reach it.
func ImageSource(a shared.Attachment) string {
	if a.Type != shared.AttachmentImage || !slices.Contains(shared.ImageTypes, a.MimeType) || a.Data == "" {
		return ""
	}
	for i := 0; i < len(a.Data); i++ {
		c := a.Data[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return ""
		}
	}
	return "data:" + a.MimeType + ";base64," + a.Data
}

// AttachmentLabel names an attachment on its chip: a file's path, an
// image's name or "image".
func AttachmentLabel(a shared.Attachment) string {
	switch {
	case a.Type == shared.AttachmentFile:
		return a.Path
	case a.Name != "":
		return a.Name
	}
	return "image"
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// attachError is a refusal to attach, in words for the person.
type attachError string

func (e attachError) Error() string { return string(e) }

// frameMargin is room left in a frame for the envelope around a
// message.add's payload (id, type, action, seq, ts).
const frameMargin = 1 << 10

// PromptFits reports, in words for the person, when a message.add would
// not fit one WebSocket frame (shared.MaxFrameBytes): the server would
// close the connection rather than answer, so the composer keeps the
// prompt and says so instead of sending it. Text that JSON escapes
// heavily (control characters) can take six times its size.
func PromptFits(req shared.MessageAddRequest) error {
	b, err := json.Marshal(req)
	if err != nil {
		return attachError("The prompt cannot be encoded: " + err.Error())
	}
	if len(b)+frameMargin > shared.MaxFrameBytes {
		return attachError("The prompt and its attachments take " + strconv.Itoa(len(b)>>10) + " KiB; one message takes at most " +
			strconv.Itoa((shared.MaxFrameBytes-frameMargin)>>10) + " KiB. Remove an image or shorten the text.")
	}
	return nil
}
