package worker

import "time"

// callRunnerIdle is how long a ledger-call goroutine waits for the next
// call before it ends (100 ms: longer than the gap between two messages of
// a busy worker, shorter than a test's goroutine-leak check waits).
const callRunnerIdle = 100 * time.Millisecond

// callRunner runs the Handler's ledger calls (withLedgerDeadline) on
// goroutines that are kept between calls: a call that started on a fresh
// goroutine grew its stack through bbolt and encoding/json on every
// message (runtime.copystack was about 8% of the worker's CPU per message
// in BenchmarkMessagePath; docs/worker.md, Cost per message). A call still
// running when a new one comes (one given up at its deadline, or another
// handler's at Concurrency above 1) keeps its goroutine; the new call
// gets an idle one or a new one, so a stuck ledger never blocks a call
// behind it. Safe for concurrent use; the zero value is not usable
// (newCallRunner).
type callRunner struct {
	work chan func()
}

func newCallRunner() *callRunner { return &callRunner{work: make(chan func())} }

// run starts f on an idle goroutine of r, or on a new one, and returns at
// once. A nil r starts a new goroutine each time.
func (r *callRunner) run(f func()) {
	if r == nil {
		go f()
		return
	}
	select {
	case r.work <- f:
	default:
		go r.loop(f)
	}
}

// loop runs f, then every call handed to it, until it has waited
// callRunnerIdle for one.
func (r *callRunner) loop(f func()) {
	idle := time.NewTimer(callRunnerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(callRunnerIdle)
		select {
		case f = <-r.work:
		case <-idle.C:
			return
		}
	}
}
