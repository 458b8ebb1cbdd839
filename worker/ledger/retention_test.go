package ledger_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestRetentionKeepsFileBounded is a small soak: day after day a bulk of
// refkeys is sent and the previous days are pruned, as the worker's hourly
// prune does with LEDGER_RETENTION. bbolt never shrinks its file, but the
// pages freed by Prune are reused, so once the retention window is full the
// file stops growing. Without Prune (the negative control inside the test)
// the file keeps growing with every day.
//
// It takes about a minute (4,000 fsynced transactions), so -short skips it
// (./run.sh mutate runs each mutant's tests with -short; Prune's rule
// itself is guarded by the contract suite).
func TestRetentionKeepsFileBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("soak of about a minute; -short skips it")
	}
	const (
		days      = 10
		perDay    = 200
		retention = 2 * 24 * time.Hour
	)
	run := func(t *testing.T, prune bool) []int64 {
		t.Helper()
		l, path := openTemp(t)
		ctx := context.Background()
		var sizes []int64
		for day := range days {
			now := t0.Add(time.Duration(day) * 24 * time.Hour)
			for i := range perDay {
				ref := fmt.Sprintf("d%02d-%04d", day, i)
				_, e, err := l.Begin(ctx, ref, "h", now)
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Finish(ctx, ref, "h", e.Attempts, outcome.Sent, "mk", now); err != nil {
					t.Fatal(err)
				}
			}
			if prune {
				if _, err := l.Prune(ctx, now.Add(-retention)); err != nil {
					t.Fatal(err)
				}
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, st.Size())
		}
		all, err := l.All()
		if err != nil {
			t.Fatal(err)
		}
		if prune && len(all) > 3*perDay {
			t.Errorf("%d entries after pruning; want at most %d (the retention window)", len(all), 3*perDay)
		}
		return sizes
	}
	pruned := run(t, true)
	steady := pruned[3] // the window (today and two days back) is full from day 3 on
	if last := pruned[days-1]; last > steady+steady/4 {
		t.Errorf("with Prune the file grew from %d bytes (day 3) to %d (day %d); sizes %v", steady, last, days-1, pruned)
	}
	unpruned := run(t, false)
	if unpruned[days-1] <= pruned[days-1] {
		t.Errorf("negative control: without Prune the file is %d bytes, not larger than with it (%d)", unpruned[days-1], pruned[days-1])
	}
	t.Logf("file size by day, pruned: %v; unpruned: %v", pruned, unpruned)
}
