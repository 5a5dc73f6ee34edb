package gittest

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main runs a package's tests with git isolated (see Isolate) and, when
// they passed, checks that no goroutine leaked, ignoring those leakOK
// names. TestMain exits with its result: os.Exit(gittest.Main(m)).
func Main(m *testing.M, leakOK ...goleak.Option) int {
	cleanup, err := Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "isolate git:", err)
		return 1
	}
	code := m.Run()
	cleanup()
	if code != 0 {
		return code
	}
	if err := goleak.Find(leakOK...); err != nil {
		fmt.Fprintln(os.Stderr, "goroutine leak:", err)
		return 1
	}
	return 0
}
