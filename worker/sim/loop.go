package sim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// The scheduler and the worker's consume loop take turns. The loop runs
// on its own goroutines (its session loop, serve, a handler goroutine,
// the Handler's ledger calls) and the scheduler never runs beside them:
// it wakes the loop (hands it a delivery, lets a sleep end, loses its
// session), then waits (settle) until the loop tells it where it waits
// next, through the hooks worker.SimLoop gives:
//
//	idle     serve waits (SimLoop.Idle): in its main wait a delivery
//	         (with a free handler slot), one of its handlers finishing,
//	         the session's loss or a crash wakes it; draining, only its
//	         handlers finishing. Its handlers (SimLoop.Go) are held until
//	         the scheduler runs them, one per turn (turns.go)
//	asleep   the loop or serve sleeps until a reading of the simulated
//	         clock (SimLoop.Sleep: the reconnect backoff, the ledger
//	         wait, the pause after a requeue); the clock moves only when
//	         the scheduler moves it
//	crashed  the worker's code reached an armed crash point: it stops
//	         there until the scheduler has killed the process
//	exited   the loop returned
//
// Every model the worker's goroutines call answers at once, so each turn
// ends, and all they share with the scheduler passes through these
// channels: one seed is one history, with or without the race detector.
// The backoff's randomness is the seed's (a stream per process).

// sigKind is where the worker waits.
type sigKind uint8

const (
	sigIdle sigKind = iota
	sigAsleep
	sigCrashed
	sigExited
)

var sigNames = [...]string{"waiting for a delivery", "asleep", "stopped at a crash point", "returned"}

func (k sigKind) String() string { return sigNames[k] }

// signal is the worker telling the scheduler where it waits.
type signal struct {
	kind sigKind
	// asleep: until wake; woken is closed to wake it; stop: the sleep
	// also ends when the session is lost (serve's pause).
	wake  time.Time
	woken chan struct{}
	stop  bool
	// frozen: the sleep is a freeze at this point (freezeHere).
	frozen string
	point  string // crashed: the crash point
	err    error  // exited: the loop's error
	// idle: serve's handlers not finished, and whether it drains them
	// (it takes no delivery and returns once they finished).
	inflight int
	draining bool
}

// stuckAfter is how long, in real time, the scheduler waits for the loop
// to reach a wait before it declares the simulator broken (a deadlock in
// the simulator, never a verdict on the worker): a turn takes
// microseconds.
const stuckAfter = 2 * time.Minute

// idle is SimLoop.Idle: serve waits.
func (p *process) idle(inflight int, draining bool) {
	p.signals <- signal{kind: sigIdle, inflight: inflight, draining: draining}
}

// mainWait reports whether serve waits in its main wait, where a closed
// Lost wakes it (not while it drains).
func (s signal) mainWait() bool { return s.kind == sigIdle && !s.draining }

// sleep is SimLoop.Sleep: it sleeps until the scheduler moves the clock
// to now+d, or ctx ends, or stop closes. A sleep already cut short (ctx
// done, stop closed) returns at once and tells nothing.
func (p *process) sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case <-stop:
		return false
	default:
	}
	woken := make(chan struct{})
	p.signals <- signal{kind: sigAsleep, wake: p.now().Add(d), woken: woken, stop: stop != nil}
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	case <-woken:
		return true
	}
}

// drive hands the turn to p's goroutines: act wakes them, then the
// scheduler waits until they wait again (settle). Crash points they
// reach meanwhile crash p (crashPoint).
func (w *world) drive(p *process, act func()) {
	if p.state.kind == sigExited {
		return // the loop returned (the run has failed): nothing to wake
	}
	prevIn, prevCur := w.inWorker, w.cur
	w.inWorker, w.cur = true, p
	act()
	w.settle(p)
	w.inWorker, w.cur = prevIn, prevCur
}

