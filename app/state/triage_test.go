package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func titles(sections []Section) map[Group][]string {
	out := make(map[Group][]string)
	for _, s := range sections {
		for _, r := range s.Rows {
			out[s.Group] = append(out[s.Group], r.Title)
		}
	}
	return out
}

func TestTriagePutsWhatNeedsThePersonFirst(t *testing.T) {
	rows := []Row{
		{TaskID: "a", Title: "idle old", Indicator: IndicatorWaiting, LastActivity: 100},
		{TaskID: "b", Title: "asks", Indicator: IndicatorClarification, LastActivity: 50},
		{TaskID: "c", Title: "works", Indicator: IndicatorGenerating, LastActivity: 300},
		{TaskID: "d", Title: "done since", Indicator: IndicatorCompleted, LastActivity: 500},
		{TaskID: "e", Title: "permission", Indicator: IndicatorPermission, LastActivity: 400},
		{TaskID: "f", Title: "fresh", Indicator: IndicatorNoSession, LastActivity: 900},
		{TaskID: "g", Title: "failed since", Indicator: IndicatorFailed, LastActivity: 700},
	}
	seen := LoadSeen(MapKV{})
	seen.Look("a", 200)
	seen.Look("d", 200)

	sections := Triage(rows, seen, "")
	var order []Group
	for _, s := range sections {
		order = append(order, s.Group)
	}
	assert.Equal(t, []Group{GroupNeedsYou, GroupRunning, GroupFinished, GroupRest}, order)
	got := titles(sections)
	assert.Equal(t, []string{"permission", "asks"}, got[GroupNeedsYou], "newest activity first")
	assert.Equal(t, []string{"works"}, got[GroupRunning])
	assert.Equal(t, []string{"failed since", "done since"}, got[GroupFinished], "never looked at counts as not seen")
	assert.Equal(t, []string{"idle old", "fresh"}, got[GroupRest], "the rest keep the store's order")

	seen.Look("d", 600)
	assert.NotContains(t, titles(Triage(rows, seen, ""))[GroupFinished], "done since", "looking at it moves it down")
}

func TestTriageSearchesTitlesIgnoringCase(t *testing.T) {
	rows := []Row{{TaskID: "a", Title: "Fix Login"}, {TaskID: "b", Title: "Docs"}}
	found := Flatten(Triage(rows, LoadSeen(MapKV{}), "  login "))
	require.Len(t, found, 1)
	assert.Equal(t, "a", found[0].TaskID)
	assert.Len(t, Flatten(Triage(rows, LoadSeen(MapKV{}), " ")), 2, "a blank query keeps every row")
}

func TestSeenSurvivesAReloadAndStaysBounded(t *testing.T) {
	kv := MapKV{}
	s := LoadSeen(kv)
	assert.True(t, s.Look("a", 10))
	assert.False(t, s.Look("a", 5), "an older look changes nothing")
	assert.EqualValues(t, 10, LoadSeen(kv).At("a"))

	for i := range maxSeen + 5 {
		s.Look(string(rune('A'+i%26))+string(rune(i)), int64(100+i))
	}
	assert.LessOrEqual(t, len(LoadSeen(kv).at), maxSeen)
	assert.Zero(t, LoadSeen(kv).At("a"), "the oldest look is forgotten first")

	kv[seenKey] = "not json"
	assert.Zero(t, LoadSeen(kv).At("a"), "unreadable storage counts as nothing seen")
}
