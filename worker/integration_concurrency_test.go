//go:build integration

package worker

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// peakOverlap is the largest number of records whose [Start, End]
// intervals overlap at one instant.
func peakOverlap(recs []records.Record) int {
	type ev struct {
		t     time.Time
		delta int
	}
	var evs []ev
	for _, r := range recs {
		evs = append(evs, ev{r.Start, 1}, ev{r.End, -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].t.Equal(evs[j].t) {
			return evs[i].delta < evs[j].delta
		}
		return evs[i].t.Before(evs[j].t)
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}

// TestIntegrationConcurrency: at CONCURRENCY=8 against a real RabbitMQ,
// 8 messages are handled at once (never more), and every message reaches
// the vendor exactly once and is acked; then, with the broker closing
// every connection while sends are in flight, still no message is lost or
// sent twice: the in-flight ones come back redelivered and the ledger
// makes them DUPLICATE.
func TestIntegrationConcurrency(t *testing.T) {
	url, c := startRabbit(t)
	const conc = 8

	t.Run("100 messages at 8 in flight", func(t *testing.T) {
		const n = 100
		v := newFakeVendor(t)
		v.hold = func(string) { time.Sleep(20 * time.Millisecond) } // keep sends overlapping
		queue := "it-conc"
		publishN(t, url, queue, "c", n)
		cfg := integrationConfig(t, url, v, "pooled", n)
		cfg.Queue, cfg.Concurrency = queue, conc
		waitRun(t, runAsync(context.Background(), cfg), 60*time.Second)

		recs := readRecordFile(t, cfg.RecordsPath)
		if len(recs) != n {
			t.Fatalf("%d records, want %d", len(recs), n)
		}
		if p := peakOverlap(recs); p < 2 || p > conc {
			t.Errorf("peak messages in flight %d, want 2..%d", p, conc)
		}
		counts := v.counts()
		for i := 1; i <= n; i++ {
			if got := counts[fmt.Sprintf("c-%d", i)]; got != 1 {
				t.Errorf("refkey c-%d reached the vendor %d times, want 1", i, got)
			}
		}
		if d := queueDepth(t, url, queue); d != 0 {
			t.Errorf("main queue holds %d after the run, want 0 (all acked)", d)
		}
	})

	t.Run("connection lost with 8 in flight", func(t *testing.T) {
		const n = 40
		v := newFakeVendor(t)
		held := make(chan struct{}, n)
		release := make(chan struct{})
		v.hold = func(refkey string) {
			select {
			case <-release:
			default:
				held <- struct{}{}
				<-release
			}
		}
		queue := "it-conc-drop"
		publishN(t, url, queue, "d", n)
		cfg := integrationConfig(t, url, v, "pooled", 0)
		cfg.Queue, cfg.Concurrency = queue, conc
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := runAsync(ctx, cfg)
		for i := range conc {
			select {
			case <-held:
			case <-time.After(60 * time.Second):
				t.Fatalf("only %d sends in flight after 60 s, want %d", i, conc)
			}
		}
		ectx, ecancel := context.WithTimeout(context.Background(), 30*time.Second)
		code, _, err := c.Exec(ectx, []string{"rabbitmqctl", "close_all_connections", "integration test drop"})
		ecancel()
		if err != nil || code != 0 {
			close(release)
			t.Fatalf("rabbitmqctl close_all_connections: code %d err %v", code, err)
		}
		time.Sleep(200 * time.Millisecond)
		close(release)

		deadline := time.Now().Add(60 * time.Second)
		var recs []records.Record
		for {
			recs = readRecordFile(t, cfg.RecordsPath)
			sent := 0
			for _, r := range recs {
				if r.Outcome == outcome.Sent {
					sent++
				}
			}
			if sent >= n && queueDepth(t, url, queue) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 60 s: %d records, %d SENT, want %d SENT", len(recs), sent, n)
			}
			time.Sleep(200 * time.Millisecond)
		}
		cancel()
		waitRun(t, done, 30*time.Second)

		counts := v.counts()
		for i := 1; i <= n; i++ {
			if got := counts[fmt.Sprintf("d-%d", i)]; got != 1 {
				t.Errorf("refkey d-%d reached the vendor %d times, want 1", i, got)
			}
		}
		byOutcome := map[outcome.Outcome]int{}
		for _, r := range recs {
			byOutcome[r.Outcome]++
		}
		if byOutcome[outcome.Sent] != n || len(recs) != n+byOutcome[outcome.Duplicate] {
			t.Errorf("outcomes %v in %d records, want %d SENT and only DUPLICATE besides", byOutcome, len(recs), n)
		}
		if byOutcome[outcome.Duplicate] == 0 {
			t.Errorf("no DUPLICATE: the drop did not catch sends in flight, the test proves nothing")
		}
	})
}
