package server

import (
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// The limiter tracks at most its capacity of failing clients: clients
// whose budget has refilled are forgotten, and at the cap the client that
// failed least recently makes room (counted).
func TestAuthLimiterStaysWithinItsCap(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newAuthLimiter(func() time.Time { return now }, 2, time.Second, 3)
	wrong := func() bool { return false }
	addr := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	fail := func(client string) {
		t.Helper()
		right, wait := l.attempt(addr(client), wrong)
		require.False(t, right)
		require.Zero(t, wait, "%s is not blocked yet", client)
	}
	tracked := func() []string {
		l.mu.Lock()
		defer l.mu.Unlock()
		var out []string
		for el := l.byRecency.Front(); el != nil; el = el.Next() {
			out = append(out, el.Value.(*failingClient).key.String())
		}
		require.Len(t, l.clients, len(out))
		return out
	}

	fail("192.0.2.1")
	fail("192.0.2.2")
	fail("192.0.2.3")
	fail("192.0.2.1") // now the most recent, and out of budget
	fail("192.0.2.4")
	require.Equal(t, []string{"192.0.2.3", "192.0.2.1", "192.0.2.4"}, tracked(), "192.0.2.2 failed least recently")
	require.Equal(t, 1.0, counterValue(t, l.evicted))
	_, wait := l.attempt(addr("192.0.2.1"), func() bool { t.Fatal("a blocked client's token is not checked"); return true })
	require.Equal(t, time.Second, wait)
	require.Equal(t, 1.0, counterValue(t, l.blocked))

	// Two seconds refill every budget of two: the next new client finds
	// the others idle and they are dropped, without an eviction.
	now = now.Add(2 * time.Second)
	fail("192.0.2.5")
	require.Equal(t, []string{"192.0.2.5"}, tracked())
	require.Equal(t, 1.0, counterValue(t, l.evicted))
	require.Equal(t, 5.0+1, counterValue(t, l.failures))
}

// A flood of wrong tokens from ever new addresses cannot grow the
// limiter beyond its cap.
func TestAuthLimiterFloodFromManyAddresses(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newAuthLimiter(func() time.Time { return now }, authFailureBurst, authFailureRefill, 100)
	for i := range 10_000 {
		l.attempt(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), func() bool { return false })
	}
	require.Len(t, l.clients, 100)
	require.Equal(t, 100, l.byRecency.Len())
	require.Equal(t, 9_900.0, counterValue(t, l.evicted))
}

// Failures are charged to the TCP peer's address; an IPv6 client to its
// /64.
func TestClientKey(t *testing.T) {
	cases := []struct{ name, remote, key string }{
		{"IPv4", "192.0.2.7:5000", "192.0.2.7"},
		{"IPv4 mapped into IPv6", "[::ffff:192.0.2.7]:5000", "192.0.2.7"},
		{"IPv6", "[2001:db8:1:2:3:4:5:6]:5000", "2001:db8:1:2::"},
		{"IPv6 elsewhere in the same /64", "[2001:db8:1:2:ffff::1]:5000", "2001:db8:1:2::"},
		{"IPv6 in another /64", "[2001:db8:1:3::1]:5000", "2001:db8:1:3::"},
		{"IPv6 with a zone", "[fe80::1%eth0]:5000", "fe80::"},
		{"not an address", "@unix", "invalid IP"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.key, clientKey(tc.remote).String())
		})
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}
