//go:build integration

package ledger_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
// It reports messages/s and the server's commits per message (its
// xact_commit over the ops). Run: go test -tags integration -run '^$'
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
			c0 := xactCommits(b, url)
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
			c1 := xactCommits(b, url)
			b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
			b.ReportMetric(float64(c1-c0)/float64(b.N), "commits/msg")
		})
	}
}

// xactCommits is the ledger database's committed transactions so far.
func xactCommits(b *testing.B, url string) int64 {
	b.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	var n int64
	if err := c.QueryRow(ctx, "SELECT pg_stat_force_next_flush()").Scan(new(any)); err != nil {
		b.Logf("pg_stat_force_next_flush: %v", err)
	}
	if err := c.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
