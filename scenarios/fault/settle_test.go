package fault

import (
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestMeasureSettle: UNKNOWN left for an operator is the union of the
// ledger's UNKNOWN entries and the copies in the unknown queue (each
// refkey once); settlements are counted by source; the time to settle is
// the report's Resolution.At minus the last UNKNOWN attempt's start, for
// report and pull only.
func TestMeasureSettle(t *testing.T) {
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
	m := measureSettle(in, "q.unknown", recs)
	if m.unknownLeft != 2 {
		t.Errorf("unknown left %d, want 2 (a in both, b in the queue)", m.unknownLeft)
	}
	want := map[string]int{"report": 2, "pull": 1, "horizon": 1, "operator": 1}
	for k, n := range want {
		if m.settledBy[k] != n {
			t.Errorf("settled by %s: %d, want %d (all %v)", k, m.settledBy[k], n, m.settledBy)
		}
	}
	if m.times == nil || m.times.N != 3 || m.times.P50MS != 5000 || m.times.P99MS != 9000 || m.times.MinMS != 3000 || m.times.MaxMS != 9000 {
		t.Errorf("times %+v, want n 3, p50 5000, p99 9000 ms", m.times)
	}
}

// TestApplySettle: unknown_left and settled_by fail a scenario when the
// end differs (the negative control: one copy still in the unknown queue
// of a scenario that says 0), and pass it when equal.
func TestApplySettle(t *testing.T) {
	zero, three := Count{}, Count{Min: 3, Max: 3}
	e := Expect{UnknownLeft: &zero, SettledBy: map[string]Count{"report": three}, SettledAfter: Duration(2 * time.Second)}
	ok := settleMeasures{settledBy: map[string]int{"report": 3}, times: &SettleTimes{N: 3, MinMS: 2100}}
	v := Verdict{Pass: true}
	applySettle(&v, e, ok)
	if !v.Pass || len(v.Failures) > 0 {
		t.Errorf("equal end: pass %t failures %v", v.Pass, v.Failures)
	}
	for name, tc := range map[string]struct {
		m    settleMeasures
		want string
	}{
		"a copy left in the unknown queue": {settleMeasures{unknownLeft: 1, settledBy: map[string]int{"report": 3}}, "UNKNOWN left for an operator: 1, want 0"},
		"settled by the horizon too":       {settleMeasures{settledBy: map[string]int{"report": 3, "horizon": 1}}, "settled by horizon: 1, want none"},
		"fewer by report":                  {settleMeasures{settledBy: map[string]int{"report": 2}}, "settled by report: 2, want 3"},
		"settled sooner than the delay": {settleMeasures{settledBy: map[string]int{"report": 3}, times: &SettleTimes{N: 3, MinMS: 900}},
			"time to settle: min 900 ms, want every settlement by report at least 2s"},
	} {
		v := Verdict{Pass: true}
		applySettle(&v, e, tc.m)
		if v.Pass || !strings.Contains(strings.Join(v.Failures, "; "), tc.want) {
			t.Errorf("%s: pass %t failures %v, want a failure %q", name, v.Pass, v.Failures, tc.want)
		}
	}
}
