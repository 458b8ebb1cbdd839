package results

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Group is the runs of one scheme at one concurrency: the summary
// groups its rows and its comparisons by them, and SortResults orders by
// them first.
type Group struct {
	Scheme      string
	Concurrency int
}

// GroupOf is r's group (results written before SCHEME and CONCURRENCY
// count as https at 1).
func GroupOf(r Result) Group { return Group{r.SchemeOf(), r.ConcurrencyOf()} }

// Label is "https" at concurrency 1, "mtls c8" above it.
func (g Group) Label() string {
	if g.Concurrency == 1 {
		return g.Scheme
	}
	return fmt.Sprintf("%s c%d", g.Scheme, g.Concurrency)
}

// IsCase reports whether the case's published figures apply to the
// group: HTTPS at concurrency 1 (docs/case.md#reproduction-settings).
func (g Group) IsCase() bool {
	return g.Scheme == string(vendormock.SchemeHTTPS) && g.Concurrency == 1
}

// CompareGroups orders groups by scheme (http, https, mtls), then
// concurrency.
func CompareGroups(a, b Group) int {
	return cmp.Or(cmp.Compare(schemeRank(a.Scheme), schemeRank(b.Scheme)), cmp.Compare(a.Scheme, b.Scheme),
		cmp.Compare(a.Concurrency, b.Concurrency))
}

func schemeRank(s string) int {
	if i := slices.Index(vendormock.Schemes, vendormock.Scheme(s)); i >= 0 {
		return i
	}
	return len(vendormock.Schemes)
}
