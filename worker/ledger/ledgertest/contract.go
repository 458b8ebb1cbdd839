package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// T0 is the contract's clock: whole seconds in UTC, so every store keeps it
// exactly (PostgreSQL keeps microseconds).
var T0 = time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)

// Hash values the cases use: two different bodies of one refkey.
var (
	HashA = ledger.BodyHash([]byte(`{"refkey":"order-1","text":"your order shipped"}`))
	HashB = ledger.BodyHash([]byte(`{"refkey":"order-1","text":"another notification"}`))
)

// MinAge is the minimum age of an ATTEMPTING entry the cases give
// Resolve (the worker's default worst-case send time, 55 s).
const MinAge = 55 * time.Second

// Case is one contract case: Run gets a fresh, empty store.
type Case struct {
	Name string
	Run  func(t *testing.T, s ledger.Store)
}

// Contract runs every case of Cases against a fresh store from open (one
// per case; open registers its own cleanup).
func Contract(t *testing.T, open func(t *testing.T) ledger.Store) {
	t.Helper()
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, open(t)) })
	}
}

const key = "order-1"

// Cases is the one table every Store passes.
func Cases() []Case {
	cs := []Case{
		{"no entry proceeds", func(t *testing.T, s ledger.Store) {
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 1, BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0}
			expectBegin(t, s, key, HashA, T0, ledger.Proceed, want)
			expectGet(t, s, key, want)
		}},
		{"NOT_SENT with the same body proceeds again", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			finish(t, s, key, HashA, 1, outcome.NotSent, T0.Add(time.Second))
			now := T0.Add(time.Minute)
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 2, BodyHash: HashA, CreatedAt: T0, UpdatedAt: now}
			expectBegin(t, s, key, HashA, now, ledger.Proceed, want)
			expectGet(t, s, key, want)
		}},
		{"OUTSIDE_SEND_WINDOW is resendable, not a duplicate", func(t *testing.T, s ledger.Store) {
			finish(t, s, key, HashA, 0, outcome.OutsideSendWindow, T0)
			now := T0.Add(time.Hour)
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 1, BodyHash: HashA, CreatedAt: T0, UpdatedAt: now}
			expectBegin(t, s, key, HashA, now, ledger.Proceed, want)
		}},
		{"ATTEMPTING is unresolved and not written", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 1, BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0}
			expectBegin(t, s, key, HashA, T0.Add(time.Minute), ledger.Unresolved, want)
			expectGet(t, s, key, want)
		}},
		{"Begin with an ended context writes nothing", func(t *testing.T, s ledger.Store) {
			// The worker gives up on a Begin at its deadline and does not
			// send; an ATTEMPTING entry written after that would route the
			// message's redelivery to the unknown queue as a false UNKNOWN.
			cancelled, cancel := context.WithCancel(context.Background())
			cancel()
			expired, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer stop()
			for _, c := range []struct {
				ctx  context.Context
				want error
			}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
				if d, e, err := s.Begin(c.ctx, key, HashA, T0); !errors.Is(err, c.want) {
					t.Errorf("Begin with an ended context = %v, %+v, %v; want an error wrapping %v", d, e, err, c.want)
				}
			}
			expectMissing(t, s, key)
			// A resendable entry is left as it was: no attempt counted.
			finish(t, s, key, HashA, begin(t, s, key, HashA, T0), outcome.NotSent, T0)
			if _, _, err := s.Begin(expired, key, HashA, T0.Add(time.Minute)); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Begin of a NOT_SENT entry with an ended context = %v; want an error wrapping %v", err, context.DeadlineExceeded)
			}
			expectGet(t, s, key, ledger.Entry{RefKey: key, State: outcome.NotSent, Attempts: 1, Detail: "detail", BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0})
		}},
		{"a resendable entry with another body is a conflict", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			finish(t, s, key, HashA, 1, outcome.NotSent, T0)
			want := ledger.Entry{RefKey: key, State: outcome.NotSent, Attempts: 1, Detail: "detail", BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0}
			expectBegin(t, s, key, HashB, T0.Add(time.Minute), ledger.Conflict, want)
			expectGet(t, s, key, want)
		}},
		{"an attempting entry with another body is a conflict", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 1, BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0}
			expectBegin(t, s, key, HashB, T0.Add(time.Minute), ledger.Conflict, want)
		}},
		{"an entry without a body hash takes the first one", func(t *testing.T, s ledger.Store) {
			finish(t, s, key, "", 0, outcome.NotSent, T0)
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 1, BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0.Add(time.Second)}
			expectBegin(t, s, key, HashA, T0.Add(time.Second), ledger.Proceed, want)
		}},
		{"Finish without Begin creates the entry with 0 attempts", func(t *testing.T, s ledger.Store) {
			finish(t, s, key, HashA, 0, outcome.Invalid, T0)
			expectGet(t, s, key, ledger.Entry{RefKey: key, State: outcome.Invalid, Detail: "detail", BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0})
		}},
		{"Finish keeps the first body hash and the creation time", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			finish(t, s, key, HashB, 1, outcome.Sent, T0.Add(time.Second))
			expectGet(t, s, key, ledger.Entry{RefKey: key, State: outcome.Sent, Attempts: 1, Detail: "detail", BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0.Add(time.Second)})
		}},
		{"Finish refuses what is not an outcome of a refkey", func(t *testing.T, s ledger.Store) {
			ctx := context.Background()
			for _, st := range []outcome.Outcome{ledger.Attempting, outcome.Duplicate, "DELIVERED", ""} {
				if err := s.Finish(ctx, key, HashA, 0, st, "", T0); !errors.Is(err, ledger.ErrBadState) {
					t.Errorf("Finish(%q) = %v; want ErrBadState", st, err)
				}
			}
			if err := s.Finish(ctx, key, HashA, -1, outcome.Sent, "", T0); !errors.Is(err, ledger.ErrBadState) {
				t.Errorf("Finish(attempt -1) = %v; want ErrBadState", err)
			}
			if err := s.Finish(ctx, "", HashA, 0, outcome.Sent, "", T0); !errors.Is(err, ledger.ErrEmptyRefKey) {
				t.Errorf("Finish(empty refkey) = %v; want ErrEmptyRefKey", err)
			}
			if _, _, err := s.Begin(ctx, "", HashA, T0); !errors.Is(err, ledger.ErrEmptyRefKey) {
				t.Errorf("Begin(empty refkey) = %v; want ErrEmptyRefKey", err)
			}
			expectMissing(t, s, key)
		}},
		{"resolve UNKNOWN as not sent: the next copy is sent", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			finish(t, s, key, HashA, 1, outcome.Unknown, T0)
			r := ledger.Resolution{By: "ops-1", Why: "vendor support: not received", At: T0.Add(time.Hour)}
			if err := s.Resolve(context.Background(), key, outcome.NotSent, r, MinAge); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			r.As = outcome.NotSent
			e := expectGet(t, s, key, ledger.Entry{RefKey: key, State: outcome.NotSent, Attempts: 1, Detail: "detail", BodyHash: HashA,
				CreatedAt: T0, UpdatedAt: r.At, Resolution: &r})
			now := T0.Add(2 * time.Hour)
			e.State, e.Attempts, e.Detail, e.UpdatedAt = ledger.Attempting, 2, "", now
			expectBegin(t, s, key, HashA, now, ledger.Proceed, e)
		}},
		{"resolve ATTEMPTING as sent: the next copy is a duplicate", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			r := ledger.Resolution{By: "ops-1", Why: "vendor journal shows it", At: T0.Add(time.Hour)}
			if err := s.Resolve(context.Background(), key, outcome.Sent, r, MinAge); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			r.As = outcome.Sent
			want := ledger.Entry{RefKey: key, State: outcome.Sent, Attempts: 1, BodyHash: HashA, CreatedAt: T0, UpdatedAt: r.At, Resolution: &r}
			expectBegin(t, s, key, HashA, T0.Add(2*time.Hour), ledger.Duplicate, want)
		}},
		{"resolve refuses a missing entry, a final entry and a bad verdict", func(t *testing.T, s ledger.Store) {
			ctx := context.Background()
			r := ledger.Resolution{By: "ops-1", Why: "test", At: T0}
			if err := s.Resolve(ctx, "nope", outcome.NotSent, r, MinAge); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("Resolve(missing) = %v; want ErrNotFound", err)
			}
			begin(t, s, key, HashA, T0)
			finish(t, s, key, HashA, 1, outcome.Unknown, T0)
			if err := s.Resolve(ctx, key, outcome.Rejected, r, MinAge); !errors.Is(err, ledger.ErrBadState) {
				t.Errorf("Resolve(as REJECTED) = %v; want ErrBadState", err)
			}
			finish(t, s, "k-sent", HashA, 0, outcome.Sent, T0)
			if err := s.Resolve(ctx, "k-sent", outcome.NotSent, r, MinAge); !errors.Is(err, ledger.ErrBadState) {
				t.Errorf("Resolve(SENT entry) = %v; want ErrBadState", err)
			}
			if e, _, _ := s.Get(ctx, key); e.State != outcome.Unknown || e.Resolution != nil {
				t.Errorf("a refused Resolve wrote %+v", e)
			}
		}},
		{"resolve refuses an ATTEMPTING entry younger than the minimum age", func(t *testing.T, s ledger.Store) {
			ctx := context.Background()
			begin(t, s, key, HashA, T0)
			r := ledger.Resolution{By: "ops-1", Why: "vendor: not received", At: T0.Add(MinAge - time.Second)}
			err := s.Resolve(ctx, key, outcome.NotSent, r, MinAge)
			if !errors.Is(err, ledger.ErrAttemptTooRecent) || !strings.Contains(err.Error(), MinAge.String()) {
				t.Fatalf("Resolve of a %s-old attempt = %v; want ErrAttemptTooRecent naming %s", MinAge-time.Second, err, MinAge)
			}
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 1, BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0}
			expectGet(t, s, key, want)
			r.At = T0.Add(MinAge)
			if err := s.Resolve(ctx, key, outcome.NotSent, r, MinAge); err != nil {
				t.Fatalf("Resolve of a %s-old attempt: %v", MinAge, err)
			}
			// UNKNOWN has its outcome already: no attempt is in flight.
			k := "unknown-1"
			finish(t, s, k, HashA, begin(t, s, k, HashA, T0), outcome.Unknown, T0)
			r.At = T0.Add(time.Second)
			if err := s.Resolve(ctx, k, outcome.Sent, r, MinAge); err != nil {
				t.Fatalf("Resolve of a young UNKNOWN entry: %v", err)
			}
		}},
		{"prune deletes old entries whose copies cannot come back", func(t *testing.T, s ledger.Store) {
			// Aged out: nothing of these waits in a queue with no expiry.
			for _, st := range []outcome.Outcome{outcome.Sent, outcome.NotSent, outcome.OutsideSendWindow, outcome.Invalid} {
				finish(t, s, "old-"+string(st), HashA, begin(t, s, "old-"+string(st), HashA, T0), st, T0)
			}
			// Kept: their copies wait in .unknown / .failed until an operator
			// moves them, at any age (docs/deployment.md#retention).
			begin(t, s, "old-ATTEMPTING", HashA, T0)
			for _, st := range []outcome.Outcome{outcome.Unknown, outcome.Rejected} {
				finish(t, s, "old-"+string(st), HashA, begin(t, s, "old-"+string(st), HashA, T0), st, T0)
			}
			a := begin(t, s, "old-resolved", HashA, T0)
			finish(t, s, "old-resolved", HashA, a, outcome.Unknown, T0)
			r := ledger.Resolution{By: "ops-1", Why: "vendor journal shows it", At: T0.Add(time.Hour)}
			if err := s.Resolve(context.Background(), "old-resolved", outcome.Sent, r, MinAge); err != nil {
				t.Fatal(err)
			}
			finish(t, s, "new-SENT", HashA, 0, outcome.Sent, T0.Add(48*time.Hour))
			n, err := s.Prune(context.Background(), T0.Add(24*time.Hour))
			if err != nil || n != 4 {
				t.Errorf("Prune = %d, %v; want 4, nil", n, err)
			}
			expectKeys(t, s, "", 0, "old-ATTEMPTING", "old-REJECTED", "old-UNKNOWN", "old-resolved", "new-SENT")
		}},
		{"list filters by state, oldest first, with a limit", func(t *testing.T, s ledger.Store) {
			finish(t, s, "c", HashA, 0, outcome.Unknown, T0.Add(3*time.Second))
			finish(t, s, "a", HashA, 0, outcome.Unknown, T0.Add(2*time.Second))
			finish(t, s, "b", HashA, 0, outcome.Sent, T0.Add(1*time.Second))
			finish(t, s, "d", HashA, 0, outcome.Unknown, T0.Add(2*time.Second))
			expectKeys(t, s, outcome.Unknown, 0, "a", "d", "c")
			expectKeys(t, s, "", 0, "b", "a", "d", "c")
			expectKeys(t, s, "", 2, "b", "a")
			expectKeys(t, s, outcome.Rejected, 0)
		}},
		{"closed store refuses; closing twice is nil", func(t *testing.T, s ledger.Store) {
			ctx := context.Background()
			if err := s.Ping(ctx); err != nil {
				t.Fatalf("Ping open store: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("second Close = %v; want nil", err)
			}
			if _, _, err := s.Begin(ctx, key, HashA, T0); !errors.Is(err, ledger.ErrClosed) {
				t.Errorf("Begin after Close = %v; want ErrClosed", err)
			}
			if err := s.Ping(ctx); !errors.Is(err, ledger.ErrClosed) {
				t.Errorf("Ping after Close = %v; want ErrClosed", err)
			}
		}},
	}
	cs = append(cs, finishCases()...)
	cs = append(cs, settleCases()...)
	// Every final state with the same body is a duplicate, and not written.
	for _, st := range []outcome.Outcome{outcome.Sent, outcome.Rejected, outcome.Unknown, outcome.Invalid} {
		cs = append(cs, Case{st.String() + " with the same body is a duplicate", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			finish(t, s, key, HashA, 1, st, T0)
			want := ledger.Entry{RefKey: key, State: st, Attempts: 1, Detail: "detail", BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0}
			expectBegin(t, s, key, HashA, T0.Add(time.Minute), ledger.Duplicate, want)
			expectGet(t, s, key, want)
		}})
		cs = append(cs, Case{st.String() + " with another body is a conflict", func(t *testing.T, s ledger.Store) {
			begin(t, s, key, HashA, T0)
			finish(t, s, key, HashA, 1, st, T0)
			want := ledger.Entry{RefKey: key, State: st, Attempts: 1, Detail: "detail", BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0}
			expectBegin(t, s, key, HashB, T0.Add(time.Minute), ledger.Conflict, want)
		}})
	}
	return cs
}

