//go:build integration

package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestIntegrationPrefetchAhead: at concurrency 1 the broker hands the
// worker one delivery beyond the one in flight (PrefetchAhead), so while
// the first send is held at the vendor two messages have left the ready
// queue, yet only one send is in flight. When the broker then closes every
// connection, the prefetched message, which never reached Begin, comes
// back redelivered and is sent exactly once; the held one becomes a
// redelivered DUPLICATE. The records keep the queue's order otherwise.
func TestIntegrationPrefetchAhead(t *testing.T) {
	url, c := startRabbit(t)
	v := newFakeVendor(t)
	held, release := make(chan struct{}), make(chan struct{})
	v.hold = func(refkey string) {
		if refkey == "p-1" {
			close(held)
			<-release
		}
	}
	const n = 6
	queue := "it-prefetch"
	publishN(t, url, queue, "p", n)
	cfg := integrationConfig(t, url, v, "pooled", 0)
	cfg.Queue = queue
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runAsync(ctx, cfg)
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		close(release)
		t.Fatal("send of p-1 never started")
	}

	// The broker delivers the prefetched one on its own; give it time.
	want := n - (1 + PrefetchAhead)
	depth := n
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if depth = queueDepth(t, url, queue); depth <= want {
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // and no further than that
	if depth = queueDepth(t, url, queue); depth != want {
		close(release)
		t.Fatalf("%d of %d messages ready while p-1 is in flight, want %d (1 in flight + %d prefetched)", depth, n, want, PrefetchAhead)
	}
	if got := v.counts(); len(got) != 1 || got["p-1"] != 1 {
		close(release)
		t.Fatalf("vendor saw %v while p-1 is held, want only p-1 once (one send in flight)", got)
	}

	ectx, ecancel := context.WithTimeout(context.Background(), 30*time.Second)
	code, _, err := c.Exec(ectx, []string{"rabbitmqctl", "close_all_connections", "integration test prefetch"})
	ecancel()
	if err != nil || code != 0 {
		close(release)
		t.Fatalf("rabbitmqctl close_all_connections: code %d err %v", code, err)
	}
	time.Sleep(200 * time.Millisecond) // let the worker see the close
	if recs := readRecordFile(t, cfg.RecordsPath); len(recs) != 0 {
		close(release)
		first := recs[0]
		t.Fatalf("%d records before p-1's send was released, want 0: the held send ended on its own (%s %s: %s)", len(recs), first.RefKey, first.Outcome, first.Error)
	}
	close(release)

	var recs []records.Record
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if recs = readRecordFile(t, cfg.RecordsPath); len(recs) >= n+1 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("worker stopped early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records after 60 s", len(recs), n+1)
		}
	}
	cancel()
	waitRun(t, done, 30*time.Second)

	// p-1: SENT (its ack lost with the connection), then a redelivered
	// DUPLICATE; p-2 (the prefetched one): SENT once, redelivered; then
	// p-3 .. p-n in the queue's order.
	got := make([]string, 0, len(recs))
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s redelivered=%v", r.RefKey, r.Outcome, r.Redelivered))
	}
	wantRecs := []string{"p-1 SENT redelivered=false", "p-1 DUPLICATE redelivered=true", "p-2 SENT redelivered=true"}
	for i := 3; i <= n; i++ {
		wantRecs = append(wantRecs, fmt.Sprintf("p-%d SENT redelivered=false", i))
	}
	if fmt.Sprint(got) != fmt.Sprint(wantRecs) {
		t.Errorf("records\n got %v\nwant %v", got, wantRecs)
	}
	for i := 1; i <= n; i++ {
		if c := v.counts()[fmt.Sprintf("p-%d", i)]; c != 1 {
			t.Errorf("p-%d reached the vendor %d times, want 1", i, c)
		}
	}
	if d := queueDepth(t, url, queue); d != 0 {
		t.Errorf("main queue holds %d after the run, want 0", d)
	}
}
