package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)

func openTemp(t *testing.T) (*Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "ledger.db")
	l, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, path
}

func TestBeginTransitions(t *testing.T) {
	tests := []struct {
		name         string
		prior        State // "" = no entry; Attempting = Begin without Finish
		wantDecision Decision
		wantState    State
		wantAttempts int
	}{
		{"no entry proceeds", "", Proceed, Attempting, 1},
		{"NOT_SENT proceeds again", NotSent, Proceed, Attempting, 2},
		{"OUTSIDE_SEND_WINDOW proceeds when released", OutsideSendWindow, Proceed, Attempting, 2},
		{"ATTEMPTING is unresolved", Attempting, Unresolved, Attempting, 1},
		{"SENT is a duplicate", Sent, Duplicate, Sent, 1},
		{"REJECTED is a duplicate", Rejected, Duplicate, Rejected, 1},
		{"UNKNOWN is a duplicate", Unknown, Duplicate, Unknown, 1},
		{"INVALID is a duplicate", Invalid, Duplicate, Invalid, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := openTemp(t)
			const key = "order-1"
			if tt.prior != "" {
				if d, _, err := l.Begin(key, t0); err != nil || d != Proceed {
					t.Fatalf("first Begin = %v, %v; want Proceed", d, err)
				}
				if tt.prior != Attempting {
					if err := l.Finish(key, tt.prior, "prior", t0.Add(time.Second)); err != nil {
						t.Fatalf("Finish: %v", err)
					}
				}
			}
			now := t0.Add(time.Minute)
			d, e, err := l.Begin(key, now)
			if err != nil {
				t.Fatalf("Begin: %v", err)
			}
			if d != tt.wantDecision || e.State != tt.wantState || e.Attempts != tt.wantAttempts || e.RefKey != key {
				t.Fatalf("Begin = %v %+v; want %v state %s attempts %d", d, e, tt.wantDecision, tt.wantState, tt.wantAttempts)
			}
			stored, ok, err := l.Get(key)
			if err != nil || !ok {
				t.Fatalf("Get = %v, %v", ok, err)
			}
			if stored != e {
				t.Fatalf("stored %+v, Begin returned %+v", stored, e)
			}
			if d == Proceed && !stored.UpdatedAt.Equal(now) {
				t.Errorf("UpdatedAt = %v, want %v", stored.UpdatedAt, now)
			}
			if d != Proceed && stored.UpdatedAt.Equal(now) {
				t.Errorf("a %v decision wrote the entry", d)
			}
		})
	}
}

func TestFinish(t *testing.T) {
	l, _ := openTemp(t)
	tests := []struct {
		name    string
		refkey  string
		state   State
		wantErr error
	}{
		{"sent", "k-sent", Sent, nil},
		{"without begin (held)", "k-held", OutsideSendWindow, nil},
		{"attempting refused", "k-att", Attempting, ErrBadState},
		{"made-up state refused", "k-bad", State("DELIVERED"), ErrBadState},
		{"empty refkey refused", "", Sent, ErrEmptyRefKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := l.Finish(tt.refkey, tt.state, "code=1000", t0)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Finish = %v, want %v", err, tt.wantErr)
			}
			e, ok, gerr := l.Get(tt.refkey)
			if gerr != nil {
				t.Fatalf("Get: %v", gerr)
			}
			if tt.wantErr != nil {
				if ok {
					t.Fatalf("a refused Finish wrote %+v", e)
				}
				return
			}
			if !ok || e.State != tt.state || e.Detail != "code=1000" || e.Attempts != 0 {
				t.Fatalf("entry %+v (found %v)", e, ok)
			}
		})
	}
	if _, _, err := l.Begin("", t0); !errors.Is(err, ErrEmptyRefKey) {
		t.Errorf("Begin(\"\") = %v, want ErrEmptyRefKey", err)
	}
}

func TestCrashAfterBeginIsUnresolvedAfterReopen(t *testing.T) {
	l, path := openTemp(t)
	if d, _, err := l.Begin("crash-1", t0); err != nil || d != Proceed {
		t.Fatalf("Begin = %v, %v", d, err)
	}
	if d, _, err := l.Begin("done-1", t0); err != nil || d != Proceed {
		t.Fatalf("Begin = %v, %v", d, err)
	}
	if err := l.Finish("done-1", Sent, "", t0); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if d, _, err := l.Begin("retry-1", t0); err != nil || d != Proceed {
		t.Fatalf("Begin = %v, %v", d, err)
	}
	if err := l.Finish("retry-1", NotSent, "dial refused", t0); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	// The process dies here: no Finish for crash-1. Close only releases the
	// lock; Begin already synced its commit.
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	l2, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l2.Close()
	for _, tt := range []struct {
		key      string
		want     Decision
		attempts int
	}{
		{"crash-1", Unresolved, 1},
		{"done-1", Duplicate, 1},
		{"retry-1", Proceed, 2},
		{"new-1", Proceed, 1},
	} {
		d, e, err := l2.Begin(tt.key, t0.Add(time.Hour))
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
	if want := []string{"crash-1", "done-1", "new-1", "retry-1"}; len(keys) != len(want) || keys[0] != want[0] || keys[1] != want[1] || keys[2] != want[2] || keys[3] != want[3] {
		t.Fatalf("All keys = %v, want %v", keys, want)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	_, path := openTemp(t)
	start := time.Now()
	l2, err := Open(path)
	if err == nil {
		l2.Close()
		t.Fatal("second Open of a held ledger succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if waited := time.Since(start); waited < LockTimeout/2 {
		t.Errorf("gave up after %v, want about %v", waited, LockTimeout)
	}
	t.Logf("second Open: %v", err)
}

func TestClosed(t *testing.T) {
	l, _ := openTemp(t)
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, _, err := l.Begin("k", t0); !errors.Is(err, ErrClosed) {
		t.Errorf("Begin after Close = %v, want ErrClosed", err)
	}
	if err := l.Finish("k", Sent, "", t0); !errors.Is(err, ErrClosed) {
		t.Errorf("Finish after Close = %v, want ErrClosed", err)
	}
	if _, _, err := l.Get("k"); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
}

func TestOpenNotALedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte("this is not a bbolt file, just text long enough to be read as a page header.............."), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := Open(path); err == nil {
		l.Close()
		t.Fatal("Open accepted a non-bbolt file")
	}
}

// TestConcurrentBeginOnlyOneProceeds: goroutines racing on one refkey, one
// Proceed and the rest Unresolved; the write transaction is the lock.
func TestConcurrentBeginOnlyOneProceeds(t *testing.T) {
	l, _ := openTemp(t)
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results = map[Decision]int{}
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, _, err := l.Begin("race", t0)
			if err != nil {
				t.Errorf("Begin: %v", err)
				return
			}
			mu.Lock()
			results[d]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if results[Proceed] != 1 || results[Unresolved] != n-1 {
		t.Fatalf("decisions %v, want 1 proceed and %d unresolved", results, n-1)
	}
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[Decision]string{Proceed: "proceed", Duplicate: "duplicate", Unresolved: "unresolved", 9: "Decision(9)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(d), got, want)
		}
	}
}
