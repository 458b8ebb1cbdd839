package ledger_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// TestBeginAfterItsContextWritesNothing: a Begin waiting for bbolt's one
// writer lock (held here by a write transaction the test keeps open, as a
// long Prune or a slow commit holds it) whose ctx ends meanwhile writes
// nothing once it gets the lock, and returns the ctx's error. The worker
// gave up on it at its deadline and sent nothing, so an ATTEMPTING entry
// written later would turn the message's redelivery into a false UNKNOWN.
// The controls: a Begin whose ctx is still live when it gets the lock
// proceeds, with and without group commit.
func TestBeginAfterItsContextWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		group bool
		end   bool
	}{
		{"ctx ended while waiting for the lock", false, true},
		{"ctx ended while waiting, group commit", true, true},
		{"ctx live (control)", false, false},
		{"ctx live, group commit (control)", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := openTemp(t)
			if tc.group {
				l.GroupCommit(2, time.Millisecond)
			}
			release := l.HoldWriterForTest()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				d   ledger.Decision
				err error
			}
			out := make(chan result, 1)
			go func() {
				d, _, err := l.Begin(ctx, "late-1", "h", t0)
				out <- result{d, err}
			}()
			if tc.end {
				cancel()
			}
			release()
			r := <-out
			e, found, err := l.Get(context.Background(), "late-1")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.end {
				if r.err != nil || r.d != ledger.Proceed || !found || e.State != ledger.Attempting {
					t.Errorf("Begin with a live ctx = %v, %v; entry %+v (found %v); want Proceed and ATTEMPTING", r.d, r.err, e, found)
				}
				return
			}
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("Begin whose ctx ended before it got the writer lock = %v, %v; want an error wrapping context.Canceled", r.d, r.err)
			}
			if found {
				t.Errorf("Begin whose ctx ended wrote %+v; want no entry (its caller gave up and did not send)", e)
			}
		})
	}
}

// TestGroupCommitEndedBeginFailsAlone: under group commit, a Begin whose
// ctx ended, grouped in one batch with a live Begin, fails alone and
// writes nothing; the live one proceeds, in one committed transaction.
func TestGroupCommitEndedBeginFailsAlone(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	l.GroupCommit(2, time.Minute) // the batch runs when the second call joins it
	ended, cancel := context.WithCancel(ctx)
	cancel()
	tx0, _ := l.WriteTxID()
	var (
		wg         sync.WaitGroup
		dEnd, dOK  ledger.Decision
		errEnd, ok error
	)
	wg.Go(func() { dEnd, _, errEnd = l.Begin(ended, "ended-1", "h", t0) })
	wg.Go(func() { dOK, _, ok = l.Begin(ctx, "live-1", "h", t0) })
	wg.Wait()
	tx1, _ := l.WriteTxID()
	if !errors.Is(errEnd, context.Canceled) {
		t.Errorf("grouped Begin with an ended ctx = %v, %v; want an error wrapping context.Canceled", dEnd, errEnd)
	}
	if ok != nil || dOK != ledger.Proceed {
		t.Errorf("live Begin grouped with an ended one = %v, %v; want Proceed", dOK, ok)
	}
	if e, found, _ := l.Get(ctx, "ended-1"); found {
		t.Errorf("the ended Begin wrote %+v; want no entry", e)
	}
	if e, found, _ := l.Get(ctx, "live-1"); !found || e.State != ledger.Attempting {
		t.Errorf("live-1 = %+v (found %v); want ATTEMPTING", e, found)
	}
	if tx1-tx0 != 1 {
		t.Errorf("%d write transactions committed; want 1 (the live Begin's)", tx1-tx0)
	}
}
