package agent

import (
	"context"
	"encoding/json"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/server/agent/claudeframes"
)

// recordedPermission returns the session/request_permission the real
// Claude adapter sent in the "permission" recording (a Bash call in the
// ask mode).
func recordedPermission(t *testing.T) acp.RequestPermissionRequest {
	t.Helper()
	rec, err := claudeframes.Load("permission")
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range rec.Frames {
		var frame struct {
			Method string                       `json:"method"`
			Params acp.RequestPermissionRequest `json:"params"`
		}
		if json.Unmarshal(raw, &frame) == nil && frame.Method == acp.ClientMethodSessionRequestPermission {
			return frame.Params
		}
	}
	t.Fatal("the recording holds no session/request_permission")
	return acp.RequestPermissionRequest{}
}

// Claude's own options reach the Handler with its labels and kinds, in its
// order; the option chosen goes back by Claude's id, and anything else
// (an id of another adapter, a Handler error) is a cancelled outcome.
func TestClaudePermissionFramesMapByKind(t *testing.T) {
	req := recordedPermission(t)
	want := []PermissionOption{
		{ID: "allow-once", Name: "Yes", Kind: "allow_once"},
		{ID: "allow-with-updates", Kind: "allow_always"},
		{ID: "reject", Name: "No", Kind: "reject_once"},
	}
	for _, tc := range []struct {
		name, answer, selected string
	}{
		{"allow always", "allow-with-updates", "allow-with-updates"},
		{"reject", "reject", "reject"},
		{"an id Claude never offered", "allow", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			var got []PermissionOption
			rec.permit = func(_ context.Context, r PermissionRequest) (string, error) {
				got = r.Options
				return tc.answer, nil
			}
			e := &Execution{caps: CapabilitiesOf("claude"), opts: Options{Handler: rec}, pending: map[uint64]context.CancelFunc{}}
			resp, err := (client{e}).RequestPermission(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("options %+v, want %d of them", got, len(want))
			}
			for i, w := range want {
				if got[i].ID != w.ID || got[i].Kind != w.Kind || got[i].Name == "" || (w.Name != "" && got[i].Name != w.Name) {
					t.Fatalf("option %d = %+v, want %+v with Claude's label", i, got[i], w)
				}
			}
			switch {
			case tc.selected == "" && resp.Outcome.Cancelled == nil:
				t.Fatalf("outcome %+v, want cancelled", resp.Outcome)
			case tc.selected != "" && (resp.Outcome.Selected == nil || string(resp.Outcome.Selected.OptionId) != tc.selected):
				t.Fatalf("outcome %+v, want %s selected", resp.Outcome, tc.selected)
			}
		})
	}
}
