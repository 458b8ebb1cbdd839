package sim

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Options configure Run and RunSchedule.
type Options struct {
	// Seeds is the number of schedules Run runs (seeds FirstSeed,
	// FirstSeed+1, ...).
	Seeds     int
	FirstSeed uint64
	// Workers run schedules side by side; 0 = GOMAXPROCS. Each schedule
	// is deterministic whatever the number.
	Workers int
	// Progress, when set, is called after each schedule (from Run's
	// goroutines, one call at a time).
	Progress func(done, failed int)
	// NoShrink reports failing seeds without shrinking them.
	NoShrink bool
	// ShrinkPerInvariant is how many failing seeds of each invariant Run
	// shrinks, the lowest seeds first (0 = 3); the others keep their
	// whole schedule and no trace (replay them by seed).
	ShrinkPerInvariant int
	// Dir is where the bbolt ledgers' temporary folders go ("" = the
	// system's temporary folder).
	Dir string
	// Ledger, when "bbolt" or "mem", runs every schedule on that ledger;
	// "" lets each seed choose (one in 16 on bbolt).
	Ledger string
	// Replicas, when 1 or 2, runs every schedule with that many worker
	// replicas (their events' Replica taken modulo); 0 lets each seed
	// choose (Config.Replicas).
	Replicas int
	// Concurrency, when 1 or more, runs every schedule's serve at that
	// concurrency; 0 lets each seed choose (Config.Concurrency).
	Concurrency int
	// SingleActiveConsumer runs every schedule with single active
	// consumer on the main queue (a seed that chose competing consumers,
	// Config.Competing, runs without them); Plant.NoSingleActiveConsumer
	// overrides it.
	SingleActiveConsumer bool
	// Plant plants a defect in the worker (negative controls).
	Plant Plant
}

// Plant is a defect the simulator plants, to prove that it finds it.
type Plant struct {
	// ReplaySends wraps the Sender so that an UNKNOWN send is sent again,
	// as a transport that replays a POST.
	ReplaySends bool
	// LoseBeginOnCrash, on a bbolt ledger (it needs a file: use it with
	// Options.Ledger "bbolt"), puts the file back at each crash as it was
	// before the last Begin: a disk that lost a committed write.
	LoseBeginOnCrash bool
	// ReturnIsRouted takes a publish the broker returned unroutable for a
	// routed one (the copy is lost, its original acked).
	ReturnIsRouted bool
	// LedgerPerReplica gives each replica a ledger of its own (a bbolt
	// file each, or an in-memory store each) instead of one they share.
	LedgerPerReplica bool
	// NoSingleActiveConsumer declares the main queue without single
	// active consumer: every replica takes deliveries (competing
	// consumers), on any ledger.
	NoSingleActiveConsumer bool
}

// Result is what one schedule did.
type Result struct {
	Seed   uint64
	Steps  int
	Checks int
	Faults map[string]int
	// Outcomes counts the handler's outcomes ("" a requeue) and the
	// settlements of reports (pull, push, horizon).
	Outcomes map[string]int
	// Loop counts what the worker's consume loop did: sessions, losses,
	// stops for a broken ledger, the ledger wait's tries, pauses,
	// wake-ups, deliveries of a lost generation refused.
	Loop map[string]int
	// Violation is the first invariant broken (nil: none).
	Violation *Violation
	Trace     Trace
	// Err: the simulator itself failed (a temporary folder, an unexpected
	// error from the worker's code); the schedule's verdict is unknown.
	Err error
}

// Hash is the schedule's trace hash: the same for every replay.
func (r Result) Hash() string { return r.Trace.Hash() }

// RunSchedule runs s: its events, then the quiescence phase (faults off;
// deliveries, sweeps and clock advances past every TTL, report and
// horizon until nothing moves), checking the step invariants after every
// step and the quiescence invariants at the end. It stops at the first
// violation.
func RunSchedule(s Schedule, opt Options) Result {
	r := Result{Seed: s.Seed}
	w, err := newWorld(s, opt)
	if err != nil {
		r.Err = err
		return r
	}
	defer w.close()
	w.trace.begin(-1, "config "+w.s.Config.String())
	w.trace.end()
	for _, e := range w.s.Events {
		w.exec(e)
		if w.violation != nil || w.fatal != nil {
			return w.result(r)
		}
	}
	w.quiesce()
	return w.result(r)
}

