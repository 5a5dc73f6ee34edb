package shared

import (
	"fmt"
	"strings"
	"time"
)

// Request actions of review: what a task changed, and finishing the work.
// Diffs are read on request only; nothing of them is pushed to rows or
// sessions.
const (
	// ActionReviewGet returns a task's repositories as review needs them
	// (branch, remote, pull request), the turns whose start was recorded
	// and a draft commit message.
	ActionReviewGet = "review.get"
	// ActionReviewFiles returns one page of a repository's changed files.
	ActionReviewFiles = "review.files"
	// ActionReviewFile returns one page of one file's diff.
	ActionReviewFile = "review.file"
	// ActionReviewCommit commits everything in a repository's worktree.
	ActionReviewCommit = "review.commit"
	// ActionReviewPush pushes a repository's branch to its remote.
	ActionReviewPush = "review.push"
	// ActionReviewPullRequestCreate opens a pull request on GitHub for a
	// repository's branch and links it to the task.
	ActionReviewPullRequestCreate = "review.pull_request.create"
)

// The bounds of review.
const (
	// DefaultReviewFiles and MaxReviewFiles are a files page's default and
	// largest size.
	DefaultReviewFiles = 200
	MaxReviewFiles     = 1000
	// DefaultReviewLines and MaxReviewLines are a file diff page's default
	// and largest size in diff lines; MaxReviewPageBytes bounds a page's
	// text whatever its lines.
	DefaultReviewLines = 1000
	MaxReviewLines     = 5000
	MaxReviewPageBytes = 256 << 10
	// MaxReviewLineBytes bounds one diff line on the wire; a longer line
	// is cut there and marked ReviewHunk.Cut.
	MaxReviewLineBytes = 4 << 10
	// MaxReviewFileBytes bounds the files whose diff is read: a file with
	// a larger side is named (ReviewFileResponse.TooLarge), not sent.
	MaxReviewFileBytes = 8 << 20
	// MaxReviewTurns bounds ReviewGetResponse.Turns: the newest turns.
	MaxReviewTurns = 50
	// MaxCommitMessageBytes bounds a commit message.
	MaxCommitMessageBytes = 16 << 10
	// MaxPullRequestTitleBytes and MaxPullRequestBodyBytes bound a pull
	// request's title and body.
	MaxPullRequestTitleBytes = 256
	MaxPullRequestBodyBytes  = 32 << 10
	// MaxReviewComments bounds the comments one prompt carries, and
	// MaxReviewCommentBytes and MaxReviewQuoteBytes bound each one's text
	// and quoted code; the prompt as a whole must also fit MaxPromptBytes.
	MaxReviewComments     = 50
	MaxReviewCommentBytes = 3 << 10
	MaxReviewQuoteBytes   = 2 << 10
	// MaxReviewPathBytes bounds a path a review request or comment names.
	MaxReviewPathBytes = 4 << 10
)

// The bounds the server gives the review actions that may take longer
// than an ordinary request: each is the longest its steps are allowed, so
// that a step's own bound, whose error says what timed out, ends it first.
// A client waits for their answers that long.
const (
	// ReviewFilesTimeout covers a snapshot of the working tree (a few git
	// commands, each bounded by 30 s) and the listing.
	ReviewFilesTimeout = time.Minute
	// ReviewCommitTimeout covers a commit (2 minutes: staging everything,
	// and hooks that may run the project's checks), then reading the
	// state.
	ReviewCommitTimeout = 3 * time.Minute
	// ReviewPushTimeout covers a push (2 minutes, for slow remotes and
	// large packs), then reading the state.
	ReviewPushTimeout = 3 * time.Minute
	// ReviewPullRequestTimeout covers reading the state, GitHub's answer
	// (30 s at most) and storing the pull request.
	ReviewPullRequestTimeout = 2 * time.Minute
)

// ReviewScope says which changes a files page lists.
type ReviewScope string

// The review scopes.
const (
	// ReviewScopeTask is everything the task changed: from the merge base
	// with the base branch to the working tree, committed, staged,
	// unstaged and untracked (not ignored) alike.
	ReviewScopeTask ReviewScope = "task"
	// ReviewScopeTurn is what one turn changed: from the worktree recorded
	// when the turn started to the one recorded when the repository's next
	// recorded turn of the task started, or to the working tree for the
	// newest turn.
	ReviewScopeTurn ReviewScope = "turn"
)

