// Package ledgertest holds what tests of the ledger's users and stores
// share: Mem, an in-memory ledger.Store, and Contract, the one table of
// cases every Store must pass (the bbolt file, PostgreSQL and Mem), so the
// fake cannot drift from the stores.
package ledgertest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Mem is an in-memory ledger.Store with the stores' decisions (it passes
// Contract). BeginErr and FinishErr, when set, are returned by every Begin
// or Finish instead of deciding: a test injects ledger failures with them.
type Mem struct {
	mu        sync.Mutex
	m         map[string]ledger.Entry
	closed    bool
	BeginErr  error
	FinishErr error
}

var _ ledger.Store = (*Mem)(nil)
var _ ledger.WriteChecker = (*Mem)(nil)

// NewMem returns an empty Mem.
func NewMem() *Mem { return &Mem{m: map[string]ledger.Entry{}} }

// SetErrors sets BeginErr and FinishErr under the lock.
func (l *Mem) SetErrors(begin, finish error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.BeginErr, l.FinishErr = begin, finish
}

func (l *Mem) lock() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ledger.ErrClosed
	}
	return nil
}

// Begin decides with ledger.Decide (see ledger.Store.Begin). Like the
// bbolt file, it decides and writes nothing once ctx has ended (an error
// wrapping ctx.Err()).
func (l *Mem) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	if refkey == "" {
		return 0, ledger.Entry{}, fmt.Errorf("begin attempt: %w", ledger.ErrEmptyRefKey)
	}
	if err := l.lock(); err != nil {
		return 0, ledger.Entry{}, err
	}
	defer l.mu.Unlock()
	if l.BeginErr != nil {
		return 0, ledger.Entry{}, l.BeginErr
	}
	if err := ctx.Err(); err != nil {
		return 0, ledger.Entry{}, fmt.Errorf("begin attempt %s: gave up before the write: %w", refkey, err)
	}
	e, ok := l.m[refkey]
	if ok {
		if d := ledger.Decide(e, bodyHash); d != ledger.Proceed {
			return d, e, nil
		}
	} else {
		e = ledger.Entry{RefKey: refkey, CreatedAt: now}
	}
	e.State, e.Detail, e.UpdatedAt = ledger.Attempting, "", now
	e.Attempts++
	if e.BodyHash == "" {
		e.BodyHash = bodyHash
	}
	l.m[refkey] = e
	return ledger.Proceed, e, nil
}

// Finish records state if attempt is still the entry's (see
// ledger.Store.Finish).
func (l *Mem) Finish(_ context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	if err := ledger.CheckFinish(refkey, attempt, state); err != nil {
		return err
	}
	if err := l.lock(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	if l.FinishErr != nil {
		return l.FinishErr
	}
	e, ok := l.m[refkey]
	if err := ledger.CheckAttempt(refkey, e, ok, attempt, state); err != nil {
		return err
	}
	if !ok {
		e = ledger.Entry{RefKey: refkey, CreatedAt: now}
	}
	e.State, e.Detail, e.UpdatedAt = state, detail, now
	if e.BodyHash == "" {
		e.BodyHash = bodyHash
	}
	l.m[refkey] = e
	return nil
}

// Get returns the entry for refkey.
func (l *Mem) Get(_ context.Context, refkey string) (ledger.Entry, bool, error) {
	if err := l.lock(); err != nil {
		return ledger.Entry{}, false, err
	}
	defer l.mu.Unlock()
	e, ok := l.m[refkey]
	return e, ok, nil
}

// List returns the entries in state ("" = all), oldest UpdatedAt first.
func (l *Mem) List(_ context.Context, state outcome.Outcome, limit int) ([]ledger.Entry, error) {
	if err := l.lock(); err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	out := []ledger.Entry{}
	for _, e := range l.m {
		if state == "" || e.State == state {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b ledger.Entry) int {
		return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.RefKey, b.RefKey))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Resolve records an operator's verdict (see ledger.Store.Resolve).
func (l *Mem) Resolve(_ context.Context, refkey string, as outcome.Outcome, r ledger.Resolution, minAge time.Duration) error {
	if refkey == "" {
		return fmt.Errorf("resolve: %w", ledger.ErrEmptyRefKey)
	}
	if err := l.lock(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	e, ok := l.m[refkey]
	if !ok {
		return fmt.Errorf("resolve %s: %w", refkey, ledger.ErrNotFound)
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	r.As = as
	if err := ledger.CheckSettle(refkey, e, r, minAge); err != nil {
		return err
	}
	e.State, e.UpdatedAt, e.Resolution = as, r.At, &r
	if r.Code != "" {
		e.Detail = r.Code
	}
	l.m[refkey] = e
	return nil
}

// Prune deletes the entries ledger.CanPrune allows.
func (l *Mem) Prune(_ context.Context, cutoff time.Time) (int, error) {
	if err := l.lock(); err != nil {
		return 0, err
	}
	defer l.mu.Unlock()
	n := 0
	for k, e := range l.m {
		if ledger.CanPrune(e, cutoff) {
			delete(l.m, k)
			n++
		}
	}
	return n, nil
}

// Ping answers nil until Close.
func (l *Mem) Ping(context.Context) error {
	if err := l.lock(); err != nil {
		return err
	}
	l.mu.Unlock()
	return nil
}

// CheckWrite answers nil until Close (ledger.WriteChecker): the map takes
// every write.
func (l *Mem) CheckWrite(ctx context.Context) error { return l.Ping(ctx) }

// Close marks the ledger closed. Closing twice returns nil.
func (l *Mem) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return nil
}
