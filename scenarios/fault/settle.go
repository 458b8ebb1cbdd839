package fault

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// SettleTimes is the time to settle of the UNKNOWN sends a vendor report
// settled (pushed or pulled): the ledger's Resolution.At (the report
// applied) minus the Start of the refkey's last UNKNOWN record (the send
// attempt), in ms.
type SettleTimes struct {
	N     int     `json:"n"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	MinMS float64 `json:"min_ms"`
	MaxMS float64 `json:"max_ms"`
}

// settleMeasures is what a scenario's end says about UNKNOWN and its
// settlement (Verdict.UnknownLeft, SettledBy, TimeToSettle).
type settleMeasures struct {
	unknownLeft int
	settledBy   map[string]int
	times       *SettleTimes
}

// measureSettle reads in (gathered after the workers stopped): the refkeys
// left UNKNOWN for an operator (UNKNOWN in the ledger, or with a copy in
// the unknown queue: the union, each once), the ledger's settlements by
// source, and the time to settle of those settled by a report or a pull.
// A nil in.Ledger (replicas) counts the queue alone and measures no time.
func measureSettle(in reconcile.Input, unknownQueue string, recs []records.Record) settleMeasures {
	m := settleMeasures{settledBy: map[string]int{}}
	left := map[string]bool{}
	for i, q := range in.Queues[unknownQueue] {
		key := q.RefKey
		if key == "" { // a copy without a refkey still counts, once
			key = "message-id " + q.MessageID + " #" + strconv.Itoa(i)
		}
		left[key] = true
	}
	attempt := map[string]time.Time{} // refkey -> start of its last UNKNOWN record
	for _, r := range recs {
		if r.Outcome == outcome.Unknown && r.RefKey != "" && r.Start.After(attempt[r.RefKey]) {
			attempt[r.RefKey] = r.Start
		}
	}
	var ms []float64
	for _, e := range in.Ledger {
		if e.State == outcome.Unknown {
			left[e.RefKey] = true
		}
		if e.Resolution == nil {
			continue
		}
		src := e.Resolution.SourceOf()
		m.settledBy[src]++
		if t, ok := attempt[e.RefKey]; ok && (src == ledger.SourceReport || src == ledger.SourcePull) {
			ms = append(ms, float64(e.Resolution.At.Sub(t).Microseconds())/1000)
		}
	}
	m.unknownLeft = len(left)
	if len(ms) > 0 {
		slices.Sort(ms)
		m.times = &SettleTimes{N: len(ms), P50MS: results.Percentile(ms, 0.5), P99MS: results.Percentile(ms, 0.99), MinMS: ms[0], MaxMS: ms[len(ms)-1]}
	}
	return m
}

// applySettle records m in v and checks the scenario's unknown_left and
// settled_by against it (failures make v fail).
func applySettle(v *Verdict, e Expect, m settleMeasures) {
	v.UnknownLeft, v.TimeToSettle = m.unknownLeft, m.times
	if len(m.settledBy) > 0 {
		v.SettledBy = m.settledBy
	}
	v.Expected.UnknownLeft, v.Expected.SettledBy = e.UnknownLeft, e.SettledBy
	fail := func(format string, args ...any) { v.Failures = append(v.Failures, fmt.Sprintf(format, args...)) }
	if e.UnknownLeft != nil && !e.UnknownLeft.Match(m.unknownLeft) {
		fail("UNKNOWN left for an operator: %d, want %s", m.unknownLeft, e.UnknownLeft)
	}
	if d := e.SettledAfter.D(); d > 0 && (m.times == nil || m.times.MinMS < float64(d.Milliseconds())) {
		fail("time to settle: %s, want every settlement by report at least %s", minCell(m.times), d)
	}
	if e.SettledBy != nil {
		for _, src := range settleSources {
			want, named := e.SettledBy[src]
			if got := m.settledBy[src]; (named && !want.Match(got)) || (!named && got > 0) {
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
