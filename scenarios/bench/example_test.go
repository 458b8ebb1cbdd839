package bench_test

import (
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

func ExampleMetrics() {
	t0 := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	// The published list says which sends are warm-up: one warm-up send,
	// then four measured sends of 25 ms each.
	published := []reconcile.Published{{Seq: 1, RefKey: "warm-1", Valid: true, Warmup: true}}
	for i := 1; i <= 4; i++ {
		published = append(published, reconcile.Published{Seq: i + 1, RefKey: fmt.Sprintf("meas-%d", i), Valid: true})
	}
	m := bench.NewMetrics(published)
	m.Add(records.Record{Seq: 1, RefKey: "warm-1", Outcome: outcome.Sent,
		TotalMS: 80, CPUMS: 50, Start: t0, End: t0.Add(80 * time.Millisecond)})
	for i := 1; i <= 4; i++ {
		start := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		m.Add(records.Record{Seq: i + 1, RefKey: fmt.Sprintf("meas-%d", i), Outcome: outcome.Sent,
			TotalMS: 20 + float64(i), Reused: true, CPUMS: 50 + 0.5*float64(i),
			Start: start, End: start.Add(25 * time.Millisecond)})
	}
	m.Close()
	fmt.Printf("p50 %.0f ms, p99 %.0f ms, %.2f ms CPU/send, %d reused, wall %.3f s\n",
		m.Latency.P50, m.Latency.P99, m.CPUMSPerSend, m.ClientReused, m.WallS)
	// Output:
	// p50 22 ms, p99 24 ms, 0.50 ms CPU/send, 4 reused, wall 0.325 s
}
