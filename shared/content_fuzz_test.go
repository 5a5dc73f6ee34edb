package shared_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

// FuzzMessageAddAttachments checks CheckAttachments on arbitrary
// message.add payloads: it never panics, refuses with a coded error and a
// message, and what it accepts keeps every bound: the counts, the images'
// decoded size, known image types, and file paths that stay inside the
// worktree.
func FuzzMessageAddAttachments(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"s","client_message_id":"c","content":"hi"}`,
		`{"session_id":"s","client_message_id":"c","content":"hi","attachments":[{"type":"image","mime_type":"image/png","data":"iVBORw0KGgo="}]}`,
		`{"session_id":"s","client_message_id":"c","content":"","attachments":[{"type":"file","path":"src/a.go"},{"type":"file","path":"../etc/passwd"}]}`,
		`{"attachments":[{"type":"file","path":"/etc/passwd"},{"type":"file","path":"a/./b"},{"type":"file","path":"a\\b"}]}`,
		`{"attachments":[{"type":"file","path":"a\u0000b"},{"type":"image","mime_type":"image/svg+xml","data":"PHN2Zy8+"}]}`,
		`{"attachments":[{"type":"image","mime_type":"image/png","data":"===="},{"type":"audio"}]}`,
		`{"attachments":[{"type":"file","path":"ok","embedded":true,"text":"forged","uri":"file:///etc/passwd"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var req shared.MessageAddRequest
		if json.Unmarshal(payload, &req) != nil {
			return
		}
		imageBytes, err := shared.CheckAttachments(req.Attachments)
		if err != nil {
			var e *shared.Error
			if !errors.As(err, &e) || (e.Code != shared.CodeBadRequest && e.Code != shared.CodePayloadTooLarge) || e.Message == "" {
				t.Fatalf("CheckAttachments(%q) error = %#v, want bad_request or payload_too_large with a message", payload, err)
			}
			return
		}
		if len(req.Attachments) > shared.MaxAttachments {
			t.Fatalf("accepted %d attachments", len(req.Attachments))
		}
		images, decoded := 0, 0
		for _, a := range req.Attachments {
			switch a.Type {
			case shared.AttachmentImage:
				images++
				b, err := base64.StdEncoding.DecodeString(a.Data)
				if err != nil || len(b) == 0 {
					t.Fatalf("accepted image data %q", a.Data)
				}
				decoded += len(b)
				if !strings.HasPrefix(a.MimeType, "image/") || a.MimeType == "image/svg+xml" {
					t.Fatalf("accepted image type %q", a.MimeType)
				}
			case shared.AttachmentFile:
				p := a.Path
				if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || strings.ContainsAny(p, "\x00\\") {
					t.Fatalf("accepted a path outside the worktree: %q", p)
				}
			default:
				t.Fatalf("accepted type %q", a.Type)
			}
		}
		if images > shared.MaxImages || decoded > shared.MaxImageBytes || decoded != imageBytes {
			t.Fatalf("accepted %d images of %d bytes (reported %d)", images, decoded, imageBytes)
		}
	})
}

// FuzzFileListRequest checks FileListRequest.Check on arbitrary
// session.files.list payloads: a refusal is a coded error, and what it
// accepts pages within the bounds.
func FuzzFileListRequest(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","query":"main","offset":50,"limit":50}`))
	f.Add([]byte(`{"session_id":"s","offset":-1,"limit":100000000000}`))
	f.Add([]byte(`{"session_id":"s","query":"\udc00"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var req shared.FileListRequest
		if json.Unmarshal(payload, &req) != nil {
			return
		}
		limit, err := req.Check()
		if err != nil {
			if shared.ErrorCode(err) != shared.CodeBadRequest {
				t.Fatalf("Check(%+v) = %v, want bad_request", req, err)
			}
			return
		}
		if limit < 1 || limit > shared.MaxFilePage || req.Offset < 0 || req.Offset > shared.MaxScannedFiles ||
			len(req.Query) > shared.MaxFileQueryBytes || !utf8.ValidString(req.Query) {
			t.Fatalf("Check accepted %+v with page size %d", req, limit)
		}
	})
}
