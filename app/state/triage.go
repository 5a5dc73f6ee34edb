package state

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
)

// Group is a section of the triaged task list.
type Group string

// The sections of the task list, in the order they are shown.
const (
	// GroupNeedsYou holds tasks whose agent waits on a permission or an
	// answer.
	GroupNeedsYou Group = "needs-you"
	// GroupRunning holds tasks whose agent is working.
	GroupRunning Group = "running"
	// GroupFinished holds tasks that settled since the person last looked.
	GroupFinished Group = "finished"
	// GroupRest holds everything else.
	GroupRest Group = "rest"
)

// Title names a group for its heading.
func (g Group) Title() string {
	switch g {
	case GroupNeedsYou:
		return "Needs you"
	case GroupRunning:
		return "Running"
	case GroupFinished:
		return "Finished since you looked"
	}
	return "Other tasks"
}

// Section is one non-empty group of rows.
type Section struct {
	Group Group
	Rows  []Row
}

// groupOf places a row: a request first, then work in progress, then a
// settled task whose last activity is newer than when it was last looked
// at (seenAt, Unix milliseconds; 0 for never).
func groupOf(r Row, seenAt int64) Group {
	switch r.Indicator {
	case IndicatorPermission, IndicatorClarification:
		return GroupNeedsYou
	case IndicatorGenerating, IndicatorBackground, IndicatorRunning, IndicatorStarting, IndicatorCreated:
		return GroupRunning
	case IndicatorWaiting, IndicatorCompleted, IndicatorIdle, IndicatorFailed, IndicatorCancelled:
		if r.LastActivity > seenAt {
			return GroupFinished
		}
	}
	return GroupRest
}

// Triage orders rows for the person: needs-you first, then running, then
// finished since they looked, then the rest; within a group the most
// recent activity first (the store's order, newest created, breaks ties).
// query, when not blank, keeps only the rows whose title contains it,
// ignoring case. The rows are not modified.
func Triage(rows []Row, seen Seen, query string) []Section {
	q := strings.ToLower(strings.TrimSpace(query))
	order := []Group{GroupNeedsYou, GroupRunning, GroupFinished, GroupRest}
	byGroup := make(map[Group][]Row, len(order))
	for _, r := range rows {
		if q != "" && !strings.Contains(strings.ToLower(r.Title), q) {
			continue
		}
		g := groupOf(r, seen.At(r.TaskID))
		byGroup[g] = append(byGroup[g], r)
	}
	var out []Section
	for _, g := range order {
		rs := byGroup[g]
		if len(rs) == 0 {
			continue
		}
		if g != GroupRest {
			slices.SortStableFunc(rs, func(a, b Row) int { return cmp.Compare(b.LastActivity, a.LastActivity) })
		}
		out = append(out, Section{Group: g, Rows: rs})
	}
	return out
}

// Flatten lists the rows of sections in order, for moving through them.
func Flatten(sections []Section) []Row {
	var rows []Row
	for _, s := range sections {
		rows = append(rows, s.Rows...)
	}
	return rows
}

// maxSeen bounds how many tasks Seen remembers; the oldest looks are
// forgotten first.
const maxSeen = 1000

// seenKey is Seen's KV key.
const seenKey = "herd.seen"

// Seen remembers when the person last looked at each task (Unix
// milliseconds), in a KV (the browser's localStorage), so "finished since
// you looked" survives a reload.
type Seen struct {
	kv KV
	at map[string]int64
}

// LoadSeen reads what kv remembers; unreadable data counts as nothing
// seen.
func LoadSeen(kv KV) Seen {
	s := Seen{kv: kv, at: make(map[string]int64)}
	if raw, ok := kv.Get(seenKey); ok {
		_ = json.Unmarshal([]byte(raw), &s.at)
	}
	return s
}

// At returns when task id was last looked at; 0 for never.
func (s Seen) At(id string) int64 { return s.at[id] }

// Look records that the person looked at task id at now (Unix
// milliseconds) and reports whether that changed anything.
func (s Seen) Look(id string, now int64) bool {
	if s.at == nil || id == "" || s.at[id] >= now {
		return false
	}
	s.at[id] = now
	if len(s.at) > maxSeen {
		oldest := ""
		for k, v := range s.at {
			if oldest == "" || v < s.at[oldest] {
				oldest = k
			}
		}
		delete(s.at, oldest)
	}
	if raw, err := json.Marshal(s.at); err == nil && s.kv != nil {
		s.kv.Set(seenKey, string(raw))
	}
	return true
}
