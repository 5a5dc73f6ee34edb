package gateway

import "sync"

// feed tracks which connections follow which workspace's task feed.
type feed struct {
	mu   sync.RWMutex                  // guards subs
	subs map[string]map[*conn]struct{} // workspace id → subscribed connections
}

func newFeed() *feed {
	return &feed{subs: make(map[string]map[*conn]struct{})}
}

// subscribe joins c to a workspace's feed; joining twice is harmless.
func (f *feed) subscribe(workspaceID string, c *conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	set := f.subs[workspaceID]
	if set == nil {
		set = make(map[*conn]struct{})
		f.subs[workspaceID] = set
	}
	set[c] = struct{}{}
}

// unsubscribe removes c from a workspace's feed.
func (f *feed) unsubscribe(workspaceID string, c *conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unsubscribeLocked(workspaceID, c)
}

func (f *feed) unsubscribeLocked(workspaceID string, c *conn) {
	set := f.subs[workspaceID]
	delete(set, c)
	if len(set) == 0 {
		delete(f.subs, workspaceID)
	}
}

// drop removes c from every feed it joined.
func (f *feed) drop(c *conn, workspaceIDs []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range workspaceIDs {
		f.unsubscribeLocked(id, c)
	}
}

// subscribers returns a snapshot of the connections following a workspace.
func (f *feed) subscribers(workspaceID string) []*conn {
	f.mu.RLock()
	defer f.mu.RUnlock()
	set := f.subs[workspaceID]
	out := make([]*conn, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	return out
}