// settle waits for p's next signal and acts on it: a session lost while
// a delivery was in hand (pending) is now lost for serve too; a crash
// point kills the process and starts its replica's next one.
func (w *world) settle(p *process) {
	for {
		var s signal
		select {
		case s = <-p.signals:
		case <-time.After(stuckAfter):
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("sim: seed %d: the worker reached no wait in %s:\n%s", w.s.Seed, stuckAfter, buf[:runtime.Stack(buf, true)]))
		}
		p.state = s
		if s.kind == sigAsleep && s.stop {
			w.loop["pauses after a requeue"]++
		}
		switch s.kind {
		case sigIdle, sigAsleep:
			if s.frozen != "" {
				w.froze(p, s)
				return
			}
			if s.mainWait() && p.sess != nil && p.sess.over && p.sess.lostClosed {
				// serve reached its wait on a session already lost (the
				// loss came during its requeue pause): it wakes to the
				// closed Lost at once, so this is no wait.
				continue
			}
			if p.sess != nil && p.sess.pending() {
				p.sess.finish()
				if s.mainWait() || s.stop {
					continue // serve wakes to the loss
				}
			}
		case sigCrashed:
			w.crash(p, s.point)
		case sigExited:
			if w.fatal == nil {
				w.fatal = fmt.Errorf("the consume loop returned: %v", s.err)
			}
		}
		return
	}
}

// loseSession closes p's live session's consume channel now: the broker
// requeues its unacked deliveries and the loop, when Lost wakes it (serve
// waiting for a delivery or in its pause), runs to its next wait. When
// serve cannot wake to it now (it drains its handlers, or a goroutine of
// the process is frozen) Lost is closed once serve waits again (pending,
// as after a close mid-send): closing it under a serve that would wake
// outside a turn would let it run beside the scheduler.
func (w *world) loseSession(p *process) {
	if p.state.mainWait() || p.state.kind == sigAsleep && p.state.stop {
		w.drive(p, func() {
			p.sess.end(errChannelClosed)
			p.sess.finish()
		})
		return
	}
	p.sess.end(errChannelClosed)
}

// wake moves the clock to the end of p's sleep and wakes it.
func (w *world) wake(p *process) {
	s := p.state
	if d := s.wake.Sub(w.clock.Now()); d > 0 {
		w.clock.Advance(d)
		w.broker.Expire()
	}
	w.note("clock %s: %sthe loop wakes", w.clock.Now().In(seoul).Format("01-02 15:04:05.000"), w.who(p))
	w.loop["wake-ups"]++
	w.drive(p, func() { close(s.woken) })
}

// maxWakes bounds the wake-ups one step makes: far more than a ledger
// outage or a backoff needs (a guard against a loop that never waits for
// a delivery).
const maxWakes = 1000

// sleeper returns the process among ps that sleeps until the earliest
// reading no later than until (the lowest replica first on a tie), or
// nil.
func sleeper(ps []*process, until time.Time) *process {
	var first *process
	for _, p := range ps {
		if p.state.kind == sigAsleep && !p.state.wake.After(until) && (first == nil || p.state.wake.Before(first.state.wake)) {
			first = p
		}
	}
	return first
}

// wakeAll wakes every sleeping loop at each of its wake-ups up to the
// reading until, and fires the ack batchers' timers due by then, in the
// clock's order.
func (w *world) wakeAll(until time.Time) {
	for n := 0; ; n++ {
		p := sleeper(w.procs, until)
		tp, t := w.nextTimer(until)
		if p == nil && t == nil {
			return
		}
		if n == maxWakes && w.fatal == nil {
			w.fatal = fmt.Errorf("the consume loops slept %d times in one step", n)
		}
		if w.fatal != nil {
			return
		}
		if t != nil && (p == nil || t.at.Before(p.state.wake)) {
			w.fire(tp, t) // an ack batcher's flush timer (turns.go)
			continue
		}
		w.wake(p)
	}
}

