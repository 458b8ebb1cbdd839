package worker

import (
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// AckFlushDelay is the longest an ack waits in an ackBatcher for company
// once every delivery before it is settled (10 ms: a few messages'
// worth at hundreds of sends/s; the delivery stays unacked, counted in the
// prefetch, meanwhile).
const AckFlushDelay = 10 * time.Millisecond

// ackGroup is how many acks an ackBatcher gathers before it sends them
// at once at concurrency n (a quarter of the sends in flight, at least
// 2); the prefetch leaves room for them (consumer.prefetch).
func ackGroup(n int) int { return max(2, n/4) }

// ackBatcher acks one channel's deliveries with multiple acks (basic.ack
// with multiple set: every unacked delivery up to the tag) where the
// order of outcomes allows it. serve registers each delivery's tag as it
// takes it (the broker numbers a channel's deliveries 1, 2, 3, ...); a
// handler's Ack only marks its tag done. Once every tag up to some tag H
// is settled (done, or nacked or rejected on its own), and ackGroup of
// them wait or AckFlushDelay has passed since the first did, one
// Ack(H, multiple) settles them all: a multiple ack never covers a
// delivery not yet finished (its Finish not yet durable, its copy not
// yet confirmed), since the handler acks only after both. A Nack or
// Reject goes to the broker at once, alone.
//
// An ack not yet sent when the session is lost is not sent: the broker
// redelivers the message and the ledger, which holds its outcome since
// before the Ack, suppresses it as a DUPLICATE. Flush sends what can be
// sent (serve calls it before it returns). Safe for concurrent use.
type ackBatcher struct {
	inner amqp.Acknowledger // the channel's (genAcker: refuses a lost generation)
	group int
	delay time.Duration
	// onErr is told a failed multiple ack (the log; nil = none).
	onErr func(tag uint64, n int, err error)
	// after starts the flush timer: f runs once delay has passed, unless
	// stopped first (nil: time.AfterFunc; the simulator's clock runs it
	// through SimLoop.AfterFunc).
	after func(d time.Duration, f func()) stopper

	mu sync.Mutex
	// base is the lowest tag not yet settled nor acked; next the next tag
	// serve will register; done the tags at or above base that are done
	// (acked by their handler, to be sent) or settled alone (nacked).
	base, next uint64
	done       map[uint64]bool // true: acked, waiting; false: settled alone
	// ready is the highest tag H with base..H all done, waiting counts the
	// acks among them not yet sent and lastAck is the highest of those
	// acks (a multiple ack names it, never a tag settled alone); 0 when
	// none.
	ready   uint64
	waiting int
	lastAck uint64
	timer   stopper
	// sent counts the multiple acks sent and the deliveries they acked
	// (tests).
	sent, acked int
}

func newAckBatcher(inner amqp.Acknowledger, group int, delay time.Duration) *ackBatcher {
	return &ackBatcher{inner: inner, group: max(group, 1), delay: delay, done: map[uint64]bool{}}
}

// register takes tag, the channel's next delivery, and returns the
// Acknowledger its handler uses; ok is false (and nothing is registered)
// when tag is not the one after the last registered (the broker numbers a
// channel's deliveries one by one): the caller then acks it alone.
func (b *ackBatcher) register(tag uint64) (_ amqp.Acknowledger, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.next == 0:
		b.base = tag
	case tag != b.next:
		return nil, false
	}
	b.next = tag + 1
	return batchedAck{b: b}, true
}

// batchedAck is one delivery's Acknowledger under an ackBatcher.
type batchedAck struct{ b *ackBatcher }

var _ amqp.Acknowledger = batchedAck{}

// Ack marks tag done (multiple must be false: a handler acks its own
// delivery); it is sent with the next multiple ack that covers it. A
// delivery of a lost generation is refused at once (ErrStaleDelivery), as
// genAcker refuses it.
func (a batchedAck) Ack(tag uint64, multiple bool) error {
	if multiple {
		return fmt.Errorf("ack tag %d: a handler acks its own delivery only (multiple ack refused)", tag)
	}
	if !a.Live() {
		return fmt.Errorf("ack tag %d: %w", tag, ErrStaleDelivery)
	}
	return a.b.settle(tag, true, func() error { return nil })
}

// Nack settles tag alone at once.
func (a batchedAck) Nack(tag uint64, multiple, requeue bool) error {
	if multiple {
		return fmt.Errorf("nack tag %d: a handler nacks its own delivery only (multiple nack refused)", tag)
	}
	return a.b.settle(tag, false, func() error { return a.b.inner.Nack(tag, false, requeue) })
}

// Reject settles tag alone at once.
func (a batchedAck) Reject(tag uint64, requeue bool) error {
	return a.b.settle(tag, false, func() error { return a.b.inner.Reject(tag, requeue) })
}

// Live is the inner Acknowledger's (the generation's) when it says.
func (a batchedAck) Live() bool {
	if l, ok := a.b.inner.(interface{ Live() bool }); ok {
		return l.Live()
	}
	return true
}

// settle marks tag done (ack) or runs alone (a nack or reject, sent at
// once and under the lock, so no multiple ack passes tag before it is
// settled), then sends a multiple ack when ackGroup wait.
func (b *ackBatcher) settle(tag uint64, ack bool, alone func() error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if tag < b.base || tag >= b.next || b.done[tag] {
		return fmt.Errorf("settle tag %d: not an unsettled delivery of this channel (%d..%d)", tag, b.base, b.next-1)
	}
	if !ack {
		if err := alone(); err != nil {
			return err
		}
	}
	b.done[tag] = ack
	b.advance()
	if b.waiting >= b.group {
		b.flushLocked()
	} else if b.waiting > 0 && b.timer == nil && b.delay > 0 {
		b.timer = b.startTimer()
	}
	return nil
}

// startTimer starts the flush timer (b.after, else time.AfterFunc).
func (b *ackBatcher) startTimer() stopper {
	if b.after != nil {
		return b.after(b.delay, b.Flush)
	}
	return time.AfterFunc(b.delay, b.Flush)
}

// stopper is a timer that can be stopped before it fires (*time.Timer
// is one): Stop reports whether it stopped it.
type stopper = interface{ Stop() bool }

// advance moves ready over the done tags that follow it.
func (b *ackBatcher) advance() {
	h := b.base
	if b.ready != 0 {
		h = b.ready + 1
	}
	for {
		ack, ok := b.done[h]
		if !ok {
			return
		}
		b.ready = h
		if ack {
			b.waiting++
			b.lastAck = h
		}
		h++
	}
}

// Flush sends one multiple ack for every ready ack (none when none is;
// nothing on a nil b).
func (b *ackBatcher) Flush() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *ackBatcher) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.ready == 0 {
		return
	}
	h, n := b.ready, b.waiting
	if n > 0 {
		// Up to the last ack, not to h: when h was nacked or rejected
		// alone it is no longer outstanding, and RabbitMQ answers a
		// multiple ack naming a tag it does not hold with a channel
		// error (rabbit_channel collect_acks: "unknown delivery tag").
		// The tags settled alone between lastAck and h need nothing.
		if err := b.inner.Ack(b.lastAck, true); err != nil && b.onErr != nil {
			b.onErr(b.lastAck, n, err)
		}
		b.sent++
		b.acked += n
	}
	for t := b.base; t <= h; t++ {
		delete(b.done, t)
	}
	b.base, b.ready, b.waiting, b.lastAck = h+1, 0, 0, 0
}
