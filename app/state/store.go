package state

import (
	"slices"
	"strings"
	"time"

	"github.com/herd-dev/herd/shared"
)

// Connection is the state of the client's link to the server, as the UI
// shows it.
type Connection int

// Connection states. The zero value is Connecting: a page starts by
// connecting.
const (
	Connecting Connection = iota
	Online
	Offline
)

// String returns the lowercase word the UI shows: connecting, online or
// offline.
func (c Connection) String() string {
	switch c {
	case Online:
		return "online"
	case Offline:
		return "offline"
	default:
		return "connecting"
	}
}

// Store holds the client's view of the server. The zero value is not
// usable; call New. See the package documentation for its rules and for
// why it needs no lock.
type Store struct {
	// tasks holds every known task by id, visible or not.
	tasks map[string]*entry
	// tombs maps a deleted task's id to the UpdatedAt of its deletion.
	tombs map[string]time.Time
	// seq counts accepted writes; an entry records the count at its last
	// accepted write, which is what Mark and Retain compare.
	seq uint64

	// rows is the visible tasks' rows in display order. It is never
	// mutated in place: a change copies it, patching the entries in
	// changed, or rebuilds it when orderStale says the order may have
	// changed.
	rows       []Row
	changed    []*entry
	orderStale bool

	workspaces  []shared.Workspace
	workspaceID string
	profiles    []shared.AgentProfile
	conn        Connection
}

// entry is one stored task. The task's StatusSummary field is always nil;
// the summary lives beside it so that a task write without a summary can
// never clear it.
type entry struct {
	task    shared.Task
	summary *shared.TaskStatusSummary
	// seq is the Store.seq of the last accepted write of this entry.
	seq uint64
	// live is the Store.seq of the last accepted write of this entry's task
	// by a live event (TaskWrite); zero when only responses wrote it.
	live uint64
	// row caches RowOf(task with summary), refreshed on every accepted write.
	row Row
	// pos is the entry's index in Store.rows, or -1 when it is not visible.
	pos int
}

// New returns an empty store.
func New() *Store {
	return &Store{
		tasks: make(map[string]*entry),
		tombs: make(map[string]time.Time),
	}
}

// Task returns the stored task with its summary, visible or not. The
// returned value is a copy; changing it does not change the store.
func (s *Store) Task(id string) (shared.Task, bool) {
	e, ok := s.tasks[id]
	if !ok {
		return shared.Task{}, false
	}
	return e.withSummary(), true
}

// Workspaces returns the workspaces of the last boot.
func (s *Store) Workspaces() []shared.Workspace { return s.workspaces }

// SetWorkspaces replaces the workspace list.
func (s *Store) SetWorkspaces(ws []shared.Workspace) { s.workspaces = ws }

// WorkspaceID returns the selected workspace's id; empty when the server has
// no workspace yet.
func (s *Store) WorkspaceID() string { return s.workspaceID }

// Workspace returns the selected workspace, if it is in the workspace list.
func (s *Store) Workspace() (shared.Workspace, bool) {
	for _, w := range s.workspaces {
		if w.ID == s.workspaceID {
			return w, true
		}
	}
	return shared.Workspace{}, false
}

// SelectWorkspace makes id the workspace whose tasks Rows shows.
func (s *Store) SelectWorkspace(id string) {
	if id == s.workspaceID {
		return
	}
	s.workspaceID = id
	s.orderStale = true
}

// AgentProfiles returns the agent profiles of the last boot.
func (s *Store) AgentProfiles() []shared.AgentProfile { return s.profiles }

// SetAgentProfiles replaces the agent profile list.
func (s *Store) SetAgentProfiles(p []shared.AgentProfile) { s.profiles = p }

// Connection returns the connection status.
func (s *Store) Connection() Connection { return s.conn }

// SetConnection records the connection status.
func (s *Store) SetConnection(c Connection) { s.conn = c }

// withSummary returns a copy of the entry's task carrying a copy of its
// summary.
func (e *entry) withSummary() shared.Task {
	t := e.task
	if e.summary != nil {
		sum := *e.summary
		t.StatusSummary = &sum
	}
	return t
}

// Rows returns the visible tasks of the selected workspace as row models,
// newest created first, ties broken by descending id. It returns the same
// slice until a write changes something; callers must not modify it.
func (s *Store) Rows() []Row {
	switch {
	case s.orderStale:
		s.sortVisible()
	case len(s.changed) > 0:
		rows := slices.Clone(s.rows)
		for _, e := range s.changed {
			if e.pos >= 0 {
				rows[e.pos] = e.row
			}
		}
		s.rows = rows
	}
	clear(s.changed)
	s.changed = s.changed[:0]
	return s.rows
}

// sortVisible recomputes the display order and the rows from scratch.
func (s *Store) sortVisible() {
	order := make([]*entry, 0, len(s.tasks))
	for _, e := range s.tasks {
		e.pos = -1
		if s.visible(e) {
			order = append(order, e)
		}
	}
	slices.SortFunc(order, func(a, b *entry) int {
		if c := b.task.CreatedAt.Compare(a.task.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.task.ID, a.task.ID)
	})
	rows := make([]Row, len(order))
	for i, e := range order {
		e.pos = i
		rows[i] = e.row
	}
	s.rows = rows
	s.orderStale = false
}

// visible reports whether e belongs in the view: not archived, and in the
// selected workspace.
func (s *Store) visible(e *entry) bool {
	return !e.task.Archived && e.task.WorkspaceID == s.workspaceID
}

// Mark is a point in the store's write history, taken on the UI goroutine
// before a request whose answer holds tasks is sent: ResponseWrite uses it
// to let live events written since win, and Retain to keep the tasks they
// wrote.
type Mark uint64

// Mark returns the current point in the write history.
func (s *Store) Mark() Mark { return Mark(s.seq) }

// Retain ends an authoritative listing that began at m: every stored task
// that is not in listed and has not been written since m is deleted, with a
// tombstone at its own UpdatedAt so that only a newer write brings it back.
// It returns how many tasks it removed.
func (s *Store) Retain(m Mark, listed map[string]struct{}) int {
	var stale []*entry
	for id, e := range s.tasks {
		if _, ok := listed[id]; !ok && e.seq <= uint64(m) {
			stale = append(stale, e)
		}
	}
	removed := 0
	for _, e := range stale {
		if s.Apply(DeleteWrite(e.task)) {
			removed++
		}
	}
	return removed
}
