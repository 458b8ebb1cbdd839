//go:build integration

package ledger_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// commitSettings are the PostgreSQL session settings
// BenchmarkPostgresCommitSettings compares (docs/deployment.md,
// Durability): durable ones (on, local, commit_delay) and the one that is
// not (off).
var commitSettings = []struct {
	name   string
	params map[string]string
	alone  bool
}{
	{"on,alone", nil, true},
	{"on,group", nil, false},
	{"local,group", map[string]string{"synchronous_commit": "local"}, false},
	{"on,commit_delay=1000us,group", map[string]string{"commit_delay": "1000", "commit_siblings": "1"}, false},
	{"off,group", map[string]string{"synchronous_commit": "off"}, false},
}

// BenchmarkPostgresCommitSettings: one op is one message's ledger work,
// a Begin and a Finish (SENT) of a new refkey, from 128 goroutines at once
// (the scale benchmark's sends in flight), under each of commitSettings.
// It reports messages/s and the ledger's commits per message (the
// transactions its Begins and Finishes committed: 2 per message alone,
// fewer grouped). Run: go test -tags integration -run '^$'
// -bench PostgresCommitSettings -benchtime 3000x ./worker/ledger.
func BenchmarkPostgresCommitSettings(b *testing.B) {
	for _, cs := range commitSettings {
		b.Run(cs.name, func(b *testing.B) {
			url := freshSchema(b)
			ctx := context.Background()
			s, err := ledger.OpenPostgresForTest(ctx, url, cs.params, cs.alone)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b0, _ := s.GroupStatsForTest()
			var seq atomic.Int64
			b.SetParallelism(64) // 128 goroutines on 2 cores
			b.ResetTimer()
			t0 := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := fmt.Sprintf("m-%d", seq.Add(1))
					_, e, err := s.Begin(ctx, k, ledgertest.HashA, t0)
					if err == nil {
						err = s.Finish(ctx, k, ledgertest.HashA, e.Attempts, outcome.Sent, "mk", t0)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			el := time.Since(t0)
			b.StopTimer()
			b1, _ := s.GroupStatsForTest()
			b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
			b.ReportMetric(float64(b1-b0)/float64(b.N), "commits/msg")
		})
	}
}
