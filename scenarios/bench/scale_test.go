package bench

import (
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestRateShare: N active workers each paced at RateShare send 0.95 x the
// limit together; no limit, no pacing.
func TestRateShare(t *testing.T) {
	for _, tc := range []struct{ limit, active int }{{50, 1}, {50, 2}, {100, 4}, {7, 3}} {
		iv := RateShare(tc.limit, tc.active)
		total := float64(tc.active) * float64(time.Second) / float64(iv)
		if want := RateHeadroom * float64(tc.limit); total < want-0.01 || total > want+0.01 {
			t.Errorf("limit %d, %d active: interval %v, together %.3f/s, want %.3f", tc.limit, tc.active, iv, total, want)
		}
	}
	if iv := RateShare(0, 4); iv != 0 {
		t.Errorf("no limit: interval %v, want 0", iv)
	}
}

// TestActiveWorkers: only competing consumers are all active.
func TestActiveWorkers(t *testing.T) {
	c := DefaultConfig()
	c.Workers = 4
	if n := c.ActiveWorkers(); n != 1 {
		t.Errorf("single active consumer, 4 workers: %d active, want 1", n)
	}
	c.Active = ActiveCompeting
	if n := c.ActiveWorkers(); n != 4 || !c.Replicated() {
		t.Errorf("competing, 4 workers: %d active (replicated %t), want 4 on replicas", n, c.Replicated())
	}
	c = DefaultConfig()
	c.RateLimit = 20
	if !c.Replicated() {
		t.Errorf("RATE_LIMIT alone: want replicas (the worker runs until every 429 is retried)")
	}
}

// TestCheckRateLimit: 429s are counted apart, other paths and the token
// call are ignored, and the accepted rate is over the accepted sends' span.
func TestCheckRateLimit(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	var es []vendormock.AccessEntry
	for i := range 11 { // 11 accepted over 1 s: 10/s
		es = append(es, vendormock.AccessEntry{Method: "POST", Path: "/v3/message", Status: 200, Time: t0.Add(time.Duration(i) * 100 * time.Millisecond)})
	}
	es = append(es,
		vendormock.AccessEntry{Method: "POST", Path: "/v3/message", Status: 429, Time: t0.Add(5 * time.Second)},
		vendormock.AccessEntry{Method: "POST", Path: "/v1/token", Status: 200, Time: t0.Add(9 * time.Second)},
	)
	c := CheckRateLimit(es, "/v3/message", 20, 2, RateShare(20, 2))
	if c.Accepted != 11 || c.Refused != 1 || c.AcceptedPerS != 10 || c.OfLimit != 0.5 || c.RefusedShare != 0.083 {
		t.Errorf("got %+v, want 11 accepted at 10/s (0.5 of 20), 1 refused (0.083)", *c)
	}
	if c.SteadyPerS != 10 || c.SteadyOfLimit != 0.5 {
		t.Errorf("steady %+v, want 10/s (0.5)", *c)
	}
	if c.ActiveWorkers != 2 || c.WorkerShareSendsPerS != 9.5 {
		t.Errorf("share %+v, want 2 workers at 9.5/s", *c)
	}
}