// The statuses of a changed file.
const (
	FileAdded    = "added"
	FileModified = "modified"
	FileDeleted  = "deleted"
	FileRenamed  = "renamed"
	// FileTypeChanged is a file that became a link, or the reverse.
	FileTypeChanged = "type_changed"
)

// ReviewGetRequest asks for a task's review state.
type ReviewGetRequest struct {
	TaskID string `json:"task_id"`
}

// ReviewGetResponse is a task's review state.
type ReviewGetResponse struct {
	TaskID       string             `json:"task_id"`
	Repositories []ReviewRepository `json:"repositories"`
	// Turns are the task's newest turns whose start was recorded, newest
	// first, at most MaxReviewTurns.
	Turns []ReviewTurn `json:"turns"`
	// SessionID is the task's newest session, where comments go unless
	// the client names another.
	SessionID string `json:"session_id,omitempty"`
	// DraftMessage is the agent's last message of that session, offered
	// as a commit message (at most MaxCommitMessageBytes).
	DraftMessage string `json:"draft_message,omitempty"`
	// PullRequests is true when the server holds a GitHub token, so
	// review.pull_request.create can work.
	PullRequests bool `json:"pull_requests"`
}

// ReviewRepository is one repository of a task as review shows it.
type ReviewRepository struct {
	RepositoryID string `json:"repository_id"`
	Path         string `json:"path"`
	// Dir is where the task's work is: its worktree, or Path itself for a
	// repository run in place.
	Dir        string `json:"dir"`
	Branch     string `json:"branch,omitempty"`
	BaseBranch string `json:"base_branch"`
	// Remote is the remote a push goes to (the branch's upstream remote,
	// else origin, else the only one); empty when there is none.
	Remote string `json:"remote,omitempty"`
	// Upstream is the branch's upstream ("origin/herd/…"); empty before
	// the first push.
	Upstream string `json:"upstream,omitempty"`
	// UpstreamAhead counts the commits a push would send; absent without
	// an upstream.
	UpstreamAhead *int `json:"upstream_ahead,omitempty"`
	// Uncommitted counts the files a commit would take: staged, unstaged
	// and untracked (not ignored).
	Uncommitted int `json:"uncommitted"`
	// Ahead counts the branch's commits that the base branch lacks.
	Ahead int `json:"ahead"`
	// GitHubRepository is OWNER/NAME when the push remote is on the
	// GitHub the server talks to.
	GitHubRepository string `json:"github_repository,omitempty"`
	// PullRequestURL is the pull request linked to the task, if any.
	PullRequestURL string `json:"pull_request_url,omitempty"`
	// Error is why the repository could not be read; the other fields
	// beyond the ids and paths then mean nothing.
	Error string `json:"error,omitempty"`
}

// ReviewTurn is a turn whose start herd recorded.
type ReviewTurn struct {
	// TurnID is the id of the prompt message that started the turn.
	TurnID    string    `json:"turn_id"`
	SessionID string    `json:"session_id"`
	StartedAt time.Time `json:"started_at"`
	// Prompt is the start of the prompt, at most MaxPreviewBytes.
	Prompt string `json:"prompt,omitempty"`
}

// ReviewFilesRequest asks for one page of a repository's changed files.
// The first page names neither From nor To: the server compares the scope's
// start with the working tree as it is now and answers both trees; later
// pages repeat them, with Offset, so that every page lists one comparison
// however the worktree moves meanwhile.
type ReviewFilesRequest struct {
	TaskID       string      `json:"task_id"`
	RepositoryID string      `json:"repository_id"`
	Scope        ReviewScope `json:"scope"`
	// TurnID names the turn of ReviewScopeTurn; empty means the newest.
	TurnID string `json:"turn_id,omitempty"`
	// From and To are the trees of an earlier page's answer.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Offset is the number of files earlier pages listed.
	Offset int `json:"offset,omitempty"`
	// Limit is the page's size: DefaultReviewFiles when zero, at most
	// MaxReviewFiles.
	Limit int `json:"limit,omitempty"`
}

