package projector

import (
	"slices"
	"strings"

	"github.com/herd-dev/herd/shared"
)

// taskCost sums the cumulative cost of a task's sessions per currency, in
// currency order, keeping at most shared.MaxSummaryCurrencies currencies
// (the first in that order). Amounts in different currencies are never
// added: the client says the cost is mixed. It is nil while no session has
// reported a cost. Context usage is not part of the summary, so a usage
// update that leaves the cost alone projects to the same summary.
func taskCost(sessions []shared.Session) []shared.Cost {
	var out []shared.Cost
	for _, s := range sessions {
		if s.Usage == nil || s.Usage.Cost == nil {
			continue
		}
		c := *s.Usage.Cost
		i, found := slices.BinarySearchFunc(out, c.Currency, func(e shared.Cost, cur string) int { return strings.Compare(e.Currency, cur) })
		if found {
			out[i].Amount += c.Amount
			continue
		}
		out = slices.Insert(out, i, c)
	}
	if len(out) > shared.MaxSummaryCurrencies {
		out = out[:shared.MaxSummaryCurrencies]
	}
	return out
}
