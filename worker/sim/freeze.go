package sim

import (
	"context"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// The freeze model (Freeze, FreezePoints): a replica's process stops at
// a point of a delivery for a span of simulated time, as a long GC stall
// or a VM pause does, then goes on from there (the catalog's
// frozen-active). To the scheduler the frozen goroutine is a loop asleep
// until the freeze ends, so the other replica runs meanwhile and the
// freeze ends when the clock reaches it. A freeze longer than the
// heartbeat timeout makes the broker close the frozen process's
// connection at once (in RabbitMQ, after the timeout; the model does not
// wait for it): its consume channel closes, its unacked deliveries go to
// the standby, and its publish path fails from then on (sessPub), so a
// publish or an ack it resumes into fails as on a closed connection; the
// vendor's answer it resumes into arrives (HTTP is another connection).
// Every ATTEMPTING entry of its ledger is in doubt from the freeze on, as
// at a crash: the attempt may go on.

// heartbeatTimeout is when RabbitMQ closes the connection of a peer that
// sends no heartbeat: two intervals of the worker's heartbeat.
const heartbeatTimeout = 2 * worker.DefaultHeartbeat

// errConnClosed is the error of a publish or an ack on the connection the
// broker closed while the process was frozen.
var errConnClosed = fmt.Errorf("sim: the broker closed the connection (missed heartbeats): %w", amqp.ErrClosed)

// freezeHere runs on p's goroutine at point: it tells the scheduler it
// sleeps until the freeze ends, waits, and then answers for the model's
// call: errProcessDied when p was killed meanwhile, errConnClosed for a
// publish or an ack whose connection the broker closed meanwhile, nil
// otherwise.
func (w *world) freezeHere(p *process, point string) error {
	w.freezeAt = ""
	woken := make(chan struct{})
	p.signals <- signal{kind: sigAsleep, wake: w.clock.Now().Add(w.freezeFor), woken: woken, frozen: point}
	<-woken
	switch {
	case p.dead.Load():
		return errProcessDied
	case point != "send-after" && p.sess != nil && p.sess.connLost:
		return errConnClosed
	}
	return nil
}

// froze is the scheduler's side of p's freeze (settle): the trace says
// so, every ATTEMPTING entry of p's ledger is in doubt, and past the
// heartbeat timeout the broker closes p's connection (its Lost is closed
// once p waits again, as after a close mid-send).
func (w *world) froze(p *process, s signal) {
	w.faults["freeze-"+s.frozen]++
	d := s.wake.Sub(w.clock.Now())
	w.note("FREEZE (%s): replica %d's process stops for %s", s.frozen, p.rep, d)
	l := p.ledger.l
	if es, err := l.Inner().List(context.Background(), ledger.Attempting, 0); err == nil {
		for _, e := range es {
			w.addDoubt(e.RefKey, fmt.Sprintf("replica %d froze during its attempt", p.rep))
		}
	}
	if d > heartbeatTimeout && p.sess != nil && p.sess.Live() {
		w.loop["connections closed over a freeze"]++
		w.note("the broker misses replica %d's heartbeats and closes its connection", p.rep)
		p.sess.connLost = true
		p.sess.end(errChannelClosed)
	}
}

// thawAll ends every freeze, in the clock's order (quiescence: faults
// off).
func (w *world) thawAll() {
	for {
		var first *process
		for _, p := range w.procs {
			if p.state.kind == sigAsleep && p.state.frozen != "" && (first == nil || p.state.wake.Before(first.state.wake)) {
				first = p
			}
		}
		if first == nil || w.fatal != nil {
			return
		}
		w.wake(first)
	}
}

// sessPub is a session's publisher: the process's, failing once the
// broker closed the session's connection (a freeze past the heartbeat
// timeout).
type sessPub struct {
	s  *Session
	pp procPublisher
}

var _ worker.Repairer = sessPub{}

func (sp sessPub) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	if sp.s.connLost {
		return fmt.Errorf("publish to %s: %w", queue, errConnClosed)
	}
	return sp.pp.Publish(ctx, queue, msg)
}

// Repair fails on a closed connection, as sessionPublisher.Repair does.
func (sp sessPub) Repair(ctx context.Context) error {
	if sp.s.connLost {
		return fmt.Errorf("re-establish publish path: %w", errConnClosed)
	}
	return sp.pp.Repair(ctx)
}