// ReviewFilesResponse is one page of changed files, in path order.
type ReviewFilesResponse struct {
	TaskID       string      `json:"task_id"`
	RepositoryID string      `json:"repository_id"`
	Scope        ReviewScope `json:"scope"`
	TurnID       string      `json:"turn_id,omitempty"`
	// From and To are the trees compared; later pages and file diffs name
	// them.
	From  string       `json:"from"`
	To    string       `json:"to"`
	Files []ReviewFile `json:"files"`
	// Offset is the page's first file's index; Total, Additions and
	// Deletions count the whole comparison.
	Offset    int `json:"offset"`
	Total     int `json:"total"`
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
	// More is true when files follow this page.
	More bool `json:"more,omitempty"`
}

// ReviewFile is one changed file.
type ReviewFile struct {
	// Path is the file's path after the change (before it, for a deleted
	// file); OldPath is its path before a rename.
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	// Status is FileAdded, FileModified, FileDeleted, FileRenamed or
	// FileTypeChanged.
	Status    string `json:"status"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	// Binary files have no lines to count or show.
	Binary bool `json:"binary,omitempty"`
}

// ReviewFileRequest asks for one page of one file's diff between the trees
// of a files page.
type ReviewFileRequest struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id"`
	From         string `json:"from"`
	To           string `json:"to"`
	Path         string `json:"path"`
	// OldPath is the file's path before a rename.
	OldPath string `json:"old_path,omitempty"`
	// Offset is the number of diff lines earlier pages held.
	Offset int `json:"offset,omitempty"`
	// Limit is the page's size in diff lines: DefaultReviewLines when
	// zero, at most MaxReviewLines.
	Limit int `json:"limit,omitempty"`
}

// ReviewFileResponse is one page of a file's diff.
type ReviewFileResponse struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	Status  string `json:"status"`
	// Binary and TooLarge files are named and sized, never sent.
	Binary   bool `json:"binary,omitempty"`
	TooLarge bool `json:"too_large,omitempty"`
	// OldSize and NewSize are the file's sizes in bytes on each side.
	OldSize int64 `json:"old_size"`
	NewSize int64 `json:"new_size"`
	// Hunks hold the page's diff lines; a hunk begun on an earlier page
	// continues here with Continued set.
	Hunks []ReviewHunk `json:"hunks"`
	// Offset is the page's first diff line; NextOffset is where the next
	// page starts, zero when this page ends the diff.
	Offset     int `json:"offset"`
	NextOffset int `json:"next_offset,omitempty"`
}

// ReviewHunk is a run of diff lines under one "@@" header.
type ReviewHunk struct {
	// Header is git's hunk header, "@@ -1,4 +1,5 @@ func main() {".
	Header string `json:"header"`
	// OldStart and NewStart are the line numbers of the first of Lines
	// on each side: of the next line that side holds, for a line the side
	// does not hold.
	OldStart int `json:"old_start"`
	NewStart int `json:"new_start"`
	// Lines are the diff's lines, each with its mark first: ' ' for
	// context, '-' removed, '+' added, '\' for git's "No newline at end
	// of file".
	Lines []string `json:"lines"`
	// Continued says the hunk began on an earlier page.
	Continued bool `json:"continued,omitempty"`
	// Cut says a line was longer than MaxReviewLineBytes and holds only
	// its start.
	Cut bool `json:"cut,omitempty"`
}

// The sides of a commented line range.
const (
	SideOld = "old"
	SideNew = "new"
)

