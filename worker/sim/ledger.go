package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// ErrLedgerFault is wrapped by every error the fault layer makes up.
var ErrLedgerFault = errors.New("sim: ledger fault")

// DeadlineModel is the ledger deadline the fault layer models by the
// simulated clock (the worker's DefaultLedgerTimeout, 2 s): a
// "past-deadline" fault spends it, a "slow" one stays within it.
const DeadlineModel = 2 * time.Second

// Ledger is the fault layer in front of the real store (the bbolt
// *ledger.Ledger or the in-memory ledgertest.Mem): a ledger.Store whose
// next operation can be made to fail (LedgerFaults). Every fault answers
// at once, by the simulated clock: no real timer decides anything. The
// handler, the sweeper, the resolver and the drain all use it; the checker
// reads Inner.
type Ledger struct {
	inner ledger.Store
	clock *Clock
	// open reopens the store after a crash (bbolt); nil for a store that
	// lives outside the process (Mem stands for a database server).
	open func() (ledger.Store, error)
	path string
	// armed fault
	fault, op string
	d         time.Duration
	// downUntil: the ledger refuses every operation, Ping and CheckWrite
	// included, until this reading of the clock (an outage, the "down"
	// fault); epoch numbers the outages.
	downUntil time.Time
	epoch     int
	// doubt is told when a fault leaves refkey's outcome unrecorded.
	doubt func(refkey, why string)
	// Failed counts the operations a fault made fail; Faults counts the
	// faults that fired, by kind.
	Failed int
	Faults map[string]int
	// loseBegin (a planted defect, Plant.LoseBeginOnCrash): the file as
	// it was before the last Begin is put back when the process crashes,
	// as a disk that acknowledged an fsync it did not do.
	loseBegin bool
	before    []byte
}

var (
	_ ledger.Store        = (*Ledger)(nil)
	_ ledger.WriteChecker = (*Ledger)(nil)
)

// Inner returns the store behind the faults.
func (l *Ledger) Inner() ledger.Store { return l.inner }

// Arm arms fault (LedgerFaults) on the next operation op ("begin",
// "finish", "" any), d its duration where it has one. "down" starts an
// outage at once, of d by the clock (an outage under way is extended,
// not restarted); "" disarms the armed fault and ends an outage.
func (l *Ledger) Arm(fault, op string, d time.Duration) {
	switch fault {
	case "down":
		if !l.Down() {
			l.epoch++
		}
		if until := l.clock.Now().Add(d); until.After(l.downUntil) {
			l.downUntil = until
		}
		l.Faults[fault]++
		return
	case "":
		l.downUntil = time.Time{}
	}
	l.fault, l.op, l.d = fault, op, d
}

// Down reports whether the ledger is in an outage now (the "down" fault).
func (l *Ledger) Down() bool { return l.clock.Now().Before(l.downUntil) }

// Outage returns the number of the current outage (Down), or of the last
// one.
func (l *Ledger) Outage() int { return l.epoch }

// downErr is the error of op refused by an outage.
func (l *Ledger) downErr(op string) error {
	return fmt.Errorf("ledger %s: %w: down until %s", op, ErrLedgerFault, l.downUntil.In(seoul).Format("15:04:05.000"))
}

func (l *Ledger) take(op string) (string, time.Duration) {
	if l.fault == "" || (l.op != "" && l.op != op) {
		return "", 0
	}
	f, d := l.fault, l.d
	l.fault = ""
	l.Faults[f]++
	if f != "slow" && f != "pause" {
		l.Failed++
	}
	return f, d
}

func faultErr(op, f string) error {
	if f == "error" {
		return fmt.Errorf("ledger %s: %w", op, ErrLedgerFault)
	}
	return fmt.Errorf("ledger %s: %w: %w", op, ErrLedgerFault, context.DeadlineExceeded)
}

// expired is a context whose deadline has passed.
func expired(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, time.Unix(0, 0))
}

// run applies the fault armed for op around call, which does the store's
// work with the context it is given.
func (l *Ledger) run(ctx context.Context, op string, call func(context.Context) error) error {
	_, err := l.runFault(ctx, op, call)
	return err
}

