package state

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/herd-dev/herd/shared"
)

// ContextBar is what a session header's context bar shows.
type ContextBar struct {
	// Percent is the share of the context window in use, 0 to 100; -1
	// when the agent did not say how large the window is.
	Percent int
	// Label is the bar's words: "context 42% · 84k of 200k tokens", or
	// "context 84k tokens" without a window size.
	Label string
}

// ContextBarOf returns the bar of a session's usage; ok is false when the
// agent has not reported usage.
func ContextBarOf(u *shared.SessionUsage) (bar ContextBar, ok bool) {
	if u == nil {
		return ContextBar{}, false
	}
	used := max(u.Used, 0)
	if u.Size <= 0 {
		return ContextBar{Percent: -1, Label: "context " + Tokens(used) + " tokens"}, true
	}
	pct := int(math.Round(100 * float64(used) / float64(u.Size)))
	pct = min(max(pct, 0), 100)
	return ContextBar{Percent: pct, Label: "context " + strconv.Itoa(pct) + "% · " + Tokens(used) + " of " + Tokens(u.Size) + " tokens"}, true
}

// Tokens writes a token count briefly: 950, 8.4k, 84k, 1.2M.
func Tokens(n int) string {
	switch {
	case n < 1_000:
		return strconv.Itoa(n)
	case n < 10_000:
		return trimZero(strconv.FormatFloat(float64(n)/1_000, 'f', 1, 64)) + "k"
	case n < 1_000_000:
		return strconv.Itoa(int(math.Round(float64(n)/1_000))) + "k"
	default:
		return trimZero(strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64)) + "M"
	}
}

// trimZero drops a ".0" ending.
func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// Costs is a bounded list of amounts, one per currency in currency order,
// that compares with == (a Row holds one). More is set when amounts in
// further currencies were left out.
type Costs struct {
	n     int
	items [shared.MaxSummaryCurrencies]shared.Cost
	more  bool
}

// CostsOf returns the costs of a summary's cost field.
func CostsOf(in []shared.Cost) Costs {
	var c Costs
	for _, x := range in {
		c = c.add(x)
	}
	return c
}

// Plus returns the sum of c and o, per currency.
func (c Costs) Plus(o Costs) Costs {
	for _, x := range o.items[:o.n] {
		c = c.add(x)
	}
	c.more = c.more || o.more
	return c
}

// add adds one amount to its currency's.
func (c Costs) add(x shared.Cost) Costs {
	if x.Currency == "" || math.IsNaN(x.Amount) || math.IsInf(x.Amount, 0) || x.Amount < 0 {
		return c
	}
	list := c.items[:c.n]
	i, found := slices.BinarySearchFunc(list, x.Currency, func(e shared.Cost, cur string) int { return strings.Compare(e.Currency, cur) })
	switch {
	case found:
		c.items[i].Amount += x.Amount
	case c.n == len(c.items):
		c.more = true
	default:
		copy(c.items[i+1:c.n+1], c.items[i:c.n])
		c.items[i] = x
		c.n++
	}
	return c
}

// Empty reports whether there is no cost at all.
func (c Costs) Empty() bool { return c.n == 0 }

// Mixed reports whether the amounts are in more than one currency.
func (c Costs) Mixed() bool { return c.n > 1 || c.more }

// String writes the costs for people: "$0.42"; in mixed currencies each
// apart, "$1.20 + €0.30", ending in " + more" when some were left out;
// "" when there is none.
func (c Costs) String() string {
	parts := make([]string, 0, c.n+1)
	for _, x := range c.items[:c.n] {
		parts = append(parts, Money(x))
	}
	if c.more {
		parts = append(parts, "more")
	}
	return strings.Join(parts, " + ")
}

// currencySigns are the currencies written with a sign before the amount.
var currencySigns = map[string]string{"USD": "$", "EUR": "€", "GBP": "£"}

// Money writes one amount: two decimals (an amount below one cent but
// above zero as "<$0.01"), with the currency's sign, or its code after
// the amount.
func Money(c shared.Cost) string {
	amount, less := c.Amount, ""
	if amount > 0 && amount < 0.01 {
		amount, less = 0.01, "<"
	}
	num := strconv.FormatFloat(amount, 'f', 2, 64)
	if sign, ok := currencySigns[c.Currency]; ok {
		return less + sign + num
	}
	return less + num + " " + c.Currency
}

// CostLabel names a cost for people and assistive technology: "cost
// $0.42", or "cost in mixed currencies: $1.20 + €0.30"; "" for none.
func CostLabel(c Costs) string {
	switch {
	case c.Empty():
		return ""
	case c.Mixed():
		return "cost in mixed currencies: " + c.String()
	default:
		return "cost " + c.String()
	}
}

// SessionCost returns a session's cumulative cost; empty before the agent
// reports one.
func SessionCost(s shared.Session) Costs {
	if s.Usage == nil || s.Usage.Cost == nil {
		return Costs{}
	}
	return CostsOf([]shared.Cost{*s.Usage.Cost})
}

// WorkspaceCost sums the costs of the rows listed.
func WorkspaceCost(rows []Row) Costs {
	var total Costs
	for _, r := range rows {
		total = total.Plus(r.Cost)
	}
	return total
}

// TabTitle is what a session's tab says: the agent's title for the
// session when it gave one, else its place among the task's sessions
// ("Session 2"), then the state label.
func TabTitle(index int, s shared.Session, label string) string {
	name := s.Title
	if name == "" {
		name = "Session " + strconv.Itoa(index+1)
	}
	return name + " · " + label
}
