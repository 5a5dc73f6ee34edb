package server

import (
	"container/list"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// The budget of failed token attempts per client: a burst of
// authFailureBurst, then one more every authFailureRefill. A client out of
// budget is refused before its token is looked at, so a guesser gets ten
// tries a minute from each address while every other client is untouched.
const (
	authFailureBurst  = 10
	authFailureRefill = 6 * time.Second
	// authMaxClients caps the clients tracked (a few hundred bytes each).
	authMaxClients = 10_000
)

// authLimiter limits failed authentication attempts per client address.
// Only failures create entries, so successful requests cost one map
// lookup. Its memory is bounded by a named overflow policy: entries whose
// budget has refilled carry nothing and are swept at most once per refill
// period; at the cap, the client that failed least recently is evicted
// (and counted), which at worst hands a budget back to a flood that
// already spans more addresses than the cap.
type authLimiter struct {
	now      func() time.Time
	every    time.Duration
	burst    int
	capacity int
	// idleAfter is how long an emptied budget takes to refill.
	idleAfter time.Duration

	mu        sync.Mutex                   // guards clients, byRecency and lastSweep
	clients   map[netip.Addr]*list.Element // of *failingClient
	byRecency *list.List                   // least recently failed first
	lastSweep time.Time

	failures prometheus.Counter
	blocked  prometheus.Counter
	evicted  prometheus.Counter
}

// failingClient is the budget of one client that has failed at least once.
type failingClient struct {
	key    netip.Addr
	budget *rate.Limiter
}

// newAuthLimiter builds a limiter allowing burst failures, then one per
// every, for at most capacity clients; now is its clock.
func newAuthLimiter(now func() time.Time, burst int, every time.Duration, capacity int) *authLimiter {
	return &authLimiter{
		now: now, every: every, burst: burst, capacity: capacity,
		idleAfter: every * time.Duration(burst),
		clients:   make(map[netip.Addr]*list.Element),
		byRecency: list.New(),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_auth_failures_total", Help: "Requests refused for a wrong token.",
		}),
		blocked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_auth_blocked_total", Help: "Token attempts refused unchecked because the client had failed too often (HTTP 429).",
		}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herd_auth_clients_evicted_total", Help: "Failing clients forgotten early because the limiter was tracking its maximum.",
		}),
	}
}

// collectors are the limiter's metrics, for the server's registry.
func (l *authLimiter) collectors() []prometheus.Collector {
	return []prometheus.Collector{l.failures, l.blocked, l.evicted}
}

// attempt judges one presented token from client. A client out of budget
// is refused without running check and told how long to wait (wait > 0);
// otherwise check decides, and a false answer spends one of the client's
// tries. check runs under the lock, so concurrent guesses from one client
// cannot overspend its budget.
func (l *authLimiter) attempt(client netip.Addr, check func() bool) (right bool, wait time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.clients[client]
	if el != nil {
		budget := el.Value.(*failingClient).budget
		if tokens := budget.TokensAt(now); tokens < 1 {
			l.blocked.Inc()
			return false, time.Duration((1 - tokens) * float64(l.every))
		}
	}
	if check() {
		return true, 0
	}
	l.failures.Inc()
	if el == nil {
		el = l.trackLocked(client, now)
	} else {
		l.byRecency.MoveToBack(el)
	}
	el.Value.(*failingClient).budget.AllowN(now, 1)
	return false, 0
}

// trackLocked starts tracking client, making room under the cap first.
func (l *authLimiter) trackLocked(client netip.Addr, now time.Time) *list.Element {
	if now.Sub(l.lastSweep) >= l.idleAfter {
		l.sweepLocked(now)
	}
	if len(l.clients) >= l.capacity {
		oldest := l.byRecency.Front()
		l.forgetLocked(oldest)
		l.evicted.Inc()
	}
	el := l.byRecency.PushBack(&failingClient{key: client, budget: rate.NewLimiter(rate.Every(l.every), l.burst)})
	l.clients[client] = el
	return el
}

// sweepLocked forgets the clients whose budget has refilled: their entry
// would decide nothing.
func (l *authLimiter) sweepLocked(now time.Time) {
	l.lastSweep = now
	for el := l.byRecency.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*failingClient).budget.TokensAt(now) >= float64(l.burst) {
			l.forgetLocked(el)
		}
		el = next
	}
}

func (l *authLimiter) forgetLocked(el *list.Element) {
	delete(l.clients, el.Value.(*failingClient).key)
	l.byRecency.Remove(el)
}

// clientKey is the address a request's failures are charged to: the TCP
// peer's IP, never X-Forwarded-For (any client can write that header).
// An IPv6 client is charged by its /64, which one host usually holds in
// full; an IPv4-mapped address counts as the IPv4 address. Peers whose
// address cannot be read (not TCP) share one budget.
func clientKey(remoteAddr string) netip.Addr {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() {
		return ip
	}
	prefix, _ := ip.Prefix(64) // cannot fail: 64 bits fit an IPv6 address
	return prefix.Addr()
}
