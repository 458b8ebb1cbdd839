package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

var t0 = ledgertest.T0

func openTemp(t *testing.T) (*ledger.Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "ledger.db")
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, path
}

// TestContractBolt runs the one table of contract cases on the bbolt file.
func TestContractBolt(t *testing.T) {
	ledgertest.Contract(t, func(t *testing.T) ledger.Store {
		l, _ := openTemp(t)
		return l
	})
}

// TestContractMem runs the same table on the in-memory fake the worker's
// tests use.
func TestContractMem(t *testing.T) {
	ledgertest.Contract(t, func(*testing.T) ledger.Store { return ledgertest.NewMem() })
}

// TestReopenKeepsEveryState: every commit is on disk after Close and Open.
func TestReopenKeepsEveryState(t *testing.T) {
	ctx := context.Background()
	l, path := openTemp(t)
	h := ledgertest.HashA
	mustBegin := func(s ledger.Store, k string) {
		t.Helper()
		if d, _, err := s.Begin(ctx, k, h, t0); err != nil || d != ledger.Proceed {
			t.Fatalf("Begin(%s) = %v, %v", k, d, err)
		}
	}
	mustBegin(l, "crash-1")
	mustBegin(l, "done-1")
	mustBegin(l, "retry-1")
	if err := l.Finish(ctx, "done-1", h, 1, outcome.Sent, "", t0); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(ctx, "retry-1", h, 1, outcome.NotSent, "dial refused", t0); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	l2, err := ledger.Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l2.Close()
	for _, tt := range []struct {
		key      string
		want     ledger.Decision
		attempts int
	}{
		{"crash-1", ledger.Unresolved, 1},
		{"done-1", ledger.Duplicate, 1},
		{"retry-1", ledger.Proceed, 2},
		{"new-1", ledger.Proceed, 1},
	} {
		d, e, err := l2.Begin(ctx, tt.key, h, t0.Add(time.Hour))
		if err != nil || d != tt.want || e.Attempts != tt.attempts {
			t.Errorf("%s after reopen: Begin = %v %+v %v; want %v with %d attempts", tt.key, d, e, err, tt.want, tt.attempts)
		}
	}
	all, err := l2.All()
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	var keys []string
	for _, e := range all {
		keys = append(keys, e.RefKey)
	}
	if got, want := strings.Join(keys, ","), "crash-1,done-1,new-1,retry-1"; got != want {
		t.Fatalf("All keys = %s, want %s", got, want)
	}
}

// TestReadsEntriesWithoutNewFields: a file written before body hashes and
// creation times existed still decodes (the fields stay empty).
func TestReadsEntriesWithoutNewFields(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	// A Finish with no body hash stands for an old entry.
	if err := l.Finish(ctx, "old", "", 0, outcome.Sent, "", t0); err != nil {
		t.Fatal(err)
	}
	d, e, err := l.Begin(ctx, "old", ledgertest.HashB, t0)
	if err != nil || d != ledger.Duplicate || e.BodyHash != "" {
		t.Fatalf("Begin on an entry without hash = %v %+v %v; want duplicate, hash kept empty", d, e, err)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	_, path := openTemp(t)
	start := time.Now()
	l2, err := ledger.Open(path)
	if err == nil {
		l2.Close()
		t.Fatal("second Open of a held ledger succeeded")
	}
	if !errors.Is(err, ledger.ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if waited := time.Since(start); waited < ledger.LockTimeout/2 {
		t.Errorf("gave up after %v, want about %v", waited, ledger.LockTimeout)
	}
}

func TestOpenNotALedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte("this is not a bbolt file, just text long enough to be read as a page header.............."), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := ledger.Open(path); err == nil {
		l.Close()
		t.Fatal("Open accepted a non-bbolt file")
	}
}

// TestConcurrentBeginOnlyOneProceeds: goroutines racing on one refkey, one
// Proceed and the rest Unresolved; the write transaction is the lock.
func TestConcurrentBeginOnlyOneProceeds(t *testing.T) {
	l, _ := openTemp(t)
	if err := checkOneProceeds(t, 8, l); err != nil {
		t.Fatal(err)
	}
}

// beginner is the part of ledger.Store the race tests call (a planted
// naive Begin satisfies it too).
type beginner interface {
	Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error)
}

// checkOneProceeds is the race tests' check: n racers call Begin on the
// refkey "race" at once over stores (raceBegin); it returns nil when exactly
// one proceeded and every other one was told Unresolved, else an error
// with the counts. The negative controls run this same check on a store
// that lets several proceed.
func checkOneProceeds(t *testing.T, n int, stores ...beginner) error {
	t.Helper()
	got := raceBegin(t, n, stores...)
	if got[ledger.Proceed] != 1 || got[ledger.Unresolved] != n-1 {
		return fmt.Errorf("%d racers: decisions %v; want 1 proceed and %d unresolved", n, got, n-1)
	}
	return nil
}

// raceBegin calls Begin on one refkey from n goroutines at once (released
// together) spread over the stores, and counts the decisions.
func raceBegin(t *testing.T, n int, stores ...beginner) map[ledger.Decision]int {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		start   = make(chan struct{})
		results = map[ledger.Decision]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, _, err := stores[i%len(stores)].Begin(context.Background(), "race", ledgertest.HashA, t0)
			if err != nil {
				t.Errorf("Begin: %v", err)
				return
			}
			mu.Lock()
			results[d]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return results
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[ledger.Decision]string{ledger.Proceed: "proceed", ledger.Duplicate: "duplicate",
		ledger.Unresolved: "unresolved", ledger.Conflict: "conflict", 9: "Decision(9)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestBodyHash(t *testing.T) {
	// SHA-256 of "abc" (FIPS 180-2, appendix B.1).
	if got := ledger.BodyHash([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("BodyHash(abc) = %s", got)
	}
}

func TestOpenStoreSpec(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		spec, wantKind, wantErr string
	}{
		{filepath.Join(dir, "a.db"), ledger.KindBolt, ""},
		{"./notifier-ledger.db", ledger.KindBolt, ""},
		{"postgres://u:p@127.0.0.1:5432/db", ledger.KindPostgres, ""},
		{"postgresql://u:p@127.0.0.1:5432/db", ledger.KindPostgres, ""},
		{"", "", "empty; want a file path (bbolt) or a postgres:// or postgresql:// URL"},
		{"mysql://u:p@h/db", "", `scheme "mysql"; want a file path`},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			kind, err := ledger.SpecKind(tt.spec)
			if tt.wantErr != "" {
				if !errors.Is(err, ledger.ErrBadSpec) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("SpecKind = %v; want ErrBadSpec containing %q", err, tt.wantErr)
				}
				if _, err := ledger.OpenStore(context.Background(), tt.spec); !errors.Is(err, ledger.ErrBadSpec) {
					t.Fatalf("OpenStore = %v; want ErrBadSpec", err)
				}
				return
			}
			if err != nil || kind != tt.wantKind {
				t.Fatalf("SpecKind = %q, %v; want %q", kind, err, tt.wantKind)
			}
		})
	}
	s, err := ledger.OpenStore(context.Background(), filepath.Join(dir, "b.db"))
	if err != nil {
		t.Fatalf("OpenStore(path): %v", err)
	}
	if _, ok := s.(*ledger.Ledger); !ok {
		t.Errorf("OpenStore(path) = %T; want *ledger.Ledger", s)
	}
	s.Close()
}
