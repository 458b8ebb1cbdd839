//go:build integration

package worker

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// BenchmarkIntegrationOutageCopies: the whole worker (in-process, bbolt
// ledger, pooled client) against the lab's RabbitMQ while the vendor
// reads every send and never answers (an outage that ends each send
// UNKNOWN), so every message is re-published to the unknown queue on the
// session's confirm channel before its ack. One op is one message handled;
// msgs/s is b.N over Run's wall time (connect and declarations included).
// Every message must end with one UNKNOWN record. It uses no API newer
// than the publisher it measures, so the same file measures before and
// after a change (results/publish-confirms/).
//
//	go test -tags integration -run '^$' -bench IntegrationOutageCopies -benchtime 1000x ./worker
func BenchmarkIntegrationOutageCopies(b *testing.B) {
	url, _ := startRabbit(b)
	for _, conc := range []int{1, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			b.StopTimer()
			v := newFakeVendor(b)
			v.hold = func(string) { panic(http.ErrAbortHandler) } // read, never answered: UNKNOWN
			queue := fmt.Sprintf("bench-outage-c%d-n%d", conc, b.N)
			publishN(b, url, queue, "o", b.N)
			cfg := integrationConfig(b, url, v, "pooled", b.N)
			cfg.Queue, cfg.Concurrency = queue, conc
			b.StartTimer()
			start := time.Now()
			waitRun(b, runAsync(context.Background(), cfg), 10*time.Minute)
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
			unknown := 0
			for _, r := range readRecordFile(b, cfg.RecordsPath) {
				if r.Outcome == outcome.Unknown && r.Queue == cfg.Topology().Names.Unknown {
					unknown++
				}
			}
			if unknown != b.N {
				b.Fatalf("%d UNKNOWN records with a copy in the unknown queue, want %d", unknown, b.N)
			}
		})
	}
}
