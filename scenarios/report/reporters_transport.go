package report

import (
	"slices"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// groups returns the groups of rs in report order.
func groups(rs []results.Result) []results.Group {
	var out []results.Group
	for _, r := range rs {
		if g := results.GroupOf(r); !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, results.CompareGroups)
	return out
}

// inGroup returns the results of rs in group g.
func inGroup(rs []results.Result, g results.Group) []results.Result {
	var out []results.Result
	for _, r := range rs {
		if results.GroupOf(r) == g {
			out = append(out, r)
		}
	}
	return out
}

// groupColumn reports whether the summary needs a scheme column: a run
// away from https at concurrency 1, or more than one group.
func groupColumn(rs []results.Result) bool {
	gs := groups(rs)
	return len(gs) > 1 || (len(gs) == 1 && !gs[0].IsCase())
}