// begin wants Proceed and returns the attempt it began (Entry.Attempts).
func begin(t *testing.T, s ledger.Store, refkey, hash string, now time.Time) int {
	t.Helper()
	d, e, err := s.Begin(context.Background(), refkey, hash, now)
	if err != nil || d != ledger.Proceed {
		t.Fatalf("Begin(%s) = %v, %v; want proceed", refkey, d, err)
	}
	return e.Attempts
}

// finish closes attempt (0: an outcome decided without a send).
func finish(t *testing.T, s ledger.Store, refkey, hash string, attempt int, st outcome.Outcome, now time.Time) {
	t.Helper()
	if err := s.Finish(context.Background(), refkey, hash, attempt, st, "detail", now); err != nil {
		t.Fatalf("Finish(%s #%d, %s): %v", refkey, attempt, st, err)
	}
}

// expectStale calls Finish(attempt, st) and wants it refused with a
// *StaleAttemptError naming the entry as found (wantState "" = none).
func expectStale(t *testing.T, s ledger.Store, refkey string, attempt int, st, wantState outcome.Outcome, wantAttempts int) {
	t.Helper()
	err := s.Finish(context.Background(), refkey, HashA, attempt, st, "late", T0.Add(time.Hour))
	se, ok := errors.AsType[*ledger.StaleAttemptError](err)
	if !ok || !errors.Is(err, ledger.ErrStaleAttempt) {
		t.Fatalf("Finish(%s #%d, %s) = %v; want a *StaleAttemptError (ErrStaleAttempt)", refkey, attempt, st, err)
	}
	if se.RefKey != refkey || se.Attempt != attempt || se.State != st || se.Found != (wantState != "") ||
		se.Current.State != wantState || se.Current.Attempts != wantAttempts {
		t.Errorf("stale error %+v; want refkey %s attempt %d state %s, entry found %v %s/%d",
			se, refkey, attempt, st, wantState != "", wantState, wantAttempts)
	}
}

