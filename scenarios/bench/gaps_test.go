package bench

import (
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestGapSends: gaps count from the previous send's end in handling order
// (Seq, not file order), warm-up sends only start the count, a record
// without a send call is skipped, and the gap is multiplied by the scale.
func TestGapSends(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	published := []reconcile.Published{
		{RefKey: "w1", Valid: true, Warmup: true},
		{RefKey: "m1", Valid: true}, {RefKey: "m2", Valid: true}, {RefKey: "m3", Valid: true},
		{RefKey: "x1", Valid: false},
	}
	recs := []records.Record{
		{Seq: 3, RefKey: "m2", Start: at(2000), End: at(2030), TotalMS: 25, Reused: true},
		{Seq: 1, RefKey: "w1", Start: at(0), End: at(50), TotalMS: 40},
		{Seq: 2, RefKey: "m1", Start: at(1050), End: at(1100), TotalMS: 45},
		{Seq: 4, RefKey: "x1", Start: at(2500), End: at(2501)}, // malformed: no send call
		{Seq: 5, RefKey: "m3", Start: at(3030), End: at(3080), TotalMS: 44},
	}
	got := GapSends(recs, published, 40)
	want := []struct {
		gapS   float64
		ms     float64
		reused bool
	}{{1.0 * 40, 45, false}, {0.9 * 40, 25, true}, {1.0 * 40, 44, false}}
	if len(got) != len(want) {
		t.Fatalf("%d sends, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if d := got[i].GapS - w.gapS; d > 1e-9 || d < -1e-9 || got[i].MS != w.ms || got[i].Reused != w.reused {
			t.Errorf("send %d = %+v, want gap %.1f s, %.0f ms, reused %v", i, got[i], w.gapS, w.ms, w.reused)
		}
	}
}
