package sim

import (
	"context"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// The crash model: the worker process dies at a step boundary ("now") or
// at a crash point inside the worker's code (CrashPoints): in the send
// before or after the vendor processed it, around a copy's enqueue, before
// an ack. A crash point panics with crashSignal; guard, around every call
// into the worker's code, recovers it and runs crash, so the worker's code
// stops exactly there, as the process would. Nothing of the dead process
// survives but what lives outside it: the broker (its unacked deliveries
// are requeued, redelivered), the vendor, and the ledger (the bbolt file
// is closed and opened again; the in-memory store stands for a database
// server). The restart is immediate: a new process with an empty token
// cache and a new consume channel.

// crashSignal unwinds the worker's code from a crash point to the
// scheduler (guard), as the process's death would stop it there.
type crashSignal struct{ point string }

func (w *world) crashPoint(p string) {
	if w.crashAt == p {
		w.crashAt = ""
		panic(crashSignal{p})
	}
}

func (w *world) midSend() {
	if w.closeMidSend && w.proc.ch != nil {
		w.closeMidSend = false
		w.faults["close-mid-send"]++
		w.note("the consume channel closes mid-send")
		w.proc.ch.Close()
	}
}

// guard runs worker code; a crash point reached inside it crashes the
// process.
func (w *world) guard(f func()) {
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(crashSignal)
			if !ok {
				panic(r)
			}
			w.crash(c.point)
		}
	}()
	f()
}

// crash kills the worker process and starts a new one: the broker
// requeues its unacked deliveries, every ATTEMPTING entry is in doubt,
// the ledger file is closed and opened again.
func (w *world) crash(point string) {
	w.faults["crash-"+point]++
	w.note("CRASH (%s): the worker process dies and restarts", point)
	if w.proc.ch != nil {
		w.proc.ch.Close()
	}
	if w.drainCh != nil {
		w.drainCh.Close()
		w.drainCh = nil
	}
	if es, err := w.ledger.Inner().List(context.Background(), ledger.Attempting, 0); err == nil {
		for _, e := range es {
			w.addDoubt(e.RefKey, "the worker crashed during its attempt")
		}
	}
	if err := w.ledger.Crash(); err != nil {
		w.fatal = err
		return
	}
	p, err := w.newProcess()
	if err != nil {
		w.fatal = err
		return
	}
	w.proc = p
}
