package shared

import (
	"encoding/base64"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// PromptCapabilities says which content beyond text an agent takes in a
// prompt, as its ACP initialize answer advertised it (promptCapabilities).
// Text and resource links every agent takes.
type PromptCapabilities struct {
	// Image says the agent takes image blocks.
	Image bool `json:"image,omitempty"`
	// Audio says the agent takes audio blocks; herd sends none yet.
	Audio bool `json:"audio,omitempty"`
	// EmbeddedContext says the agent takes embedded resources: an @file
	// mention then carries the file's text rather than a link to it.
	EmbeddedContext bool `json:"embedded_context,omitempty"`
}

// Attachment types.
const (
	// AttachmentImage is an image the person pasted or attached; Data holds
	// its bytes in base64 and MimeType its format.
	AttachmentImage = "image"
	// AttachmentFile is a file of the task's worktree the person mentioned
	// with @: Path names it relative to the worktree. herd sends it to the
	// agent as a resource_link, or as an embedded resource (its text) when
	// the agent takes embedded context and the file is small enough.
	AttachmentFile = "file"
)

// Attachment bounds. A message.add frame must fit shared.MaxFrameBytes,
// and a prompt's text alone may take up to 256 KiB of it, so images are
// bounded together to what still fits beside that text once in base64.
const (
	// MaxAttachments bounds the attachments of one prompt.
	MaxAttachments = 8
	// MaxImages bounds the images of one prompt.
	MaxImages = 4
	// MaxImageBytes bounds the decoded bytes of all of a prompt's images
	// together (512 KiB: 683 KiB in base64).
	MaxImageBytes = 512 << 10
	// MaxEmbeddedFileBytes is the largest file herd embeds; a larger one,
	// or one that is not UTF-8 text, goes as a link.
	MaxEmbeddedFileBytes = 64 << 10
	// MaxAttachmentPathBytes bounds a mentioned file's path.
	MaxAttachmentPathBytes = 1024
)

// ImageTypes are the image formats herd accepts, those every ACP agent
// with image support reads.
var ImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// Attachment is one piece of a prompt beyond its text: in message.add what
// the person attached, and on the stored user message (metadata
// attachments) what herd sent to the agent, so that a queued prompt, a
// retry and a restart send the same content.
type Attachment struct {
	// Type is AttachmentImage or AttachmentFile.
	Type string `json:"type"`
	// Name is a label for people: an image's file name, if it had one.
	// For a file it is the path's last element. Optional.
	Name string `json:"name,omitempty"`
	// MimeType is an image's format, one of ImageTypes (image); the file's
	// type when herd knows it (file, stored).
	MimeType string `json:"mime_type,omitempty"`
	// Data is the image's bytes in standard base64 (image).
	Data string `json:"data,omitempty"`
	// Path is the file's path relative to the task's worktree, with
	// forward slashes (file).
	Path string `json:"path,omitempty"`
	// The fields below are set by the server on the stored message and
	// ignored in message.add.

	// URI is the file's file:// URI as the agent sees it (file).
	URI string `json:"uri,omitempty"`
	// Size is the decoded size in bytes of the image or of the file.
	Size int64 `json:"size,omitempty"`
	// Embedded says the file's text went to the agent as an embedded
	// resource (in Text); false means a resource_link.
	Embedded bool `json:"embedded,omitempty"`
	// Text is the embedded file's text (file, Embedded).
	Text string `json:"text,omitempty"`
}

// CheckAttachments checks the shape of a message.add's attachments: their
// types, counts and bounds, that images decode and name a known format,
// and that file paths stay inside the worktree. It returns the images'
// decoded sizes. Whether the files exist, and whether the agent takes
// images, the server checks against the session.
func CheckAttachments(atts []Attachment) (imageBytes int, err error) {
	if len(atts) > MaxAttachments {
		return 0, Errorf(CodePayloadTooLarge, "a prompt takes at most %d attachments; this one has %d", MaxAttachments, len(atts))
	}
	images := 0
	for i, a := range atts {
		switch a.Type {
		case AttachmentImage:
			images++
			if images > MaxImages {
				return 0, Errorf(CodePayloadTooLarge, "a prompt takes at most %d images", MaxImages)
			}
			if !slices.Contains(ImageTypes, a.MimeType) {
				return 0, Errorf(CodeBadRequest, "attachment %d: image type %q is not one of %s", i, a.MimeType, strings.Join(ImageTypes, ", "))
			}
			n, err := base64.StdEncoding.DecodeString(a.Data)
			if err != nil || len(n) == 0 {
				return 0, Errorf(CodeBadRequest, "attachment %d: data is not an image in standard base64", i)
			}
			imageBytes += len(n)
			if imageBytes > MaxImageBytes {
				return 0, Errorf(CodePayloadTooLarge, "a prompt's images take at most %d KiB together", MaxImageBytes>>10)
			}
		case AttachmentFile:
			if err := CheckWorktreePath(a.Path); err != nil {
				return 0, Errorf(CodeBadRequest, "attachment %d: %s", i, err.Error())
			}
		default:
			return 0, Errorf(CodeBadRequest, "attachment %d: type %q is not image or file", i, a.Type)
		}
		if len(a.Name) > MaxAttachmentPathBytes || !utf8.ValidString(a.Name) {
			return 0, Errorf(CodeBadRequest, "attachment %d: name is not UTF-8 of at most %d bytes", i, MaxAttachmentPathBytes)
		}
	}
	return imageBytes, nil
}

// CheckWorktreePath checks that p is a clean path relative to a worktree
// that stays inside it: not empty, not absolute, no "." or ".." elements,
// forward slashes, UTF-8 without NUL, at most MaxAttachmentPathBytes.
func CheckWorktreePath(p string) error {
	switch {
	case p == "":
		return Errorf(CodeBadRequest, "path is required")
	case len(p) > MaxAttachmentPathBytes:
		return Errorf(CodeBadRequest, "path is longer than %d bytes", MaxAttachmentPathBytes)
	case !utf8.ValidString(p) || strings.ContainsAny(p, "\x00\\"):
		return Errorf(CodeBadRequest, "path %q is not a UTF-8 path with forward slashes", p)
	case strings.HasPrefix(p, "/"):
		return Errorf(CodeBadRequest, "path %q is absolute; name files relative to the worktree", p)
	case path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return Errorf(CodeBadRequest, "path %q is not a clean path inside the worktree", p)
	}
	return nil
}

// File listing bounds (session.files.list).
const (
	// MaxFileQueryBytes bounds a listing's query.
	MaxFileQueryBytes = 256
	// DefaultFilePage and MaxFilePage bound one page of a listing.
	DefaultFilePage = 50
	MaxFilePage     = 200
	// MaxScannedFiles bounds the worktree entries one listing reads; a
	// larger worktree is listed in part (FileListResponse.Partial).
	MaxScannedFiles = 100_000
)

// FileListRequest lists or searches the files of a session's worktree,
// for @file mentions: tracked files and untracked ones git does not
// ignore, in git's order.
type FileListRequest struct {
	SessionID string `json:"session_id"`
	// Query keeps the paths that contain it, ignoring case; empty lists
	// every file.
	Query string `json:"query,omitempty"`
	// Offset skips that many matches; the NextOffset of the page before.
	Offset int `json:"offset,omitempty"`
	// Limit defaults to DefaultFilePage, at most MaxFilePage.
	Limit int `json:"limit,omitempty"`
}

// FileListResponse is one page of matching paths, relative to the
// worktree with forward slashes.
type FileListResponse struct {
	Files []string `json:"files"`
	// NextOffset is the Offset of the next page; absent on the last.
	NextOffset int `json:"next_offset,omitempty"`
	// Partial says the worktree has more than MaxScannedFiles entries and
	// only the first of them were searched.
	Partial bool `json:"partial,omitempty"`
}

// Check checks a listing's bounds and returns its page size, the default
// when Limit is zero.
func (r FileListRequest) Check() (limit int, err error) {
	limit = r.Limit
	switch {
	case limit == 0:
		limit = DefaultFilePage
	case limit < 0 || limit > MaxFilePage:
		return 0, Errorf(CodeBadRequest, "limit must be between 1 and %d", MaxFilePage)
	}
	if r.Offset < 0 || r.Offset > MaxScannedFiles {
		return 0, Errorf(CodeBadRequest, "offset must be between 0 and %d", MaxScannedFiles)
	}
	if len(r.Query) > MaxFileQueryBytes || !utf8.ValidString(r.Query) {
		return 0, Errorf(CodeBadRequest, "query must be UTF-8 of at most %d bytes", MaxFileQueryBytes)
	}
	return limit, nil
}
