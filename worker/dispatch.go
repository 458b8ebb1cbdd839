package worker

import (
	"context"
	"errors"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/records"
)

// errStop ends the loop without error (ctx done or MaxMessages reached).
var errStop = errors.New("stop")

// handled is one delivery a handler goroutine finished.
type handled struct {
	rec  records.Record
	body []byte
	err  error
	// released: the handler gave its slot back after its send
	// (HandlerConfig.ReleaseAfterSend), before it finished.
	released bool
	take     int // the delivery's place in serve's takes (0, 1, ...)
}

// concurrency is Config.Concurrency, at least 1.
func (c *consumer) concurrency() int { return max(c.cfg.Concurrency, 1) }

// PrefetchAhead is how many deliveries the broker may hand the worker
// beyond the ones it handles at once: one, so that the next delivery is
// already in the worker's buffer when a message is acked, instead of one
// broker round trip (ack, then the next delivery) later. It is never sent
// before its turn: serve hands a delivery to a handler only with a free
// handler slot, so sends in flight stay at Config.Concurrency; with
// HandlerConfig.ReleaseAfterSend it takes it from the buffer and decodes
// its body one send early (docs/worker.md, Cost per message).
const PrefetchAhead = 1

// prefetch is the session's QoS prefetch count: concurrency() +
// PrefetchAhead, and above concurrency 1 room for the acks an ackBatcher
// gathers (ackGroup): a finished delivery whose ack waits still counts
// against the prefetch, and must not keep the next one from the handlers.
func (c *consumer) prefetch() int {
	n := c.concurrency()
	if n > 1 {
		return n + ackGroup(n) + PrefetchAhead
	}
	return n + PrefetchAhead
}

