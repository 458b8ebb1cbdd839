package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// settlementSection is the summary's "UNKNOWN and its settlement" section:
// per bench point, the UNKNOWN sends the run produced (its records), how
// many the ledger shows settled and by what, how many are left for an
// operator, and the time to settle by report or pull
// (docs/results.md#unknown-and-its-settlement). "" when no result has a
// Settlement (files written before it existed render as they did).
func settlementSection(rs []results.Result) string {
	if !slices.ContainsFunc(rs, func(r results.Result) bool { return r.Settlement != nil }) {
		return ""
	}
	sorted := slices.Clone(rs)
	results.SortResults(sorted)
	t := table{header: []string{"RTT", "client", "UNKNOWN (records)", "settled by", "UNKNOWN left (operator)", "time to settle p50 / p99 ms"}}
	off := false
	for _, r := range sorted {
		row := []string{fmt.Sprintf("%d ms", r.RTTMS), clientLabel(r), strconv.Itoa(r.Outcomes[outcome.Unknown]), "-", "-", "-"}
		if s := r.Settlement; s != nil {
			row[3], row[4] = settledByLabel(*s), strconv.Itoa(s.UnknownLeft)
			if s.TimeToSettle != nil {
				row[5] = fmt.Sprintf("%.0f / %.0f", s.TimeToSettle.P50MS, s.TimeToSettle.P99MS)
			}
			off = off || !s.Reports
		}
		t.rows = append(t.rows, row)
	}
	var b strings.Builder
	b.WriteString("\n## UNKNOWN and its settlement\n\n")
	if off {
		b.WriteString("Vendor delivery reports off (the bench does not turn them on: a report per message would add to the worker's CPU and change the figures above): " +
			"every UNKNOWN left is for an operator to settle (docs/outcomes.md#delivery-reports).\n\n")
	}
	mdTable(&b, t)
	return b.String()
}

// settledByLabel is "reports off" or "report a / pull b / horizon c",
// then "ledger not read" (replicas, a contract worker: settlements
// unknown) and "operator d" when an operator settled any.
func settledByLabel(s results.Settlement) string {
	var parts []string
	switch {
	case !s.Reports:
		parts = append(parts, "reports off")
	case s.LedgerRead:
		parts = append(parts, fmt.Sprintf("report %d / pull %d / horizon %d",
			s.SettledBy[ledger.SourceReport], s.SettledBy[ledger.SourcePull], s.SettledBy[ledger.SourceHorizon]))
	}
	if !s.LedgerRead {
		parts = append(parts, "ledger not read")
	}
	if n := s.SettledBy[ledger.SourceOperator]; n > 0 {
		parts = append(parts, fmt.Sprintf("operator %d", n))
	}
	return strings.Join(parts, ", ")
}
