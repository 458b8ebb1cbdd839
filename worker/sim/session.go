package sim

import (
	"context"
	"errors"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
)

// errProcessDied is what a model answers the worker's code of a process
// that crashed (its goroutines finish against models that take nothing
// from it, as if they had stopped at the crash point).
var errProcessDied = errors.New("sim: the worker process died")

// errChannelClosed is the broker's reason for closing a consume channel
// (a lost session): 504 CHANNEL_ERROR.
var errChannelClosed = &amqp.Error{Code: amqp.ChannelError, Reason: "sim: the consume channel closed", Server: true}

// dialer is a process's worker.BrokerDialer on the broker model: every
// session is a consume Channel with the loop's prefetch.
type dialer struct {
	w *world
	p *process
}

var _ worker.BrokerDialer = dialer{}

// Dial opens a session on the broker model (it never fails: the model
// has no broker outage), declaring the topology first (a deleted queue
// is created again).
func (d dialer) Dial(prefetch int) (worker.BrokerSession, error) {
	if d.p.dead.Load() {
		return nil, errProcessDied
	}
	d.w.declared(d.w.broker.Declare(), "the session's declarations")
	s := &Session{ch: d.w.broker.OpenChannel(prefetch), deliveries: make(chan amqp.Delivery),
		lost: make(chan struct{})}
	s.ch.Owner = d.p.rep
	// A channel error (an ack of a tag the channel does not hold) ends
	// the session as a lost channel does: serve sees Lost once it waits.
	s.ch.failed = func(err error) { s.end(err) }
	s.pub = sessPub{s: s, pp: d.p.publisher}
	d.p.sess = s
	return s, nil
}

// Session is the broker model's side of one session of the worker's
// consume loop (worker.BrokerSession): a consume Channel (the prefetch
// the loop asked for, filled from the main queue at each Deliver), the
// process's publisher and the session's end. The scheduler hands the
// loop one delivery per Deliver event, on an unbuffered channel, so a
// delivery leaves the model's buffer only when serve takes it.
type Session struct {
	ch         *Channel
	deliveries chan amqp.Delivery
	pub        worker.Publisher
	lost       chan struct{}
	tag        string
	ended      func(error)
	// over: the channel is closed and ended ran; lostClosed: Lost is
	// closed. A close mid-send leaves a session over with Lost still
	// open until the loop waits (pending): serve then sees the loss after
	// it accounted the delivery in hand, one order a real loss allows.
	over, lostClosed bool
	// connLost: the broker closed the session's connection (a freeze past
	// the heartbeat timeout): its publish path fails too.
	connLost bool
}

var _ worker.BrokerSession = (*Session)(nil)

// Consume registers the consumer: the deliveries are the scheduler's.
func (s *Session) Consume(tag string, ended func(error)) (<-chan amqp.Delivery, error) {
	s.tag, s.ended = tag, ended
	return s.deliveries, nil
}

// Publisher is the session's publisher (sessPub: the process's, on a
// confirm channel of its own, so a closed consume channel leaves it
// working; a connection the broker closed does not).
func (s *Session) Publisher() worker.Publisher { return s.pub }

// Lost is closed once the session is over.
func (s *Session) Lost() <-chan struct{} { return s.lost }

// Close is the loop's close: the channel closes (its unacked deliveries
// requeued, redelivered), ended runs and Lost is closed.
func (s *Session) Close() {
	s.end(nil)
	s.finish()
}

// Live reports whether the session is not over.
func (s *Session) Live() bool { return !s.over }

// pending reports whether the session is over and Lost not closed yet.
func (s *Session) pending() bool { return s.over && !s.lostClosed }

// end closes the channel and tells the loop (ended), once; err is the
// broker's reason (nil: the loop closed it).
func (s *Session) end(err error) {
	if s.over {
		return
	}
	s.over = true
	s.ch.Close()
	if s.ended != nil {
		s.ended(err)
	}
}

// finish closes Lost, once.
func (s *Session) finish() {
	if !s.lostClosed {
		s.lostClosed = true
		close(s.lost)
	}
}

// procPublisher is a process's Publisher: the broker model's, refusing
// everything once the process died. It is a worker.Repairer, as the
// session's publisher is (sessionPublisher): Repair declares the topology
// again.
type procPublisher struct {
	p   *process
	w   *world
	pub *Publisher
	// returnIsRouted is a planted defect (Plant.ReturnIsRouted).
	returnIsRouted bool
}

var _ worker.Repairer = procPublisher{}

func (pp procPublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	if pp.p.dead.Load() {
		return errProcessDied
	}
	err := pp.pub.Publish(ctx, queue, msg)
	if pp.returnIsRouted && errors.Is(err, worker.ErrUnroutable) {
		return nil
	}
	return err
}

// Repair declares the topology again (a deleted queue is created again);
// the publish channel needs no replacing (the model never closes it).
func (pp procPublisher) Repair(ctx context.Context) error {
	if pp.p.dead.Load() {
		return errProcessDied
	}
	pp.w.loop["publish path repairs"]++
	pp.w.declared(pp.w.broker.Declare(), "the publish path's repair")
	return nil
}

// declared notes the queues a declaration created again.
func (w *world) declared(made []string, by string) {
	if len(made) > 0 {
		w.note("%s declared %v again", by, made)
	}
}

// drainPublisher is the unknown drain's publisher (the worker's drainOnce
// publishes through a sessionPublisher of its own connection): the broker
// model's, a worker.Repairer whose Repair declares the topology again.
type drainPublisher struct {
	*Publisher
	w *world
}

var _ worker.Repairer = drainPublisher{}

// Repair declares the topology again.
func (dp drainPublisher) Repair(ctx context.Context) error {
	dp.w.loop["publish path repairs"]++
	dp.w.declared(dp.w.broker.Declare(), "the drain's repair")
	return nil
}