// receiver returns the process that takes the next delivery, or nil:
// under single active consumer the one that waits for a delivery on the
// active consumer's channel, under competing consumers replica pref once
// it waits for one. Until there is one, the loops that may become it
// (every replica, or replica pref) run a held handler when every slot is
// taken (or they drain), or are woken at their wake-ups in the clock's
// order (a reconnect, a ledger wait, the end of a pause).
func (w *world) receiver(pref int) *process {
	cands := w.procs
	if w.s.Config.Competing {
		cands = w.procs[pref : pref+1]
	}
	for n := 0; ; n++ {
		for _, p := range cands {
			if p.takes() {
				return p
			}
		}
		if n == maxWakes && w.fatal == nil {
			w.fatal = fmt.Errorf("the consume loops slept %d times in one step", n)
		}
		if w.fatal != nil {
			return nil
		}
		// A loop whose handlers hold its slots (or that drains them)
		// runs one of them first.
		if p := w.holder(cands); p != nil {
			w.runHeld(p, w.pickHeld(p))
			continue
		}
		p := sleeper(cands, maxTime)
		if p == nil {
			return nil
		}
		w.wake(p)
	}
}

// kill is the process's death: every model refuses its calls, its
// session ends (the broker requeues its unacked deliveries), its context
// ends, a goroutine stopped at a crash point goes on (into refusals),
// and the scheduler waits until its loop returned.
func (w *world) kill(p *process) {
	if p.state.kind == sigExited {
		return
	}
	p.dead.Store(true)
	p.timers = nil
	if p.sess != nil {
		p.sess.end(errChannelClosed)
		p.sess.finish()
	}
	p.cancel()
	if p.state.kind == sigCrashed {
		close(p.thaw)
	}
	if p.state.kind == sigAsleep && p.state.frozen != "" {
		close(p.state.woken) // it goes on into the models' refusals
	}
	// Its held handlers go on too, into the models' refusals: serve
	// drains them before its loop returns.
	for _, h := range p.held {
		go h.f()
	}
	p.held = nil
	for p.state.kind != sigExited {
		select {
		case p.state = <-p.signals:
		case <-time.After(stuckAfter):
			panic(fmt.Sprintf("sim: seed %d: a dead worker's loop did not return in %s", w.s.Seed, stuckAfter))
		}
	}
}

// procLedger is a process's ledger (the Handler's, inside the worker's
// timedLedger): the fault layer, refusing everything once the process
// died, and counting the Begin and Finish a fault failed. It keeps Ping
// and CheckWrite, which the loop's ledger wait reaches through
// timedLedger.
type procLedger struct {
	p *process
	l *Ledger
}

func (g *procLedger) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	if g.p.dead.Load() {
		return 0, ledger.Entry{}, errProcessDied
	}
	d, e, err := g.l.Begin(ctx, refkey, bodyHash, now)
	g.failed(err)
	return d, e, err
}

func (g *procLedger) Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	if g.p.dead.Load() {
		return errProcessDied
	}
	err := g.l.Finish(ctx, refkey, bodyHash, attempt, state, detail, now)
	g.failed(err)
	return err
}

// Ping is the fault layer's Ping.
func (g *procLedger) Ping(ctx context.Context) error {
	if g.p.dead.Load() {
		return errProcessDied
	}
	return g.l.Ping(ctx)
}

// CheckWrite is the fault layer's CheckWrite.
func (g *procLedger) CheckWrite(ctx context.Context) error {
	if g.p.dead.Load() {
		return errProcessDied
	}
	return g.l.CheckWrite(ctx)
}

func (g *procLedger) failed(err error) {
	if err == nil || !errors.Is(err, ErrLedgerFault) {
		return
	}
	g.p.failures++
	g.p.failOutage = 0
	if g.l.Down() {
		g.p.failOutage = g.l.Outage()
	}
}

// procTransport is a process's way to the vendor: the vendor model,
// refusing everything once the process died.
type procTransport struct {
	p *process
	v *Vendor
}

func (t procTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.p.dead.Load() {
		return nil, errProcessDied
	}
	return t.v.RoundTrip(req)
}
