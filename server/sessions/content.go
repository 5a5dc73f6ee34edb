package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// resolveAttachments turns the attachments of a message.add into what the
// agent is sent and the prompt stores: images as they came, once the
// session's agent takes images; each mentioned file of the task's worktree
// as a link to it, or, when the agent takes embedded context and the file
// is UTF-8 text of at most shared.MaxEmbeddedFileBytes, with its text. A
// file is read once, here, so a queued prompt, a retry and a restart send
// what the person saw when they sent it. The fields only the server sets
// are never taken from the request.
func (m *Manager) resolveAttachments(ctx context.Context, session shared.Session, in []shared.Attachment) ([]shared.Attachment, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if _, err := shared.CheckAttachments(in); err != nil {
		return nil, err
	}
	var caps shared.PromptCapabilities
	if session.PromptCapabilities != nil {
		caps = *session.PromptCapabilities
	}
	var root string
	out := make([]shared.Attachment, 0, len(in))
	for i, a := range in {
		switch a.Type {
		case shared.AttachmentImage:
			if !caps.Image {
				return nil, shared.Errorf(shared.CodeBadRequest, "the agent of this session does not take images; send the prompt without them")
			}
			out = append(out, shared.Attachment{
				Type: a.Type, Name: a.Name, MimeType: a.MimeType, Data: a.Data,
				Size: int64(base64Len(a.Data)),
			})
		case shared.AttachmentFile:
			if root == "" {
				dir, err := m.workingDir(ctx, session.TaskID)
				if err != nil {
					return nil, err
				}
				if root, err = filepath.EvalSymlinks(dir); err != nil {
					return nil, fmt.Errorf("resolve worktree: %w", err)
				}
			}
			f, err := worktreeFile(root, a.Path, caps.EmbeddedContext)
			if err != nil {
				return nil, shared.Errorf(shared.CodeBadRequest, "attachment %d: %s", i, err.Error())
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// base64Len is the decoded length of standard base64 text that
// shared.CheckAttachments has accepted.
func base64Len(s string) int {
	n := len(s) / 4 * 3
	return n - strings.Count(s[max(0, len(s)-2):], "=")
}

// worktreeFile describes the regular file rel of the worktree at root (a
// path without symlinks), refusing anything that resolves outside it: a
// symlink that leads out is no way out. With embed, small UTF-8 text is
// read in.
func worktreeFile(root, rel string, embed bool) (shared.Attachment, error) {
	abs, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return shared.Attachment{}, fmt.Errorf("%q is not a file of the worktree", rel)
	}
	if err != nil {
		return shared.Attachment{}, fmt.Errorf("%q cannot be read", rel)
	}
	if inside, err := filepath.Rel(root, abs); err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
		return shared.Attachment{}, fmt.Errorf("%q leads outside the worktree", rel)
	}
	info, err := os.Stat(abs)
	if err != nil || !info.Mode().IsRegular() {
		return shared.Attachment{}, fmt.Errorf("%q is not a regular file", rel)
	}
	a := shared.Attachment{
		Type: shared.AttachmentFile, Path: rel, Name: filepath.Base(abs), Size: info.Size(),
		URI:      (&url.URL{Scheme: "file", Path: abs}).String(),
		MimeType: mimeOf(abs),
	}
	if !embed || info.Size() > shared.MaxEmbeddedFileBytes {
		return a, nil
	}
	f, err := os.Open(abs)
	if err != nil {
		return shared.Attachment{}, fmt.Errorf("%q cannot be read", rel)
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, shared.MaxEmbeddedFileBytes+1))
	if err != nil || len(text) > shared.MaxEmbeddedFileBytes || !utf8.Valid(text) || strings.IndexByte(string(text), 0) >= 0 {
		return a, nil // binary, or grown meanwhile: a link is still good
	}
	a.Embedded, a.Text, a.Size = true, string(text), int64(len(text))
	if a.MimeType == "" {
		a.MimeType = "text/plain"
	}
	return a, nil
}

// mimeOf guesses a file's type from its extension; "" when unknown.
func mimeOf(path string) string {
	t := mime.TypeByExtension(filepath.Ext(path))
	if t == "" {
		return ""
	}
	media, _, err := mime.ParseMediaType(t)
	if err != nil {
		return ""
	}
	return media
}

// ListFiles lists or searches the files of the session's worktree, for
// @file mentions: what `git ls-files` names (tracked files and untracked
// ones not ignored), at most shared.MaxScannedFiles entries, within git's
// own deadline. A task without a git worktree (a scratch directory) has
// no files to offer.
func (m *Manager) ListFiles(ctx context.Context, req shared.FileListRequest) (shared.FileListResponse, error) {
	limit, err := req.Check()
	if err != nil {
		return shared.FileListResponse{}, err
	}
	session, err := m.cfg.Store.GetSession(ctx, req.SessionID)
	if err != nil {
		return shared.FileListResponse{}, err
	}
	dir, err := m.workingDir(ctx, session.TaskID)
	if err != nil {
		return shared.FileListResponse{}, err
	}
	out := shared.FileListResponse{Files: []string{}}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return out, nil
	}
	query := strings.ToLower(req.Query)
	scanned, matched := 0, 0
	runner := gitcli.Runner{Dir: dir, Limit: shared.MaxAttachmentPathBytes * 4}
	err = runner.Stream(ctx, gitcli.ScanNUL, func(token []byte) bool {
		scanned++
		if scanned > shared.MaxScannedFiles {
			out.Partial = true
			return false
		}
		p := string(token)
		if shared.CheckWorktreePath(p) != nil || (query != "" && !strings.Contains(strings.ToLower(p), query)) {
			return true
		}
		matched++
		if matched <= req.Offset {
			return true
		}
		if len(out.Files) == limit {
			out.NextOffset = req.Offset + limit
			return false
		}
		out.Files = append(out.Files, p)
		return true
	}, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate")
	if err != nil {
		m.log.Warn("list worktree files", "session", req.SessionID, "err", err)
		return shared.FileListResponse{}, shared.Errorf(shared.CodeUnavailable, "the worktree's files could not be listed: %v", err)
	}
	return out, nil
}

// keepPromptCapabilities stores what the execution's agent takes in a
// prompt, so a client that reloads knows it and message.add checks
// against it. It publishes nothing itself: the start's move to
// WAITING_FOR_INPUT, right after, carries it in its state event.
func (r *run) keepPromptCapabilities(ctx context.Context, exec *agent.Execution) {
	caps := exec.PromptCapabilities()
	err := r.m.persist(ctx, "store prompt capabilities", r.id, func(ctx context.Context) error {
		_, err := r.m.cfg.Store.SetPromptCapabilities(ctx, r.id, caps)
		return err
	})
	if err != nil {
		r.m.log.Error("store prompt capabilities", "session", r.id, "err", err)
	}
}
