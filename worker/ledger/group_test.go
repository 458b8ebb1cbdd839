package ledger_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestContractBoltGroupCommit runs the Store contract table on a bbolt
// ledger with group commit on, as the worker runs it at concurrency 1.
func TestContractBoltGroupCommit(t *testing.T) {
	ledgertest.Contract(t, func(t *testing.T) ledger.Store {
		l, _ := openTemp(t)
		l.GroupCommit(2, time.Millisecond)
		return l
	})
}

// TestGroupCommitSharesOneTransaction: with group commit, a Finish and a
// Begin made at once commit in one write transaction, each durable when
// it returns (read back after reopening the file); a Finish the ledger
// refuses (a stale attempt) fails alone, and the Begin it was grouped
// with still commits.
func TestGroupCommitSharesOneTransaction(t *testing.T) {
	ctx := context.Background()
	l, path := openTemp(t)
	l.GroupCommit(2, 50*time.Millisecond)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	if d, _, err := l.Begin(ctx, "a", "h-a", now); err != nil || d != ledger.Proceed {
		t.Fatalf("Begin a: %v, %v", d, err)
	}
	together := func(finish func() error, begin func() (ledger.Decision, error)) (ferr error, d ledger.Decision, berr error) {
		var wg sync.WaitGroup
		wg.Go(func() { ferr = finish() })
		wg.Go(func() { d, berr = begin() })
		wg.Wait()
		return
	}
	tx0, _ := l.WriteTxID()
	t0 := time.Now()
	ferr, d, berr := together(
		func() error { return l.Finish(ctx, "a", "h-a", 1, outcome.Sent, "mk-a", now) },
		func() (ledger.Decision, error) { d, _, err := l.Begin(ctx, "b", "h-b", now); return d, err })
	took := time.Since(t0)
	tx1, _ := l.WriteTxID()
	if ferr != nil || berr != nil || d != ledger.Proceed {
		t.Fatalf("Finish a: %v; Begin b: %v, %v", ferr, d, berr)
	}
	if tx1-tx0 != 1 {
		t.Errorf("Finish a and Begin b took %d write transactions, want 1", tx1-tx0)
	}
	if took >= 50*time.Millisecond {
		t.Errorf("a full group of 2 waited %s: it should commit at once, not after the delay", took)
	}

	// A stale Finish (attempt 7 of b, which is on attempt 1) beside a Begin.
	ferr, d, berr = together(
		func() error { return l.Finish(ctx, "b", "h-b", 7, outcome.Sent, "", now) },
		func() (ledger.Decision, error) { d, _, err := l.Begin(ctx, "c", "h-c", now); return d, err })
	if _, stale := errors.AsType[*ledger.StaleAttemptError](ferr); !stale {
		t.Errorf("stale Finish of b: %v, want a StaleAttemptError", ferr)
	}
	if berr != nil || d != ledger.Proceed {
		t.Errorf("Begin c beside a refused Finish: %v, %v; want Proceed", d, berr)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	re, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	for refkey, want := range map[string]outcome.Outcome{"a": outcome.Sent, "b": ledger.Attempting, "c": ledger.Attempting} {
		e, ok, err := re.Get(ctx, refkey)
		if err != nil || !ok || e.State != want {
			t.Errorf("after reopening: %s = %+v (found %v, %v), want %s", refkey, e, ok, err, want)
		}
	}
}
