package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// chunkTotal is more entries than two Prune chunks.
var chunkTotal = 2*ledger.PruneChunk + ledger.PruneChunk/2

// fillOld writes n SENT entries last updated at t0 (old-00000 ...) in one
// transaction.
func fillOld(t *testing.T, l *ledger.Ledger, n int) {
	t.Helper()
	es := make([]ledger.Entry, n)
	for i := range es {
		es[i] = ledger.Entry{RefKey: fmt.Sprintf("old-%05d", i), State: outcome.Sent, Attempts: 1,
			BodyHash: ledgertest.HashA, CreatedAt: t0, UpdatedAt: t0}
	}
	if err := l.PutForTest(es...); err != nil {
		t.Fatal(err)
	}
}

// pruneResult is one Prune's answer.
type pruneResult struct {
	n   int
	err error
}

// pruneAsync runs Prune with cutoff t0+1h on its own goroutine.
func pruneAsync(ctx context.Context, l *ledger.Ledger) <-chan pruneResult {
	out := make(chan pruneResult, 1)
	go func() {
		n, err := l.Prune(ctx, t0.Add(time.Hour))
		out <- pruneResult{n, err}
	}()
	return out
}

// TestPruneCommitsInChunks: Prune deletes at most PruneChunk entries per
// write transaction and commits between chunks, so a Begin that comes
// while it runs gets bbolt's writer lock between two chunks instead of
// after the whole file. Here Prune is paused before its second chunk; a
// Begin completes meanwhile, then Prune deletes the rest and counts them
// all.
func TestPruneCommitsInChunks(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	fillOld(t, l, chunkTotal)
	paused, resume := make(chan int, 1), make(chan struct{})
	calls := 0
	l.BeforePruneChunkForTest(func() {
		if calls++; calls != 2 {
			return
		}
		all, err := l.All() // a read transaction: no writer lock needed
		if err != nil {
			t.Error(err)
		}
		paused <- chunkTotal - len(all)
		<-resume
	})
	tx0, _ := l.WriteTxID()
	out := pruneAsync(ctx, l)
	var deleted int
	select {
	case deleted = <-paused:
	case r := <-out:
		t.Fatalf("Prune of %d entries returned %d, %v without a second chunk; want at most %d deleted per write transaction",
			chunkTotal, r.n, r.err, ledger.PruneChunk)
	}
	if deleted != ledger.PruneChunk {
		t.Errorf("the first chunk deleted %d entries; want %d", deleted, ledger.PruneChunk)
	}
	d, _, err := l.Begin(ctx, "new-1", "h", t0.Add(2*time.Hour))
	close(resume)
	r := <-out
	if err != nil || d != ledger.Proceed {
		t.Errorf("Begin while Prune is between two chunks = %v, %v; want Proceed", d, err)
	}
	if r.err != nil || r.n != chunkTotal {
		t.Errorf("Prune = %d, %v; want %d, nil", r.n, r.err, chunkTotal)
	}
	tx1, _ := l.WriteTxID()
	chunks := (chunkTotal + ledger.PruneChunk - 1) / ledger.PruneChunk
	if got := int(tx1 - tx0); got != chunks+1 {
		t.Errorf("%d write transactions committed; want %d (%d chunks and the Begin)", got, chunks+1, chunks)
	}
	if all, _ := l.All(); len(all) != 1 || all[0].RefKey != "new-1" {
		t.Errorf("%d entries left after Prune; want only new-1", len(all))
	}
}

// TestPruneStopsBetweenChunksWhenCtxEnds: a ctx that ends while Prune
// runs (the worker shutting down) stops it before its next chunk: it
// returns the count deleted so far with the ctx's error, and the rest
// waits for the next run.
func TestPruneStopsBetweenChunksWhenCtxEnds(t *testing.T) {
	l, _ := openTemp(t)
	fillOld(t, l, chunkTotal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	l.BeforePruneChunkForTest(func() {
		if calls++; calls == 2 {
			cancel()
		}
	})
	r := <-pruneAsync(ctx, l)
	if !errors.Is(r.err, context.Canceled) || r.n != ledger.PruneChunk {
		t.Errorf("Prune whose ctx ended after its first chunk = %d, %v; want %d and an error wrapping context.Canceled",
			r.n, r.err, ledger.PruneChunk)
	}
	if all, _ := l.All(); len(all) != chunkTotal-ledger.PruneChunk {
		t.Errorf("%d entries left; want %d", len(all), chunkTotal-ledger.PruneChunk)
	}
}

// TestPruneChecksEachEntryAgainWhenItDeletes: an entry that changes after
// Prune found it prunable and before its chunk's write (here a Begin
// makes an old NOT_SENT entry ATTEMPTING again) is kept: the write
// transaction checks CanPrune on the entry as it is then. The control: the
// old SENT entry beside it is deleted.
func TestPruneChecksEachEntryAgainWhenItDeletes(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	if err := l.PutForTest(
		ledger.Entry{RefKey: "retry-1", State: outcome.NotSent, Attempts: 1, BodyHash: "h", CreatedAt: t0, UpdatedAt: t0},
		ledger.Entry{RefKey: "sent-1", State: outcome.Sent, Attempts: 1, BodyHash: "h", CreatedAt: t0, UpdatedAt: t0},
	); err != nil {
		t.Fatal(err)
	}
	l.BeforePruneChunkForTest(func() {
		if d, _, err := l.Begin(ctx, "retry-1", "h", t0.Add(2*time.Hour)); err != nil || d != ledger.Proceed {
			t.Errorf("Begin of retry-1 = %v, %v; want Proceed", d, err)
		}
	})
	r := <-pruneAsync(ctx, l)
	if r.err != nil || r.n != 1 {
		t.Errorf("Prune = %d, %v; want 1 (sent-1), nil", r.n, r.err)
	}
	if e, found, _ := l.Get(ctx, "retry-1"); !found || e.State != ledger.Attempting {
		t.Errorf("retry-1 = %+v (found %v) after Prune; want its new ATTEMPTING entry kept", e, found)
	}
	if _, found, _ := l.Get(ctx, "sent-1"); found {
		t.Error("sent-1 survived Prune; want it deleted")
	}
}
