package sim

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Serve's concurrency (Config.Concurrency) under the scheduler. serve
// starts a handler per delivery through SimLoop.Go; the process holds it
// (held) and the scheduler runs the held ones one at a time, each in a
// turn of its own while serve waits (idle): the handler runs to its end
// (its ledger calls, send, copy and ack answered at once by the models)
// and hands its delivery to serve, which accounts it and waits again.
// Which held handler runs, and how many run after a delivery, the seed
// decides (world.turns), so handlers finish out of their delivery order
// and the real ackBatcher (worker/ackbatch.go) meets every order; one
// seed is still one history. At concurrency 1 the handler runs at once,
// as before. Held handlers do not run while serve sleeps (its pause after
// a requeue) or its process is frozen; a crash releases them into the
// models' refusals (kill).
//
// The ack batcher's flush delay (worker.AckFlushDelay) runs on the
// simulated clock (SimLoop.AfterFunc): its timer fires when the clock
// passes it, at a clock advance in order with the loops' wake-ups, or at
// the end of the step in which a slow call moved the clock past it. It
// runs on the scheduler's goroutine while every goroutine of the worker
// waits (a crash point it reaches unwinds to guard, as the unknown drain's
// do).

// heldHandler is one handler serve started that has not run yet.
type heldHandler struct {
	f     func()
	label string // its delivery, as the trace names it
}

// spawn is SimLoop.Go: serve starts a handler (on its goroutine, in the
// turn that handed it the delivery p.handing names).
func (p *process) spawn(f func()) {
	p.held = append(p.held, heldHandler{f: f, label: p.handing})
}

// takes reports whether p's serve takes a delivery now: it waits in its
// main wait with a free slot, on a live session of the consumer the
// broker delivers to.
func (p *process) takes() bool {
	return p.state.mainWait() && p.state.inflight < p.conc && p.sess != nil && p.sess.Live() && p.sess.ch.Active()
}

// holder returns the first process among ps that waits (idle) with
// handlers held, or nil.
func (w *world) holder(ps []*process) *process {
	for _, p := range ps {
		if p.state.kind == sigIdle && len(p.held) > 0 {
			return p
		}
	}
	return nil
}

// pickHeld draws which of p's held handlers runs next (the seed's
// choice; the oldest at concurrency 1).
func (w *world) pickHeld(p *process) int {
	if len(p.held) < 2 {
		return 0
	}
	return w.turns.IntN(len(p.held))
}

// runHeld runs p's held handler i in a turn of its own.
func (w *world) runHeld(p *process, i int) {
	h := p.held[i]
	p.held = slices.Delete(p.held, i, i+1)
	p.current = h.label
	if p.conc > 1 {
		w.loop["handler turns"]++
		if i > 0 {
			w.loop["handlers run before an older one"]++
		}
		w.note("handler turn (%d of %d held): %s", i+1, len(p.held)+1, h.label)
	}
	w.drive(p, func() { go h.f() })
}

// afterTake runs p's handlers after it took a delivery: at concurrency 1
// the new one at once; above, while the seed says so, a held one it
// picks (none, some or all of them).
func (w *world) afterTake(p *process) {
	for len(p.held) > 0 && p.state.kind == sigIdle && w.fatal == nil {
		if p.conc > 1 && w.turns.IntN(2) == 0 {
			return
		}
		w.runHeld(p, w.pickHeld(p))
	}
}

// runAllHeld runs every held handler of every loop that waits (in the
// seed's order), and reports whether it ran one.
func (w *world) runAllHeld() bool {
	ran := false
	for n := 0; w.fatal == nil; n++ {
		p := w.holder(w.procs)
		if p == nil {
			return ran
		}
		if n == maxWakes {
			w.fatal = fmt.Errorf("the handlers took %d turns in one step", n)
			return ran
		}
		w.runHeld(p, w.pickHeld(p))
		ran = true
	}
	return ran
}

