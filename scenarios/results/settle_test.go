package results

import (
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestMeasureSettlement: UNKNOWN left for an operator is the union of the
// ledger's UNKNOWN entries and the copies in the unknown queue (each
// refkey once); settlements are counted by source; the time to settle is
// the report's Resolution.At minus the last UNKNOWN attempt's start, for
// report and pull only.
func TestMeasureSettlement(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	res := func(src string, after time.Duration) *ledger.Resolution {
		return &ledger.Resolution{Source: src, At: t0.Add(after)}
	}
	in := reconcile.Input{
		Queues: map[string][]reconcile.QueuedMessage{
			"q.unknown": {{RefKey: "a"}, {RefKey: "b"}},
			"q.failed":  {{RefKey: "z"}},
		},
		Ledger: []ledger.Entry{
			{RefKey: "a", State: outcome.Unknown},
			{RefKey: "r1", State: outcome.Sent, Resolution: res(ledger.SourceReport, 3*time.Second)},
			{RefKey: "r2", State: outcome.Sent, Resolution: res(ledger.SourceReport, 5*time.Second)},
			{RefKey: "p1", State: outcome.Sent, Resolution: res(ledger.SourcePull, 9*time.Second)},
			{RefKey: "h1", State: outcome.Sent, Resolution: res(ledger.SourceHorizon, 20*time.Second)},
			{RefKey: "o1", State: outcome.Sent, Resolution: &ledger.Resolution{At: t0}},
		},
	}
	recs := []records.Record{
		{RefKey: "r1", Outcome: outcome.Unknown, Start: t0.Add(-time.Hour)}, // an earlier attempt: not this one
		{RefKey: "r1", Outcome: outcome.Unknown, Start: t0},
		{RefKey: "r2", Outcome: outcome.Unknown, Start: t0},
		{RefKey: "p1", Outcome: outcome.Unknown, Start: t0},
		{RefKey: "h1", Outcome: outcome.Unknown, Start: t0},
	}
	m := MeasureSettlement(in, "q.unknown", recs)
	if !m.LedgerRead || m.Reports {
		t.Errorf("ledger read %t, reports %t; want true, false (the caller says)", m.LedgerRead, m.Reports)
	}
	if m.UnknownLeft != 2 {
		t.Errorf("unknown left %d, want 2 (a in both, b in the queue)", m.UnknownLeft)
	}
	want := map[string]int{"report": 2, "pull": 1, "horizon": 1, "operator": 1}
	for k, n := range want {
		if m.SettledBy[k] != n {
			t.Errorf("settled by %s: %d, want %d (all %v)", k, m.SettledBy[k], n, m.SettledBy)
		}
	}
	if m.TimeToSettle == nil || m.TimeToSettle.N != 3 || m.TimeToSettle.P50MS != 5000 || m.TimeToSettle.P99MS != 9000 || m.TimeToSettle.MinMS != 3000 || m.TimeToSettle.MaxMS != 9000 {
		t.Errorf("times %+v, want n 3, p50 5000, p99 9000 ms", m.TimeToSettle)
	}
}

// TestMeasureSettlementNoLedger: without the ledger (replicas) only the
// unknown queue's copies count, no settlement and no time is measured.
func TestMeasureSettlementNoLedger(t *testing.T) {
	in := reconcile.Input{Queues: map[string][]reconcile.QueuedMessage{"q.unknown": {{RefKey: "a"}, {MessageID: "m"}}}}
	m := MeasureSettlement(in, "q.unknown", []records.Record{{RefKey: "a", Outcome: outcome.Unknown}})
	if m.LedgerRead || m.UnknownLeft != 2 || len(m.SettledBy) != 0 || m.TimeToSettle != nil {
		t.Errorf("%+v: want ledger not read, 2 left (a copy without a refkey counts), nothing settled", m)
	}
}
