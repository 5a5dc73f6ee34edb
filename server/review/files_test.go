package review

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// A git that failed under a read reaches the person with git's own
// reason, or with the bound it outlived, not as an internal error; coded
// errors and those of a request that ended pass unchanged.
func TestGitFailureSaysWhatGitSaid(t *testing.T) {
	ctx := context.Background()
	_, err := gitcli.Run(ctx, t.TempDir(), "rev-parse", "HEAD")
	got := gitFailure(ctx, err)
	assert.Equal(t, shared.CodeUnavailable, shared.ErrorCode(got))
	assert.ErrorContains(t, got, "not a git repository")

	slow := gitcli.Runner{Dir: t.TempDir(), Timeout: time.Nanosecond}
	_, err = slow.Run(ctx, "version")
	got = gitFailure(ctx, err)
	assert.Equal(t, shared.CodeUnavailable, shared.ErrorCode(got))
	assert.ErrorContains(t, got, "git did not finish in time")

	coded := shared.Errorf(shared.CodeNotFound, "no such file")
	assert.Same(t, coded, gitFailure(ctx, coded))
	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, err = gitcli.Run(ended, t.TempDir(), "version")
	assert.Equal(t, err, gitFailure(ended, err), "a request that ended is not the repository's failure")
}