// ReviewComment is a comment on a range of a file's lines, written in
// review and sent to the agent as part of one prompt (see ReviewPrompt).
type ReviewComment struct {
	Path string `json:"path"`
	// Side is SideNew for lines of the changed file, SideOld for lines
	// only the file before the change holds.
	Side      string `json:"side"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	// Code is the commented lines as the diff shows them, with their marks.
	Code string `json:"code,omitempty"`
	Body string `json:"body"`
}

// Check reports what is wrong with a comment, or nil.
func (c ReviewComment) Check() error {
	switch {
	case strings.TrimSpace(c.Path) == "":
		return Errorf(CodeBadRequest, "a comment needs its file's path")
	case c.Side != SideOld && c.Side != SideNew:
		return Errorf(CodeBadRequest, "a comment's side is %q or %q, not %q", SideOld, SideNew, c.Side)
	case c.StartLine < 1 || c.EndLine < c.StartLine:
		return Errorf(CodeBadRequest, "a comment's lines %d–%d are not a range", c.StartLine, c.EndLine)
	case strings.TrimSpace(c.Body) == "":
		return Errorf(CodeBadRequest, "a comment needs its text")
	case len(c.Body) > MaxReviewCommentBytes:
		return Errorf(CodeBadRequest, "a comment is %d bytes; the limit is %d", len(c.Body), MaxReviewCommentBytes)
	case len(c.Code) > MaxReviewQuoteBytes:
		return Errorf(CodeBadRequest, "a comment quotes %d bytes; the limit is %d", len(c.Code), MaxReviewQuoteBytes)
	case len(c.Path) > MaxReviewPathBytes:
		return Errorf(CodeBadRequest, "a comment's path is %d bytes; the limit is %d", len(c.Path), MaxReviewPathBytes)
	}
	return nil
}

// ReviewPrompt writes comments as one prompt for the agent: for each, the
// file and line range, the quoted code and the comment, in the order
// given. It refuses no comments, too many, one that does not Check, or a
// prompt longer than message.add takes.
func ReviewPrompt(comments []ReviewComment) (string, error) {
	switch {
	case len(comments) == 0:
		return "", Errorf(CodeBadRequest, "no comments to send")
	case len(comments) > MaxReviewComments:
		return "", Errorf(CodeBadRequest, "%d comments; at most %d go in one prompt", len(comments), MaxReviewComments)
	}
	var b strings.Builder
	if len(comments) == 1 {
		b.WriteString("Please address this review comment on your changes.\n")
	} else {
		fmt.Fprintf(&b, "Please address these %d review comments on your changes.\n", len(comments))
	}
	for i, c := range comments {
		if err := c.Check(); err != nil {
			return "", err
		}
		lines := fmt.Sprintf("line %d", c.StartLine)
		if c.EndLine > c.StartLine {
			lines = fmt.Sprintf("lines %d-%d", c.StartLine, c.EndLine)
		}
		if c.Side == SideOld {
			lines += " (before the change)"
		}
		fmt.Fprintf(&b, "\n%d. %s, %s\n", i+1, c.Path, lines)
		if code := strings.TrimRight(c.Code, "\n"); code != "" {
			fence := "```"
			for strings.Contains(code, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "%sdiff\n%s\n%s\n", fence, code, fence)
		}
		b.WriteString(strings.TrimSpace(c.Body))
		b.WriteByte('\n')
	}
	if b.Len() > MaxPromptBytes {
		return "", Errorf(CodeBadRequest, "these comments make a prompt of %d bytes; the limit is %d, so send them in parts", b.Len(), MaxPromptBytes)
	}
	return b.String(), nil
}

// ReviewCommitRequest commits everything in a repository's worktree:
// staged, unstaged and untracked (not ignored) changes.
type ReviewCommitRequest struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id"`
	Message      string `json:"message"`
}

// ReviewCommitResponse is a commit made.
type ReviewCommitResponse struct {
	// Commit is the new commit's id.
	Commit     string           `json:"commit"`
	Repository ReviewRepository `json:"repository"`
}

// ReviewPushRequest pushes a repository's branch to its remote, setting
// the branch's upstream.
type ReviewPushRequest struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id"`
}

// ReviewPushResponse is a push done.
type ReviewPushResponse struct {
	// Output is what git said of the push.
	Output     string           `json:"output,omitempty"`
	Repository ReviewRepository `json:"repository"`
}

// ReviewPullRequestCreateRequest opens a pull request from a repository's
// pushed branch into its base branch.
type ReviewPullRequestCreateRequest struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id"`
	Title        string `json:"title"`
	Body         string `json:"body,omitempty"`
	Draft        bool   `json:"draft,omitempty"`
}

// ReviewPullRequestCreateResponse is a pull request opened and linked to
// the task.
type ReviewPullRequestCreateResponse struct {
	URL    string `json:"url"`
	Number int    `json:"number"`
}