func expectBegin(t *testing.T, s ledger.Store, refkey, hash string, now time.Time, wantD ledger.Decision, want ledger.Entry) {
	t.Helper()
	d, e, err := s.Begin(context.Background(), refkey, hash, now)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if d != wantD {
		t.Errorf("Begin decision = %v; want %v", d, wantD)
	}
	if diff := Diff(e, want); diff != "" {
		t.Errorf("Begin entry: %s", diff)
	}
}

func expectGet(t *testing.T, s ledger.Store, refkey string, want ledger.Entry) ledger.Entry {
	t.Helper()
	e, ok, err := s.Get(context.Background(), refkey)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = found %v, %v", refkey, ok, err)
	}
	if diff := Diff(e, want); diff != "" {
		t.Errorf("stored entry: %s", diff)
	}
	return e
}

func expectMissing(t *testing.T, s ledger.Store, refkey string) {
	t.Helper()
	if e, ok, err := s.Get(context.Background(), refkey); err != nil || ok {
		t.Errorf("Get(%s) = %+v, found %v, %v; want no entry", refkey, e, ok, err)
	}
}

func expectKeys(t *testing.T, s ledger.Store, st outcome.Outcome, limit int, want ...string) {
	t.Helper()
	es, err := s.List(context.Background(), st, limit)
	if err != nil {
		t.Fatalf("List(%q, %d): %v", st, limit, err)
	}
	got := make([]string, len(es))
	for i, e := range es {
		got[i] = e.RefKey
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List(%q, %d) = %v; want %v", st, limit, got, want)
	}
}

