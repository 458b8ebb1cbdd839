package fault

import (
	"fmt"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// SettleTimes is the time to settle by report or pull
// (results.SettleTimes: one owner for the fault, idle-race and bench
// files).
type SettleTimes = results.SettleTimes

// settleMeasures is what a scenario's end says about UNKNOWN and its
// settlement (Verdict.UnknownLeft, SettledBy, TimeToSettle;
// results.MeasureSettlement).
type settleMeasures = results.Settlement

// measureSettle is results.MeasureSettlement: the refkeys left UNKNOWN for
// an operator (the ledger's UNKNOWN and the unknown queue's copies, each
// once), the settlements by source, and the time to settle by report or
// pull.
func measureSettle(in reconcile.Input, unknownQueue string, recs []records.Record) settleMeasures {
	return results.MeasureSettlement(in, unknownQueue, recs)
}

// applySettle records m in v and checks the scenario's unknown_left and
// settled_by against it (failures make v fail).
func applySettle(v *Verdict, e Expect, m settleMeasures) {
	v.UnknownLeft, v.TimeToSettle = m.UnknownLeft, m.TimeToSettle
	if len(m.SettledBy) > 0 {
		v.SettledBy = m.SettledBy
	}
	v.Expected.UnknownLeft, v.Expected.SettledBy = e.UnknownLeft, e.SettledBy
	fail := func(format string, args ...any) { v.Failures = append(v.Failures, fmt.Sprintf(format, args...)) }
	if e.UnknownLeft != nil && !e.UnknownLeft.Match(m.UnknownLeft) {
		fail("UNKNOWN left for an operator: %d, want %s", m.UnknownLeft, e.UnknownLeft)
	}
	if d := e.SettledAfter.D(); d > 0 && (m.TimeToSettle == nil || m.TimeToSettle.MinMS < float64(d.Milliseconds())) {
		fail("time to settle: %s, want every settlement by report at least %s", minCell(m.TimeToSettle), d)
	}
	if e.SettledBy != nil {
		for _, src := range settleSources {
			want, named := e.SettledBy[src]
			if got := m.SettledBy[src]; (named && !want.Match(got)) || (!named && got > 0) {
				fail("settled by %s: %d, want %s", src, got, cmpOr(named, want.String(), "none"))
			}
		}
	}
	v.Pass = len(v.Failures) == 0
}

func cmpOr(ok bool, a, b string) string {
	if ok {
		return a
	}
	return b
}

func minCell(t *SettleTimes) string {
	if t == nil {
		return "none settled by report"
	}
	return fmt.Sprintf("min %.0f ms", t.MinMS)
}