// runDraining gives the loops that drain their handlers (their session
// lost, their ledger broken) a turn beside the delivery: the seed draws,
// for each, whether one of its held handlers runs now.
func (w *world) runDraining() {
	for _, p := range w.procs {
		if p.state.kind == sigIdle && p.state.draining && len(p.held) > 0 && w.turns.IntN(2) == 0 {
			w.runHeld(p, w.pickHeld(p))
		}
	}
}

// simTimer is a timer of the simulated clock (SimLoop.AfterFunc).
type simTimer struct {
	at   time.Time
	seq  int
	f    func()
	done bool
}

// Stop stops the timer; it reports whether it had not fired nor stopped.
func (t *simTimer) Stop() bool {
	was := !t.done
	t.done = true
	return was
}

// afterFunc is SimLoop.AfterFunc: f runs once the simulated clock passed
// d from now (called on the worker's goroutine that has the turn).
func (p *process) afterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	p.timerSeq++
	t := &simTimer{at: p.now().Add(d), seq: p.timerSeq, f: f}
	p.timers = append(p.timers, t)
	return t
}

// nextTimer returns the earliest live timer due no later than until of a
// process that can run it (not frozen, not at a crash point, not
// returned), and its process; the lowest replica first on a tie.
func (w *world) nextTimer(until time.Time) (*process, *simTimer) {
	var fp *process
	var ft *simTimer
	for _, p := range w.procs {
		p.timers = slices.DeleteFunc(p.timers, func(t *simTimer) bool { return t.done })
		if p.state.kind == sigExited || p.state.kind == sigCrashed || p.state.frozen != "" {
			continue
		}
		for _, t := range p.timers {
			if !t.at.After(until) && (ft == nil || t.at.Before(ft.at)) {
				fp, ft = p, t
			}
		}
	}
	return fp, ft
}

// fire moves the clock to t and runs it: the batcher's Flush, on the
// scheduler's goroutine. A channel error its multiple ack caused ends the
// session, and serve, waiting for it, wakes to the loss.
func (w *world) fire(p *process, t *simTimer) {
	t.done = true
	if d := t.at.Sub(w.clock.Now()); d > 0 {
		w.clock.Advance(d)
		w.broker.Expire()
	}
	w.loop["ack flush timers fired"]++
	w.note("clock %s: %sthe ack batcher's flush timer fires", w.clock.Now().In(seoul).Format("01-02 15:04:05.000"), w.who(p))
	w.guard(p, t.f)
	if p.sess != nil && p.sess.pending() && (p.state.mainWait() || p.state.kind == sigAsleep && p.state.stop) {
		w.drive(p, p.sess.finish)
	}
}

// fireDue fires every timer the clock has passed, in the clock's order.
func (w *world) fireDue() {
	for n := 0; w.fatal == nil; n++ {
		p, t := w.nextTimer(w.clock.Now())
		if t == nil {
			return
		}
		if n == maxWakes {
			w.fatal = fmt.Errorf("the ack batchers' timers fired %d times in one step", n)
			return
		}
		w.fire(p, t)
	}
}

// ackedAt is the broker's word that an ack settled a delivery of
// message id on ch: the step's fact for InvAckAfterOutcome, with the
// ledger of the replica that owns ch (the drain's channel names its
// replica too) read at this moment.
func (w *world) ackedAt(ch *Channel, id string, copied bool) {
	m, ok := w.msgs[id]
	if !ok {
		return
	}
	f := AckFact{Message: id, RefKey: m.RefKey, Copied: copied}
	e, found, err := w.ledgerOf(max(ch.Owner, 0)).Inner().Get(context.Background(), m.RefKey)
	if err != nil && w.fatal == nil {
		w.fatal = fmt.Errorf("read the ledger for the checker: %w", err)
	}
	if found {
		f.State = string(e.State)
	}
	t := w.vendor.Truth(m.RefKey)
	f.Processed = t != nil && len(t.Processed) > 0
	w.acks = append(w.acks, f)
}