// runFault is run that also returns the fault that fired ("" none).
func (l *Ledger) runFault(ctx context.Context, op string, call func(context.Context) error) (string, error) {
	if l.Down() {
		l.Failed++
		return "down", l.downErr(op)
	}
	f, d := l.take(op)
	switch f {
	case "error", "timeout":
		return f, faultErr(op, f)
	case "commit-timeout":
		_ = call(ctx)
		return f, faultErr(op, f)
	case "slow":
		l.clock.Advance(d)
		return f, call(ctx)
	case "pause":
		err := call(ctx)
		l.clock.Advance(d)
		return f, err
	case "past-deadline":
		l.clock.Advance(DeadlineModel)
		ectx, cancel := expired(ctx)
		defer cancel()
		_ = call(ectx)
		return f, faultErr(op, f)
	}
	return f, call(ctx)
}

// Begin is the store's Begin behind the armed fault.
func (l *Ledger) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	var (
		dec   ledger.Decision
		e     ledger.Entry
		wrote bool
	)
	if l.loseBegin {
		l.before, _ = os.ReadFile(l.path)
	}
	f, err := l.runFault(ctx, "begin", func(c context.Context) error {
		var err error
		dec, e, err = l.inner.Begin(c, refkey, bodyHash, now)
		wrote = err == nil && dec == ledger.Proceed
		return err
	})
	if err != nil {
		if wrote && f == "commit-timeout" {
			l.doubt(refkey, "ledger Begin committed, its answer lost")
		}
		return 0, ledger.Entry{}, err
	}
	return dec, e, nil
}

// Finish is the store's Finish behind the armed fault. A Finish that
// fails while the entry stays ATTEMPTING leaves the refkey in doubt.
func (l *Ledger) Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	err := l.run(ctx, "finish", func(c context.Context) error {
		return l.inner.Finish(c, refkey, bodyHash, attempt, state, detail, now)
	})
	if err != nil {
		if e, ok, gerr := l.inner.Get(context.Background(), refkey); gerr == nil && ok && e.State == ledger.Attempting {
			l.doubt(refkey, "ledger Finish failed, the attempt's outcome not recorded")
		}
	}
	return err
}

// Get is the store's Get behind the armed fault.
func (l *Ledger) Get(ctx context.Context, refkey string) (e ledger.Entry, ok bool, err error) {
	err = l.run(ctx, "get", func(c context.Context) error {
		var err error
		e, ok, err = l.inner.Get(c, refkey)
		return err
	})
	return e, ok, err
}

// List is the store's List behind the armed fault.
func (l *Ledger) List(ctx context.Context, state outcome.Outcome, limit int) (es []ledger.Entry, err error) {
	err = l.run(ctx, "list", func(c context.Context) error {
		var err error
		es, err = l.inner.List(c, state, limit)
		return err
	})
	return es, err
}

// Resolve is the store's Resolve behind the armed fault.
func (l *Ledger) Resolve(ctx context.Context, refkey string, as outcome.Outcome, r ledger.Resolution, minAge time.Duration) error {
	return l.run(ctx, "resolve", func(c context.Context) error { return l.inner.Resolve(c, refkey, as, r, minAge) })
}

// Prune is the store's Prune behind the armed fault.
func (l *Ledger) Prune(ctx context.Context, cutoff time.Time) (n int, err error) {
	err = l.run(ctx, "prune", func(c context.Context) error {
		var err error
		n, err = l.inner.Prune(c, cutoff)
		return err
	})
	return n, err
}

// Ping is the store's Ping; it fails during an outage (no other fault).
func (l *Ledger) Ping(ctx context.Context) error {
	if l.Down() {
		return l.downErr("ping")
	}
	return l.inner.Ping(ctx)
}

// CheckWrite is the store's CheckWrite (ledger.WriteChecker), else its
// Ping; it fails during an outage (no other fault).
func (l *Ledger) CheckWrite(ctx context.Context) error {
	if l.Down() {
		return l.downErr("check write")
	}
	if w, ok := l.inner.(ledger.WriteChecker); ok {
		return w.CheckWrite(ctx)
	}
	return l.inner.Ping(ctx)
}

// Close closes the store.
func (l *Ledger) Close() error { return l.inner.Close() }

// Crash is the worker process's death as the store sees it: a store the
// process opened (bbolt) is closed and opened again; the planted lost
// write puts the file back as it was before the last Begin.
func (l *Ledger) Crash() error {
	if l.open == nil {
		return nil
	}
	if err := l.inner.Close(); err != nil {
		return fmt.Errorf("crash ledger: %w", err)
	}
	if l.loseBegin && l.before != nil {
		if err := os.WriteFile(l.path, l.before, 0o600); err != nil {
			return fmt.Errorf("crash ledger: lose the last Begin: %w", err)
		}
		l.before = nil
	}
	s, err := l.open()
	if err != nil {
		return fmt.Errorf("crash ledger: reopen: %w", err)
	}
	l.inner = s
	return nil
}
