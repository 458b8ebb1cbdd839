package sim

import (
	"context"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// The crash model: a replica's worker process dies at a step boundary
// ("now", the replica the event names) or at a crash point inside the
// worker's code (CrashPoints, whichever replica reaches it): in the send
// before or after the vendor processed it, around a copy's enqueue, before
// an ack. A crash point reached by the consume loop's goroutines stops
// that goroutine there (crashPoint) while the scheduler kills the
// process: every model then refuses its calls, so nothing it does after
// the crash point reaches the world, as the process's death would stop
// it. One reached by the scheduler's own calls into the worker's code
// (the unknown drain) panics with crashSignal, which guard recovers.
// Nothing of the dead process survives but what lives outside it: the
// broker (its unacked deliveries are requeued, redelivered, to the
// standby under single active consumer), the vendor, and the ledger (the
// bbolt file is closed and opened again; the in-memory store stands for a
// database server). The restart is immediate: a new process with an empty
// token cache and a new session, registered behind the other replica's.

// crashSignal unwinds the scheduler's call into the worker's code from a
// crash point to guard, as the process's death would stop it there.
type crashSignal struct{ point string }

// crashPoint is the models' crash hook: when the crash armed is point,
// the process dies there. On a goroutine of the consume loop it waits
// until the scheduler has killed the process and returns errProcessDied
// (the model's call then fails); on the scheduler's it panics (guard).
// A freeze armed at point stops the loop's goroutine there first
// (freezeHere).
func (w *world) crashPoint(point string) error {
	if w.freezeAt == point && w.inWorker {
		if p := w.cur; p != nil && !p.dead.Load() {
			if err := w.freezeHere(p, point); err != nil {
				return err
			}
		}
	}
	if w.crashAt != point {
		return nil
	}
	if !w.inWorker {
		w.crashAt = ""
		panic(crashSignal{point})
	}
	p := w.cur
	if p == nil || p.dead.Load() {
		return nil
	}
	w.crashAt = ""
	p.signals <- signal{kind: sigCrashed, point: point}
	<-p.thaw
	return errProcessDied
}

// midSend is the vendor's hook in the middle of a send (on the loop's
// handler goroutine): an armed close mid-send closes the consume channel
// there. The loop learns it at once through its generation (ended); serve
// sees Lost once it waits again (settle).
func (w *world) midSend() {
	p := w.cur
	if w.closeMidSend && p != nil && p.sess != nil && p.sess.Live() {
		w.closeMidSend = false
		w.faults["close-mid-send"]++
		w.note("the consume channel closes mid-send")
		p.sess.end(errChannelClosed)
	}
}

// guard runs the worker's code on the scheduler for p (the unknown drain,
// the report sweep and push); a crash point reached inside it crashes p.
func (w *world) guard(p *process, f func()) {
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(crashSignal)
			if !ok {
				panic(r)
			}
			w.crash(p, c.point)
		}
	}()
	f()
}

// crash kills p and starts its replica's next process: the broker
// requeues its unacked deliveries (under single active consumer the next
// registered replica takes over), every ATTEMPTING entry of its ledger is
// in doubt, a bbolt file is closed and opened again. The restarted
// process registers its consumer behind the others.
func (w *world) crash(p *process, point string) {
	w.faults["crash-"+point]++
	if len(w.procs) > 1 {
		w.note("CRASH (%s): replica %d's process dies and restarts", point, p.rep)
	} else {
		w.note("CRASH (%s): the worker process dies and restarts", point)
	}
	w.kill(p)
	if w.drainCh != nil {
		w.drainCh.Close()
		w.drainCh = nil
	}
	l := p.ledger.l
	if es, err := l.Inner().List(context.Background(), ledger.Attempting, 0); err == nil {
		for _, e := range es {
			w.addDoubt(e.RefKey, "the worker crashed during its attempt")
		}
	}
	if err := l.Crash(); err != nil {
		w.fatal = err
		return
	}
	if err := w.start(p.rep); err != nil {
		w.fatal = err
	}
}

// start starts replica i's new process and lets its loop run until it
// waits for its first delivery.
func (w *world) start(i int) error {
	p, err := w.newProcess(i)
	if err != nil {
		return err
	}
	w.procs[i] = p
	w.drive(p, func() {})
	return nil
}