func (w *world) result(r Result) Result {
	r.Steps, r.Checks, r.Violation, r.Trace, r.Err = w.steps, w.checks, w.violation, w.trace, w.fatal
	r.Faults, r.Outcomes, r.Loop = map[string]int{}, map[string]int{}, map[string]int{}
	for k, n := range w.loop {
		r.Loop[k] += n
	}
	for k, n := range w.broker.Acks {
		r.Loop[k] += n
	}
	for k, n := range w.outcomes {
		if k == "" {
			k = "requeued"
		}
		r.Outcomes[k] += n
	}
	for k, n := range w.faults {
		r.Faults[k] += n
	}
	for _, l := range w.ledgers {
		for k, n := range l.Faults {
			r.Faults["ledger-"+k] += n
		}
	}
	for k, n := range w.vendor.Faults {
		r.Faults["vendor-"+k] += n
	}
	for k, n := range w.broker.Faults {
		r.Faults["publish-"+k] += n
	}
	return r
}

// quiesce stops the faults and lets the world settle: it delivers what
// waits in the main queue, sweeps and drains, and moves the clock to the
// next TTL expiry or report, then past the horizon, until nothing is
// due; then it checks where every message ended.
func (w *world) quiesce() {
	w.crashAt, w.closeMidSend, w.pullFault, w.freezeAt = "", false, "", ""
	for _, l := range w.ledgers {
		l.Arm("", "", 0)
	}
	w.vendor.Disarm()
	w.broker.ArmPublishFault("")
	w.trace.begin(w.step, "-- quiescence: faults off --")
	w.thawAll()
	w.trace.end()
	reports := w.s.Config.Reports()
	idle := 0
	for round := 0; round < 80 && w.violation == nil && w.fatal == nil; round++ {
		for n := 0; n < 200 && w.waiting() > 0 && w.violation == nil && w.fatal == nil; n++ {
			e := Event{Kind: Deliver}
			if w.s.Config.Competing {
				e.Replica = n % len(w.procs) // each replica takes its prefetched ones
			}
			w.exec(e)
			idle = 0
		}
		// Each ledger is swept (with one shared, one replica's sweep
		// does it).
		for i := 0; reports && i < len(w.ledgers) && w.violation == nil && w.fatal == nil; i++ {
			w.exec(Event{Kind: Sweep, Replica: i})
		}
		if w.waiting() > 0 {
			continue
		}
		next, ok := w.broker.NextExpiry()
		if t, rok := w.vendor.NextReport(); rok && (!ok || t.Before(next)) {
			next, ok = t, true
		}
		if _, t := w.nextTimer(maxTime); t != nil && (!ok || t.at.Before(next)) {
			next, ok = t.at, true
		}
		switch {
		case ok:
			w.exec(Event{Kind: Advance, D: next.Sub(w.clock.Now()) + time.Millisecond})
		case reports && idle < 2:
			w.exec(Event{Kind: Advance, D: w.s.Config.Horizon + minAge + time.Second})
			idle++
		default:
			round = 1 << 30
		}
	}
	if w.violation != nil || w.fatal != nil {
		return
	}
	v := w.view()
	v.Copies = w.broker.Copies()
	w.checks += 2
	w.trace.begin(w.step, "-- quiescent: where every message ended --")
	for _, c := range v.Copies {
		w.note("%s in %s outcome=%q code=%q attempt=%d", c.Message, c.Queue, c.Outcome, c.Code, c.Attempt)
	}
	if vs := CheckQuiescent(v); len(vs) > 0 {
		w.violation = &vs[0]
		w.note("VIOLATION %s", vs[0])
	}
	w.trace.end()
}

// waiting is what the consumers have still to take: the main queue, the
// deliveries prefetched on their channels, and the handlers serve holds
// (turns.go).
func (w *world) waiting() int {
	n := w.broker.Len(w.topo.Names.Main)
	for _, p := range w.procs {
		if s := p.sess; s != nil && s.Live() {
			n += len(s.ch.buf)
		}
		n += len(p.held)
	}
	return n
}

