package gateway

import "sync"

// feed tracks which connections follow which topic: a workspace's task
// feed, or a session's detail stream.
type feed struct {
	mu   sync.RWMutex                  // guards subs
	subs map[string]map[*conn]struct{} // topic id → subscribed connections
}

func newFeed() *feed {
	return &feed{subs: make(map[string]map[*conn]struct{})}
}

// subscribe joins c to a topic; joining twice is harmless.
func (f *feed) subscribe(id string, c *conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	set := f.subs[id]
	if set == nil {
		set = make(map[*conn]struct{})
		f.subs[id] = set
	}
	set[c] = struct{}{}
}

// unsubscribe removes c from a topic.
func (f *feed) unsubscribe(id string, c *conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unsubscribeLocked(id, c)
}

func (f *feed) unsubscribeLocked(id string, c *conn) {
	set := f.subs[id]
	delete(set, c)
	if len(set) == 0 {
		delete(f.subs, id)
	}
}

// drop removes c from every topic it joined.
func (f *feed) drop(c *conn, ids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		f.unsubscribeLocked(id, c)
	}
}

// subscribers returns a snapshot of the connections following a topic.
func (f *feed) subscribers(id string) []*conn {
	f.mu.RLock()
	defer f.mu.RUnlock()
	set := f.subs[id]
	out := make([]*conn, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	return out
}
