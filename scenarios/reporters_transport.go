package scenarios

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// runGroup is the runs of one scheme at one concurrency: the summary
// groups its rows and its comparisons by them.
type runGroup struct {
	Scheme      string
	Concurrency int
}

// groupOf is r's group (results written before SCHEME and CONCURRENCY
// count as https at 1).
func groupOf(r Result) runGroup { return runGroup{r.SchemeOf(), r.ConcurrencyOf()} }

// label is "https" at concurrency 1, "mtls c8" above it.
func (g runGroup) label() string {
	if g.Concurrency == 1 {
		return g.Scheme
	}
	return fmt.Sprintf("%s c%d", g.Scheme, g.Concurrency)
}

// isCase reports whether the case's published figures apply to the
// group: HTTPS at concurrency 1 (docs/case.md#reproduction-settings).
func (g runGroup) isCase() bool {
	return g.Scheme == string(vendormock.SchemeHTTPS) && g.Concurrency == 1
}

// compareGroups orders groups by scheme (http, https, mtls), then
// concurrency.
func compareGroups(a, b runGroup) int {
	return cmp.Or(cmp.Compare(schemeRank(a.Scheme), schemeRank(b.Scheme)), cmp.Compare(a.Scheme, b.Scheme),
		cmp.Compare(a.Concurrency, b.Concurrency))
}

func schemeRank(s string) int {
	if i := slices.Index(vendormock.Schemes, vendormock.Scheme(s)); i >= 0 {
		return i
	}
	return len(vendormock.Schemes)
}

// groups returns the groups of rs in report order.
func groups(rs []Result) []runGroup {
	var out []runGroup
	for _, r := range rs {
		if g := groupOf(r); !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, compareGroups)
	return out
}

// inGroup returns the results of rs in group g.
func inGroup(rs []Result, g runGroup) []Result {
	var out []Result
	for _, r := range rs {
		if groupOf(r) == g {
			out = append(out, r)
		}
	}
	return out
}

// groupColumn reports whether the summary needs a scheme column: a run
// away from https at concurrency 1, or more than one group.
func groupColumn(rs []Result) bool {
	gs := groups(rs)
	return len(gs) > 1 || (len(gs) == 1 && !gs[0].isCase())
}
