package review

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// TestMain isolates git and checks for leaked goroutines.
func TestMain(m *testing.M) {
	// The SQLite driver keeps a package-level helper alive.
	os.Exit(gittest.Main(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener")))
}

// unobserved is a Refresher and a Marker for tests that observe neither.
type unobserved struct{}

func (unobserved) RefreshTask(context.Context, string) error { return nil }
func (unobserved) Mark(string)                               {}

// lockedBuffer is a log destination the service's goroutines share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A turn's start records the tree of every repository that can be read,
// each as its worktree is (a clean one's tree is HEAD's), and logs the
// one that cannot; the turn is not held up by it.
func TestTurnStartingRecordsEveryRepositoryItCanRead(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clean, dirty := gittest.Init(t), gittest.Init(t)
	gittest.Write(t, dirty, "draft.txt", "not committed\n")
	ws, err := st.CreateWorkspace(ctx, "W")
	require.NoError(t, err)
	task, err := st.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "t", Repositories: []shared.RepositoryInput{
		{Path: clean, RunInPlace: true}, {Path: t.TempDir(), RunInPlace: true}, {Path: dirty, RunInPlace: true},
	}})
	require.NoError(t, err)
	session, err := st.CreateSession(ctx, task.ID, "mock")
	require.NoError(t, err)
	msg, _, err := st.AddUserMessage(ctx, session.ID, "c-1", "go")
	require.NoError(t, err)
	logs := &lockedBuffer{}
	svc, err := New(Config{Store: st, Git: unobserved{}, Summaries: unobserved{}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	t.Cleanup(svc.Close)

	svc.TurnStarting(ctx, task.ID, session.ID, msg.ID)

	turns, err := st.ReviewTurns(ctx, task.ID, shared.MaxReviewTurns)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	assert.Equal(t, msg.ID, turns[0].TurnID)
	assert.Equal(t, "go", turns[0].Prompt)
	assert.WithinDuration(t, time.Now(), turns[0].StartedAt, time.Minute)
	span, err := st.TurnSpan(ctx, task.ID, task.Repositories[0].ID, msg.ID)
	require.NoError(t, err)
	assert.Equal(t, gittest.Git(t, clean, "rev-parse", "HEAD^{tree}"), span.From, "a clean worktree's tree is HEAD's")
	span, err = st.TurnSpan(ctx, task.ID, task.Repositories[2].ID, msg.ID)
	require.NoError(t, err)
	assert.NotEqual(t, gittest.Git(t, dirty, "rev-parse", "HEAD^{tree}"), span.From, "the untracked file is in the tree")
	assert.Equal(t, "not committed", gittest.Git(t, dirty, "cat-file", "blob", span.From+":draft.txt"))
	assert.Equal(t, "?? draft.txt", gittest.Git(t, dirty, "status", "--porcelain"), "the index is as it was")

	_, err = st.TurnSpan(ctx, task.ID, task.Repositories[1].ID, msg.ID)
	assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "the unreadable repository has no record")
	assert.Contains(t, logs.String(), "record the worktree at a turn's start")
	assert.Contains(t, logs.String(), task.Repositories[1].ID)
}

// The pull request of a task's repository is the stored one of its
// branch and GitHub repository (the open one first, then the newest),
// else the task's link where it can only be this repository's.
func TestPullRequestURLOfARepository(t *testing.T) {
	const branch = "herd/0190a1b2-fix"
	pr := func(repo string, number int, state, head string) store.PullRequest {
		return store.PullRequest{Repository: repo, Number: number, State: state, HeadBranch: head,
			URL: fmt.Sprintf("https://github.com/%s/pull/%d", repo, number)}
	}
	one := shared.Task{Repositories: []shared.TaskRepository{{ID: "a"}}}
	two := shared.Task{Repositories: []shared.TaskRepository{{ID: "a"}, {ID: "b"}}}
	linked := func(task shared.Task, link string) shared.Task { task.PullRequestURL = link; return task }
	tests := []struct {
		name       string
		task       shared.Task
		prs        []store.PullRequest
		repository string
		want       string
	}{
		{"none", one, nil, "o/r", ""},
		{"the branch's", two, []store.PullRequest{pr("o/r", 1, store.PullRequestOpen, "other"), pr("o/r", 2, store.PullRequestOpen, branch)}, "o/r", "https://github.com/o/r/pull/2"},
		{"the repository's, in any case", two, []store.PullRequest{pr("x/y", 1, store.PullRequestOpen, branch), pr("O/R", 2, store.PullRequestClosed, branch)}, "o/r", "https://github.com/O/R/pull/2"},
		{"the open one first", two, []store.PullRequest{pr("o/r", 3, store.PullRequestClosed, branch), pr("o/r", 2, store.PullRequestOpen, branch)}, "o/r", "https://github.com/o/r/pull/2"},
		{"then the newest", two, []store.PullRequest{pr("o/r", 2, store.PullRequestClosed, branch), pr("o/r", 3, store.PullRequestClosed, branch)}, "o/r", "https://github.com/o/r/pull/3"},
		{"the branch's whatever the repository when it is not known", two, []store.PullRequest{pr("o/r", 4, store.PullRequestOpen, branch)}, "", "https://github.com/o/r/pull/4"},
		{"the link of a task of one repository", linked(one, "https://github.com/x/y/pull/9"), nil, "", "https://github.com/x/y/pull/9"},
		{"the link naming the repository", linked(two, "https://github.com/O/R/pull/9"), nil, "o/r", "https://github.com/O/R/pull/9"},
		{"not the link naming another", linked(two, "https://github.com/x/y/pull/9"), nil, "o/r", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pullRequestURL(tt.task, tt.prs, tt.repository, branch))
		})
	}
}

// A commit or push runs under a context that the end of its request does
// not cut and Close does: git is not killed mid-write because a client
// went away, and still ends at shutdown.
func TestGitWritesOutliveTheirRequestButNotClose(t *testing.T) {
	svc, err := New(Config{Store: &store.Store{}, Git: unobserved{}, Summaries: unobserved{}})
	require.NoError(t, err)
	request, cancel := context.WithCancel(context.Background())
	lasting, stop := svc.lasting(request)
	defer stop()
	cancel()
	require.NoError(t, lasting.Err(), "the request's end does not cut the write")

	done, stopDone := svc.lasting(context.Background())
	defer stopDone()
	svc.Close()
	<-done.Done()
	assert.ErrorIs(t, done.Err(), context.Canceled, "Close does")
	<-lasting.Done()
}