// serve handles deliveries of generation gen, up to Config.Concurrency at
// once (one goroutine each; with HandlerConfig.ReleaseAfterSend a handler
// past its send, finishing its message, no longer counts, so the
// Concurrency bounds the sends in flight), until ctx is done (errStop), the session is
// lost (lost=true, nil), MaxMessages is reached (errStop) or a handler
// reports a fatal error (that error). Every message in flight is finished,
// recorded and acked on its own channel generation before serve returns:
// ctx is only looked at between messages, and Handler.Handle does not let
// it cancel a send.
//
// Records, metrics and the summary are written by serve's goroutine alone,
// in the order the messages finish. At concurrency 1 they are in the
// order of delivery (one finished after the next one, possible with
// ReleaseAfterSend, waits for its turn); above 1 neither the sends nor the records keep the queue's
// order (see Config.Concurrency). With MaxMessages set, serve takes
// a delivery only while handled + in flight < MaxMessages, so it never
// handles more than MaxMessages; a requeued delivery does not count.
func (c *consumer) serve(ctx context.Context, gen uint64, h *Handler, deliveries <-chan amqp.Delivery, lost <-chan struct{}) (wasLost bool, err error) {
	n := c.concurrency()
	pause := newBackoff(c.cfg.ReconnectMin, c.cfg.ReconnectMax, c.jitter)
	// A handler holds one of n slots from its take until its send is over
	// (HandlerConfig.ReleaseAfterSend: it says so on released) or, when it
	// does not release early, until it has finished. serve reads both
	// channels until it returns (drain included), so a handler never
	// blocks on them for long.
	finished := make(chan handled, 2*n)
	released := make(chan struct{}, 2*n)
	// Above concurrency 1 the acks go through an ackBatcher (multiple
	// acks of contiguous finished deliveries, docs/worker.md); what it
	// holds is sent before serve returns.
	var acks *ackBatcher
	if n > 1 {
		defer func() { acks.Flush() }()
	}
	inflight, busy := 0, 0
	// At concurrency 1 the records keep the delivery order even when a
	// handler that released its slot finishes after the next one (a slow
	// Finish or re-publish): a finished delivery waits in pending until
	// the ones taken before it are accounted.
	ordered := n == 1
	taken, next := 0, 0
	pending := map[int]handled{}
	// Handlers run on goroutines kept between messages (callRunner), not
	// on a fresh one per delivery whose stack grows every time.
	handlers := newCallRunner()
	var fatal error
	// finish takes one finished delivery, accounts it (or, ordered, every
	// one now due) and reports whether it was requeued.
	finish := func(d handled) bool {
		inflight--
		if !d.released {
			busy--
		}
		if d.err != nil && fatal == nil {
			fatal = d.err
		}
		if !ordered {
			c.account(ctx, &d.rec, d.body)
			return d.rec.Requeued
		}
		pending[d.take] = d
		for p, ok := pending[next]; ok; p, ok = pending[next] {
			delete(pending, next)
			next++
			c.account(ctx, &p.rec, p.body)
		}
		return d.rec.Requeued
	}
	// drain waits for every handler in flight.
	drain := func() {
		for inflight > 0 {
			if c.idle != nil {
				c.idle(inflight, true)
			}
			select {
			case f := <-finished:
				finish(f)
			case <-released:
				busy--
			}
		}
	}
	maxReached := func() bool {
		return c.cfg.MaxMessages > 0 && c.stats.handled >= c.cfg.MaxMessages
	}
	// accept makes d this session's: the first one logs that this replica
	// is the active consumer, and d acks through its own channel
	// generation (an ack after the session was lost is refused,
	// ErrStaleDelivery, never sent on the next channel).
	accept := func(d amqp.Delivery) amqp.Delivery {
		if c.health.active.CompareAndSwap(false, true) {
			c.log.Info("active consumer", "worker_id", c.cfg.WorkerID, "queue", c.topology.Names.Main, "generation", gen)
		}
		ga := genAcker{gen: gen, gens: &c.gens, inner: d.Acknowledger}
		d.Acknowledger = ga
		if n > 1 {
			if acks == nil {
				acks = newAckBatcher(ga, ackGroup(n), AckFlushDelay)
				acks.after = c.afterFunc
				acks.onErr = func(tag uint64, k int, err error) {
					c.log.Warn("multiple ack failed; the broker redelivers those messages and the ledger suppresses each as a duplicate",
						"up_to_tag", tag, "messages", k, "error", err.Error())
				}
			}
			// Only a delivery of the batcher's own channel is registered:
			// a registered tag nobody settles would hold every later ack.
			if acks.inner.(genAcker).inner == ga.inner {
				if ack, ok := acks.register(d.DeliveryTag); ok {
					d.Acknowledger = ack
				}
			}
		}
		return d
	}
	// start hands d (its body decoded already when pre is not nil) to a
	// handler in a free slot.
	start := func(d amqp.Delivery, pre *decoded) {
		c.pace.took(time.Now())
		inflight++
		busy++
		take := taken
		taken++
		run := handlers.run
		if c.spawn != nil {
			run = c.spawn
		}
		run(func() {
			early := false
			rec, herr := h.handle(ctx, d, pre, func() {
				early = true
				released <- struct{}{}
			})
			finished <- handled{rec: rec, body: d.Body, err: herr, released: early, take: take}
		})
	}
	// With ReleaseAfterSend (concurrency 1, no pacing), the next delivery
	// is taken from the prefetch buffer while the slot is busy with a send
	// and its body decoded then, so the decode is not between two sends;
	// it is handled (window, fence, Begin, send) only when the slot is
	// free, as before. Held here or in the buffer, it is unacked: a lost
	// session or a stop leaves it to the broker alike.
	decodeAhead := h.c.ReleaseAfterSend && n == 1
	var ahead *amqp.Delivery
	var aheadPre *decoded
	for {
		if fatal != nil {
			drain()
			return false, fatal
		}
		if maxReached() {
			drain()
			c.log.Info("max messages handled; stopping", "handled", c.stats.handled)
			return false, errStop
		}
		if ctx.Err() != nil {
			drain()
			return false, errStop
		}
		if ahead != nil && busy < n {
			start(*ahead, aheadPre)
			ahead, aheadPre = nil, nil
			continue
		}
		// Take a new delivery only with a free slot and, under
		// MaxMessages, room left for it; or, decoding ahead, into ahead.
		capped := c.cfg.MaxMessages > 0 && c.stats.handled+inflight+len(pending) >= c.cfg.MaxMessages
		in, early := deliveries, (<-chan amqp.Delivery)(nil)
		if busy >= n || capped {
			in = nil
			if decodeAhead && ahead == nil && !capped {
				early = deliveries
			}
		}
		// Under Config.SendInterval, no take before the pacer allows it.
		var paced <-chan time.Time
		if in != nil {
			if w := c.pace.wait(time.Now()); w > 0 {
				in, paced = nil, time.After(w)
			}
		}
		if inflight == 0 && acks != nil {
			acks.Flush() // nothing in flight: no company is coming soon
		}
		if c.idle != nil {
			// Only a delivery (with a free slot), a handler finishing, the
			// session's loss, ctx (or the pacer) wakes serve now
			// (SimLoop.Idle).
			c.idle(inflight, false)
		}
		select {
		case <-paced:
		case <-ctx.Done():
			drain()
			return false, errStop
		case <-lost:
			drain()
			if fatal != nil {
				return false, fatal
			}
			return true, nil
		case <-released:
			busy--
		case f := <-finished:
			if finish(f) {
				// The broker hands the requeued message straight back: pause
				// (newBackoff, growing per consecutive requeue) instead of
				// spinning while a target queue is unavailable.
				c.sleep(ctx, pause.NextBackOff(), lost)
			} else {
				pause.Reset()
			}
		case d, ok := <-early:
			if !ok {
				drain()
				if fatal != nil {
					return false, fatal
				}
				return true, nil
			}
			d = accept(d)
			ahead, aheadPre = &d, h.predecode(d)
		case d, ok := <-in:
			if !ok {
				drain()
				if fatal != nil {
					return false, fatal
				}
				return true, nil
			}
			start(accept(d), nil)
		}
	}
}