// Diff returns "" when a and b are the same entry (times compared with
// Equal), else a description of the first difference.
func Diff(got, want ledger.Entry) string {
	switch {
	case got.RefKey != want.RefKey || got.State != want.State || got.Attempts != want.Attempts ||
		got.Detail != want.Detail || got.BodyHash != want.BodyHash:
		return fmt.Sprintf("got %s/%s/%d/%q/%.8s, want %s/%s/%d/%q/%.8s",
			got.RefKey, got.State, got.Attempts, got.Detail, got.BodyHash,
			want.RefKey, want.State, want.Attempts, want.Detail, want.BodyHash)
	case !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt):
		return fmt.Sprintf("times created %v updated %v, want %v %v", got.CreatedAt, got.UpdatedAt, want.CreatedAt, want.UpdatedAt)
	case (got.Resolution == nil) != (want.Resolution == nil):
		return fmt.Sprintf("resolution %+v, want %+v", got.Resolution, want.Resolution)
	case got.Resolution != nil && (got.Resolution.By != want.Resolution.By || got.Resolution.Why != want.Resolution.Why ||
		got.Resolution.As != want.Resolution.As || !got.Resolution.At.Equal(want.Resolution.At)):
		return fmt.Sprintf("resolution %+v, want %+v", *got.Resolution, *want.Resolution)
	}
	return ""
}
