package projector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

func costed(id string, cost *shared.Cost) shared.Session {
	return shared.Session{ID: id, Usage: &shared.SessionUsage{Used: 10, Size: 100, Cost: cost}}
}

func TestTaskCostSumsItsSessionsPerCurrency(t *testing.T) {
	usd := func(a float64) *shared.Cost { return &shared.Cost{Amount: a, Currency: "USD"} }
	tests := []struct {
		name     string
		sessions []shared.Session
		want     []shared.Cost
	}{
		{"no session", nil, nil},
		{"usage without cost is no cost", []shared.Session{costed("a", nil), {ID: "b"}}, nil},
		{"one currency adds up", []shared.Session{costed("a", usd(0.25)), costed("b", usd(0.5)), costed("c", nil)},
			[]shared.Cost{{Amount: 0.75, Currency: "USD"}}},
		{"mixed currencies stay apart, in currency order", []shared.Session{
			costed("a", usd(1)), costed("b", &shared.Cost{Amount: 2, Currency: "EUR"}), costed("c", usd(0.5)),
		}, []shared.Cost{{Amount: 2, Currency: "EUR"}, {Amount: 1.5, Currency: "USD"}}},
		{"at most MaxSummaryCurrencies", []shared.Session{
			costed("a", &shared.Cost{Amount: 1, Currency: "USD"}), costed("b", &shared.Cost{Amount: 1, Currency: "EUR"}),
			costed("c", &shared.Cost{Amount: 1, Currency: "GBP"}), costed("d", &shared.Cost{Amount: 1, Currency: "JPY"}),
			costed("e", &shared.Cost{Amount: 1, Currency: "CHF"}),
		}, []shared.Cost{{Amount: 1, Currency: "CHF"}, {Amount: 1, Currency: "EUR"}, {Amount: 1, Currency: "GBP"}, {Amount: 1, Currency: "JPY"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Derive(store.SummarySource{Sessions: tc.sessions}).Cost
			require.Equal(t, tc.want, got)
		})
	}
}

// Usage updates arrive several times a turn; only a change of cost
// changes the task's summary, so usage alone publishes nothing on the
// workspace feed.
func TestOnlyACostChangeUpdatesTheSummary(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		pub := &recorder{}
		p := start(t, db, pub)
		task := db.task(t)
		a, b := db.session(t, task.ID), db.session(t, task.ID)
		markAndFlush(t, p, task.ID)
		require.Len(t, pub.forTask(task.ID), 1)

		setUsage := func(id string, used int, cost *shared.Cost) {
			t.Helper()
			_, _, err := db.SetSessionUsage(ctx, id, used, 200_000, cost)
			require.NoError(t, err)
			markAndFlush(t, p, task.ID)
		}
		setUsage(a.ID, 1_000, nil)
		setUsage(a.ID, 2_000, nil)
		require.Len(t, pub.forTask(task.ID), 1, "usage without cost is no summary change")

		setUsage(a.ID, 3_000, &shared.Cost{Amount: 0.25, Currency: "USD"})
		setUsage(b.ID, 500, &shared.Cost{Amount: 0.5, Currency: "USD"})
		got := pub.forTask(task.ID)
		require.Len(t, got, 3)
		require.Equal(t, []shared.Cost{{Amount: 0.75, Currency: "USD"}}, got[2].Cost, "the task's cost sums its sessions")

		setUsage(a.ID, 4_000, nil)
		setUsage(a.ID, 5_000, &shared.Cost{Amount: 0.25, Currency: "USD"})
		require.Len(t, pub.forTask(task.ID), 3, "usage with an unchanged cost is no summary change")
		require.Equal(t, got[2], db.stored(t, task.ID))
	})
}
