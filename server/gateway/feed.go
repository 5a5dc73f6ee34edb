package gateway

import "sync"

// feed tracks which connections follow which topic: a workspace's task
// feed, or a session's detail stream. It indexes both ways, so a
// connection that ends leaves every topic without keeping its own list.
type feed struct {
	mu     sync.RWMutex                  // guards subs and topics
	subs   map[string]map[*conn]struct{} // topic id → subscribed connections
	topics map[*conn]map[string]struct{} // connection → topic ids it follows
}

func newFeed() *feed {
	return &feed{
		subs:   make(map[string]map[*conn]struct{}),
		topics: make(map[*conn]map[string]struct{}),
	}
}

// join subscribes c to a topic. joined is false when c already followed
// it; full is true (and nothing changes) when c already follows limit
// topics.
func (f *feed) join(id string, c *conn, limit int) (joined, full bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mine := f.topics[c]
	if _, ok := mine[id]; ok {
		return false, false
	}
	if len(mine) >= limit {
		return false, true
	}
	if mine == nil {
		mine = make(map[string]struct{})
		f.topics[c] = mine
	}
	mine[id] = struct{}{}
	set := f.subs[id]
	if set == nil {
		set = make(map[*conn]struct{})
		f.subs[id] = set
	}
	set[c] = struct{}{}
	return true, false
}

// leave unsubscribes c from a topic.
func (f *feed) leave(id string, c *conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaveLocked(id, c)
}

func (f *feed) leaveLocked(id string, c *conn) {
	if set := f.subs[id]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(f.subs, id)
		}
	}
	if mine := f.topics[c]; mine != nil {
		delete(mine, id)
		if len(mine) == 0 {
			delete(f.topics, c)
		}
	}
}

// drop removes c from every topic it follows.
func (f *feed) drop(c *conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.topics[c] {
		f.leaveLocked(id, c)
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
