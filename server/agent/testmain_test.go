package agent_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
)

// TestMain makes this test binary the mock agent of the package's tests
// (see mocktest) and checks that no goroutine outlives them.
func TestMain(m *testing.M) {
	mocktest.RunIfChild()
	agent.MockAgentProfile = mocktest.Profile
	goleak.VerifyTestMain(m)
}