// RunSeed runs the schedule Generate makes of seed.
func RunSeed(seed uint64, opt Options) Result { return RunSchedule(Generate(seed), opt) }

// Failure is a seed that broke an invariant.
type Failure struct {
	Seed      uint64
	Violation Violation
	// Events is the number of events of the seed's schedule; Shrunk the
	// smallest schedule found that still breaks the same invariant (the
	// whole schedule when it was not shrunk), and Trace that schedule's
	// trace ("" when it was not shrunk: replay the seed).
	Events int
	Shrunk Schedule
	Trace  string
}

// String prints the failure: seed, invariant, shrunk schedule, trace.
func (f Failure) String() string {
	s := fmt.Sprintf("seed %d: %s\nshrunk schedule (%d of %d events), %s:\n", f.Seed, f.Violation, len(f.Shrunk.Events), f.Events, f.Shrunk.Config)
	for i, e := range f.Shrunk.Events {
		s += fmt.Sprintf("  %2d %s\n", i, e)
	}
	if f.Trace == "" {
		return s + "(not shrunk; no trace kept: replay the seed)\n"
	}
	return s + "trace of the shrunk schedule:\n" + f.Trace + "\n"
}

// Summary is what Run did.
type Summary struct {
	Schedules, Steps, Checks int
	Faults, Outcomes, Loop   map[string]int
	Failures                 []Failure
	// Errors are schedules the simulator could not run.
	Errors []error
}

// Run runs opt.Seeds schedules and returns their summary; each failing
// seed is shrunk (unless opt.NoShrink). The error is ctx's when it ended
// the run early.
func Run(ctx context.Context, opt Options) (Summary, error) {
	sum := Summary{Faults: map[string]int{}, Outcomes: map[string]int{}, Loop: map[string]int{}}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	seeds := make(chan uint64)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for seed := range seeds {
				s := Generate(seed)
				r := RunSchedule(s, opt)
				var f *Failure
				if r.Violation != nil {
					f = &Failure{Seed: seed, Violation: *r.Violation, Events: len(s.Events), Shrunk: s}
				}
				mu.Lock()
				sum.Schedules++
				sum.Steps += r.Steps
				sum.Checks += r.Checks
				for k, n := range r.Faults {
					sum.Faults[k] += n
				}
				for k, n := range r.Outcomes {
					sum.Outcomes[k] += n
				}
				for k, n := range r.Loop {
					sum.Loop[k] += n
				}
				if r.Err != nil {
					sum.Errors = append(sum.Errors, fmt.Errorf("seed %d: %w", seed, r.Err))
				}
				if f != nil {
					sum.Failures = append(sum.Failures, *f)
				}
				if opt.Progress != nil {
					opt.Progress(sum.Schedules, len(sum.Failures))
				}
				mu.Unlock()
			}
		})
	}
	var err error
	for i := range opt.Seeds {
		select {
		case seeds <- opt.FirstSeed + uint64(i):
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
	}
	close(seeds)
	wg.Wait()
	sortFailures(sum.Failures)
	if !opt.NoShrink {
		shrinkFirst(sum.Failures, opt, workers)
	}
	return sum, err
}

// shrinkFirst shrinks the ShrinkPerInvariant lowest failing seeds of each
// invariant (fs sorted by seed), side by side, and keeps their traces.
func shrinkFirst(fs []Failure, opt Options, workers int) {
	per := opt.ShrinkPerInvariant
	if per <= 0 {
		per = 3
	}
	taken := map[string]int{}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				fs[i].Shrunk, fs[i].Trace = Shrink(fs[i].Shrunk, opt, fs[i].Violation.Invariant)
			}
		})
	}
	for i := range fs {
		if inv := fs[i].Violation.Invariant; taken[inv] < per {
			taken[inv]++
			jobs <- i
		}
	}
	close(jobs)
	wg.Wait()
}

func sortFailures(fs []Failure) {
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			if fs[j].Seed < fs[i].Seed {
				fs[i], fs[j] = fs[j], fs[i]
			}
		}
	}
}
