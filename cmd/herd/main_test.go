package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestRunKnowsMockAgent(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"help"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "herd mock-agent") {
		t.Fatalf("usage does not list mock-agent:\n%s", out.String())
	}
}

// The subcommands hand their arguments to the packages that implement
// them: each refuses a bad argument with its own message.
func TestRunHandsSubcommandsTheirArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mock-agent", "extra"}, "usage: herd mock-agent"},
		{[]string{"bench", "-followers", "0"}, "-followers"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
