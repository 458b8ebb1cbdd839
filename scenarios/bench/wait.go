package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// waiter is the part of *vendormock.Worker that waitWorker uses.
type waiter interface {
	Wait(ctx context.Context) (int, error)
}

var _ waiter = (*vendormock.Worker)(nil)

// waitTick is how often waitWorker reads the records file.
const waitTick = 200 * time.Millisecond

// workerWatch is what a worker kind makes of a running worker's progress
// for waitWorker: the Go worker's limits (limitWatch) or a contract
// worker's queue watch (kind_contract.go).
type workerWatch struct {
	// tick runs every waitTick after the records file was read: records
	// is the lines so far, pollErr the read's error. It returns the
	// progress to show and, to end the wait, stop with the wait's error.
	tick func(records int, pollErr error) (progress int, stop bool, err error)
	// exit runs when the worker exited by itself: its exit code, or
	// waitErr when its exit could not be read, and the records so far.
	// It returns the wait's error.
	exit func(code int, waitErr error, records int) error
}

// waitWorker is the one wait on a worker container of every kind: it
// tails recordsPath (progress lines of label and n to w) until wk exits
// (watch.exit decides what the exit means) or watch.tick stops it, and
// returns ctx's error when ctx ends first.
func waitWorker(ctx context.Context, w io.Writer, wk waiter, recordsPath, label string, n int, watch workerWatch) error {
	type exit struct {
		code int
		err  error
	}
	exited := make(chan exit, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		code, err := wk.Wait(wctx)
		exited <- exit{code, err}
	}()
	prog := NewProgress(w, label, n)
	defer prog.Finish()
	recs := lab.NewRecords(recordsPath)
	ticker := time.NewTicker(waitTick)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-exited:
			if err := recs.Poll(); err == nil {
				prog.Set(recs.Len())
			}
			return watch.exit(e.code, e.err, recs.Len())
		case <-ticker.C:
			pollErr := recs.Poll()
			progress, stop, err := watch.tick(recs.Len(), pollErr)
			prog.Set(progress)
			if stop {
				return err
			}
		}
	}
}

// waitLimits bound how long a point's worker may take: in all (timeout)
// and without handling a message (stall).
type waitLimits struct{ timeout, stall time.Duration }

// limits are WorkerTimeout and StallTimeout of a point of n messages.
func (b *Bench) limits(n, rtt int) waitLimits {
	return waitLimits{timeout: WorkerTimeout(n, rtt, b.cfg.ServerDelayMS), stall: StallTimeout}
}

// pointLimits are limits of p, with a paced point's gaps added to the
// timeout and its largest gap to the stall limit.
func (b *Bench) pointLimits(p *point) waitLimits {
	lim := b.limits(p.n, p.rtt)
	if p.feed != nil {
		lim.timeout += sumGaps(p.feed.gaps)
		lim.stall += slices.Max(append([]time.Duration{0}, p.feed.gaps...))
	}
	return lim
}

// limitWatch is the Go worker's watch: the wait errors when the worker
// exits non-zero or before n records (ErrWorkerExit), when the records
// file cannot be read, when no record comes for lim.stall or the worker
// outlives lim.timeout (ErrWorkerTimeout). onTick, when not nil, runs at
// every tick (the TIME_WAIT sampler).
func limitWatch(n int, lim waitLimits, onTick func()) workerWatch {
	start := time.Now()
	handled, lastChange := 0, start
	return workerWatch{
		tick: func(records int, pollErr error) (int, bool, error) {
			if onTick != nil {
				onTick()
			}
			switch {
			case pollErr != nil:
				return handled, true, pollErr
			case time.Since(start) > lim.timeout:
				return handled, true, fmt.Errorf("%w: %d of %d messages handled in %s", ErrWorkerTimeout, handled, n, lim.timeout)
			case records != handled:
				handled, lastChange = records, time.Now()
			case time.Since(lastChange) > lim.stall:
				return handled, true, fmt.Errorf("%w: no message handled for %s (%d of %d)", ErrWorkerTimeout, lim.stall, handled, n)
			}
			return handled, false, nil
		},
		exit: func(code int, waitErr error, records int) error {
			switch {
			case waitErr != nil:
				return fmt.Errorf("wait for worker: %w", waitErr)
			case code != 0:
				return fmt.Errorf("%w: exit code %d after %d of %d messages", ErrWorkerExit, code, records, n)
			case records < n:
				return fmt.Errorf("%w: exit code 0 after %d of %d messages", ErrWorkerExit, records, n)
			}
			return nil
		},
	}
}
