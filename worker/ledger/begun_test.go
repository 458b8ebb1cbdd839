package ledger

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

func openBegun(t *testing.T) *Ledger {
	t.Helper()
	l, err := Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func raw(t *testing.T, l *Ledger, refkey string) string {
	t.Helper()
	var v string
	if err := l.db.View(func(tx *bolt.Tx) error { v = string(tx.Bucket(bucket).Get([]byte(refkey))); return nil }); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFinishReadsTheFileNotTheKeptEntry: when the entry on file is no
// longer the one Begin wrote (here another writer's Begin of the same
// refkey, attempt 2), Finish of attempt 1 judges the file's entry and is
// refused as stale; with the kept entry trusted blindly it would close
// attempt 1 over attempt 2.
func TestFinishReadsTheFileNotTheKeptEntry(t *testing.T) {
	ctx, now := context.Background(), time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	l := openBegun(t)
	hash := BodyHash([]byte("body"))
	if _, _, err := l.Begin(ctx, "k", hash, now); err != nil {
		t.Fatal(err)
	}
	if err := l.update(func(b *bolt.Bucket) error {
		e, _, err := get(b, "k")
		e.Attempts, e.UpdatedAt = 2, now.Add(time.Second)
		if err != nil {
			return err
		}
		return put(b, e)
	}); err != nil {
		t.Fatal(err)
	}
	err := l.Finish(ctx, "k", hash, 1, outcome.Sent, "mk", now.Add(2*time.Second))
	var stale *StaleAttemptError
	if !errors.As(err, &stale) || stale.Current.Attempts != 2 {
		t.Fatalf("Finish of attempt 1 over attempt 2 on file: %v, want a StaleAttemptError naming attempt 2", err)
	}
}

// TestFinishKeptEntryWritesWhatADecodeWould: Finish from the kept entry
// leaves the file byte for byte as Finish after a decode does, and keeps
// nothing once the attempt is closed.
func TestFinishKeptEntryWritesWhatADecodeWould(t *testing.T) {
	ctx := context.Background()
	seoul := time.FixedZone("KST", 9*3600)
	now := time.Date(2026, 12, 2, 20, 49, 59, 123456789, seoul)
	hash := BodyHash([]byte("body"))
	var got [2]string
	for i, forget := range []bool{false, true} {
		l := openBegun(t)
		l.GroupCommit(2, time.Millisecond)
		if _, _, err := l.Begin(ctx, "k", hash, now); err != nil {
			t.Fatal(err)
		}
		if forget {
			l.begun.drop("k") // Finish decodes the file's value
		} else if len(l.begun.m) != 1 {
			t.Fatalf("kept %d entries after Begin, want 1", len(l.begun.m))
		}
		if err := l.Finish(ctx, "k", hash, 1, outcome.Sent, "mk", now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if len(l.begun.m) != 0 {
			t.Errorf("kept %d entries after Finish, want 0", len(l.begun.m))
		}
		got[i] = raw(t, l, "k")
	}
	if got[0] != got[1] {
		t.Errorf("file after Finish from the kept entry:\n%s\nafter a decode:\n%s", got[0], got[1])
	}
}

// TestBegunCacheBounded: attempts that never finish are not kept forever.
func TestBegunCacheBounded(t *testing.T) {
	var c begunCache
	for i := range maxBegun + 10 {
		c.keep(fmt.Sprint(i), []byte("v"), Entry{})
	}
	if n := len(c.m); n > maxBegun {
		t.Errorf("kept %d open attempts, want at most %d", n, maxBegun)
	}
}
