package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// Errors of the confirm-backed publisher.
var (
	// ErrPublishNacked: the broker nacked the publish, or the channel
	// closed before it confirmed it.
	ErrPublishNacked = errors.New("publish not confirmed")
	// ErrUnroutable: the broker returned the mandatory publish (no such
	// queue).
	ErrUnroutable = errors.New("publish returned unroutable")
	// ErrCloseNotAttributed: the broker closed the channel while other
	// publishes were at the broker beside this one, so its reason (a 406
	// for a body over max_message_size) may be another publish's; the
	// error carries the reason as text only. PublishAlone, on a new
	// channel, tells whose it is.
	ErrCloseNotAttributed = errors.New("channel closed with other publishes outstanding")
)

// ConfirmWindow is how many publishes one ConfirmPublisher has at the
// broker at once, awaiting their confirms together; a Publish beyond it
// waits for a free place (or its ctx). It is MaxConcurrency, so the
// Handler's copies (at most one per message in flight) never wait for one.
const ConfirmWindow = MaxConcurrency

// ConfirmPublisher publishes on a channel in confirm mode with the
// mandatory flag and returns from Publish only once the broker confirmed
// that publish. Safe for concurrent use, and pipelined: concurrent Publish
// calls have their publishes at the broker at once (up to ConfirmWindow)
// and await their confirms together, instead of one round trip each in
// turn; each caller is told its own outcome.
//
// A basic.return names no delivery tag, so each publish carries a header
// of the publisher's own, queues.HeaderPublish (an int64 unique within
// the publisher; the caller's Headers map is copied, never changed), and a
// return is matched to its publish by it. The rest rests on two facts:
//   - RabbitMQ sends a mandatory publish's basic.return before its
//     basic.ack or basic.nack (rabbitmq.com/docs/confirms#when-publishes-are-confirmed;
//     rabbitmq-server deps/rabbit/test/publisher_confirms_parallel_SUITE.erl,
//     confirm_mandatory_unroutable).
//   - amqp091-go v1.16.0 handles both on the connection's one reader
//     goroutine in arrival order (connection.go Connection.reader, demux,
//     dispatchN; channel.go Channel.dispatch): for basicReturn it sends
//     the Return to the NotifyReturn channel (notifyAll) before, for the
//     basicAck that follows, confirms.go confirms.One/Multiple close the
//     DeferredConfirmation's done channel. So when a publish's
//     confirmation is done, its return, if any, is in the returns buffer
//     or was taken out by another caller, who recorded it by its header.
//
// notifyAll gives up on a full listener channel after notifyTimeout (5 s),
// dropping the return: a return would be lost, its publish told routed.
// So a publish keeps its place in the window until its confirmation is
// done and the buffer was drained after it (also when its caller gave up
// on ctx), and the buffer holds ConfirmWindow returns: every return in it
// belongs to a publish holding a place, so it never fills.
//
// A channel closed by the broker names no publish either. The broker's
// reason (*amqp.Error) is wrapped only into the error of a publish that
// was alone at the broker from its send to its nack; the others are told
// ErrCloseNotAttributed, or a 406 caused by one oversized copy would make
// every copy beside it look refused for good (permanentPublishError).
//
// The channel must carry this publisher's publishes only, and the
// connection must not use the library's automatic recovery (Config.Recovery
// nil, as the worker dials): then a closed channel closes the returns
// channel and nacks every pending confirmation (channel.go closeResources,
// confirms.go deferredConfirmations.Close).
type ConfirmPublisher struct {
	ch *amqp.Channel
	// publish sends one mandatory publish to queue through the default
	// exchange (ch's PublishWithDeferredConfirmWithContext; a fake broker
	// in unit tests).
	publish func(ctx context.Context, queue string, msg amqp.Publishing) (confirmation, error)
	// window holds one token per publish at the broker (ConfirmWindow);
	// PublishAlone holds them all, one PublishAlone at a time (solo).
	window chan struct{}
	solo   chan struct{}

	// mu guards pending, lastID and closeErr, and every receive from
	// returns and closes, so a return taken out of the buffer is recorded
	// before anyone else looks.
	mu sync.Mutex
	// pending holds each publish by its HeaderPublish id from just before
	// its send until its outcome is settled.
	pending map[int64]*pendingPublish
	// lastID is the id of the latest publish (ids grow by one).
	lastID  int64
	returns chan amqp.Return
	closes  chan *amqp.Error
	// closeErr is the broker's reason for closing ch, once seen.
	closeErr *amqp.Error

	// outstanding counts publishes sent and not yet settled;
	// maxOutstanding is its highest value (tests read it).
	outstanding, maxOutstanding atomic.Int64
}

// pendingPublish is one publish between its send and its settling.
type pendingPublish struct {
	ret *amqp.Return // its basic.return, once drained
	// othersAtStart: other publishes were pending when it started.
	othersAtStart bool
}

// confirmation is what ConfirmPublisher needs of an
// *amqp.DeferredConfirmation: Done is closed once the broker acked or
// nacked the publish, or the channel closed (nacked); Acked then says
// which (confirms.go: WaitContext is a select on ctx and Done, then
// the ack).
type confirmation interface {
	Done() <-chan struct{}
	Acked() bool
}

var _ Publisher = (*ConfirmPublisher)(nil)

// NewConfirmPublisher puts ch in confirm mode and listens for its returns
// and its close. Errors: the channel refused confirm mode.
func NewConfirmPublisher(ch *amqp.Channel) (*ConfirmPublisher, error) {
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("enable publisher confirms: %w", err)
	}
	returns := ch.NotifyReturn(make(chan amqp.Return, ConfirmWindow))
	// Buffered: the library sends the close reason before it fails the
	// outstanding confirms, so it is here when Publish looks.
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	publish := func(ctx context.Context, queue string, msg amqp.Publishing) (confirmation, error) {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, msg)
		if err != nil {
			return nil, err
		}
		if dc == nil {
			return nil, errors.New("channel not in confirm mode")
		}
		return dc, nil
	}
	p := newConfirmPublisher(publish, returns, closes)
	p.ch = ch
	return p, nil
}

// newConfirmPublisher is a ConfirmPublisher over publish, whose window is
// the returns channel's capacity.
func newConfirmPublisher(publish func(context.Context, string, amqp.Publishing) (confirmation, error),
	returns chan amqp.Return, closes chan *amqp.Error) *ConfirmPublisher {
	return &ConfirmPublisher{publish: publish, window: make(chan struct{}, cap(returns)),
		solo: make(chan struct{}, 1), pending: map[int64]*pendingPublish{}, returns: returns, closes: closes}
}

// Closed reports whether the publisher's channel is closed (by the broker,
// for example a 406 for a message over its max_message_size, or with its
// connection): it can then publish nothing more.
func (p *ConfirmPublisher) Closed() bool { return p.ch.IsClosed() }

// Close closes the publisher's channel.
func (p *ConfirmPublisher) Close() error { return p.ch.Close() }

// channelError returns the broker's reason for closing the channel, if it
// closed with one (nil while open or after a clean close).
func (p *ConfirmPublisher) channelError() *amqp.Error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closeErr == nil {
		select {
		case e := <-p.closes:
			p.closeErr = e
		default:
		}
	}
	return p.closeErr
}

// Publish publishes msg to queue through the default exchange and waits for
// the broker's confirm until ctx is done, beside the other callers'
// publishes. It returns nil only for a confirmed and routed publish;
// otherwise an error wrapping ErrPublishNacked, ErrUnroutable (this
// publish's own basic.return), ctx's error or the channel's error. When
// the broker closed the channel with this publish alone at the broker (a
// 406 PRECONDITION_FAILED for a body over its max_message_size), the error
// wraps ErrPublishNacked and the broker's *amqp.Error; with others beside
// it, ErrPublishNacked and ErrCloseNotAttributed. msg.Headers is not
// modified; the published copy also carries queues.HeaderPublish.
func (p *ConfirmPublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	if err := p.acquire(ctx, 1); err != nil {
		return fmt.Errorf("publish to %s: wait for the confirm window: %w", queue, err)
	}
	return p.publishHolding(ctx, queue, msg, 1)
}

// PublishAlone is Publish with no other publish of p at the broker: it
// waits (until ctx is done) for the window to empty and holds it whole,
// so a channel close is this publish's own and its error wraps the
// broker's *amqp.Error. The Handler uses it for a copy's next attempt
// after ErrCloseNotAttributed.
func (p *ConfirmPublisher) PublishAlone(ctx context.Context, queue string, msg amqp.Publishing) error {
	select {
	case p.solo <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("publish alone to %s: %w", queue, ctx.Err())
	}
	defer func() { <-p.solo }()
	if err := p.acquire(ctx, cap(p.window)); err != nil {
		return fmt.Errorf("publish alone to %s: wait for the confirm window: %w", queue, err)
	}
	return p.publishHolding(ctx, queue, msg, cap(p.window))
}

// acquire takes n window places, or none when ctx ends first.
func (p *ConfirmPublisher) acquire(ctx context.Context, n int) error {
	for i := range n {
		select {
		case p.window <- struct{}{}:
		case <-ctx.Done():
			for range i {
				<-p.window
			}
			return ctx.Err()
		}
	}
	return nil
}

// publishHolding publishes msg holding places window places, which it
// gives back once the publish is settled (see settle).
func (p *ConfirmPublisher) publishHolding(ctx context.Context, queue string, msg amqp.Publishing, places int) error {
	h := make(amqp.Table, len(msg.Headers)+1)
	for k, v := range msg.Headers {
		h[k] = v
	}
	p.mu.Lock()
	p.lastID++
	id := p.lastID
	p.pending[id] = &pendingPublish{othersAtStart: len(p.pending) > 0}
	p.mu.Unlock()
	h[queues.HeaderPublish] = id
	msg.Headers = h

	// amqp091 assigns the delivery tag and writes the frames under the
	// channel's own mutex (channel.go PublishWithDeferredConfirm): the
	// only section the publishes take in turn.
	dc, err := p.publish(ctx, queue, msg)
	if err != nil {
		p.settle(id, false, places)
		if ce := p.channelError(); ce != nil {
			return fmt.Errorf("publish to %s: %w: %w", queue, err, ce)
		}
		return fmt.Errorf("publish to %s: %w", queue, err)
	}
	p.raiseMax(p.outstanding.Add(1))
	select {
	case <-dc.Done():
	case <-ctx.Done():
		select {
		case <-dc.Done(): // both ready: the outcome is known, report it
		default:
			// The publish stays at the broker: it keeps its places in the
			// window until its confirmation is done (or the channel
			// closes), and its return, if any, is dropped.
			go func() {
				<-dc.Done()
				p.settle(id, true, places)
			}()
			return fmt.Errorf("wait confirm from %s: %w", queue, ctx.Err())
		}
	}
	s := p.settle(id, true, places)
	if !dc.Acked() {
		ce := p.channelError()
		switch {
		case ce == nil:
			return fmt.Errorf("publish to %s: %w", queue, ErrPublishNacked)
		case s.alone:
			return fmt.Errorf("publish to %s: %w: %w", queue, ErrPublishNacked, ce)
		default:
			return fmt.Errorf("publish to %s: %w: %w (%v)", queue, ErrPublishNacked, ErrCloseNotAttributed, ce)
		}
	}
	if s.ret != nil {
		return fmt.Errorf("publish to %s: %w: %d %s", queue, ErrUnroutable, s.ret.ReplyCode, s.ret.ReplyText)
	}
	return nil
}

// settled is what settle learnt of one publish.
type settled struct {
	ret *amqp.Return // its own basic.return
	// alone: no other publish was pending at any time while it was.
	alone bool
}

// settle ends publish id once its confirmation is done (or it never went
// out): it drains the returns buffer, takes id out of pending with its
// own return, and gives its places in the window back.
func (p *ConfirmPublisher) settle(id int64, sent bool, places int) settled {
	p.mu.Lock()
	p.drainReturnsLocked()
	pp := p.pending[id]
	delete(p.pending, id)
	// No one was pending when it started, and no one started since.
	s := settled{ret: pp.ret, alone: !pp.othersAtStart && p.lastID == id}
	p.mu.Unlock()
	if sent {
		p.outstanding.Add(-1)
	}
	for range places {
		<-p.window
	}
	return s
}

// drainReturnsLocked records each buffered return under its publish's id;
// a return nobody waits for (its caller gave up, or no id of this
// publisher) is dropped. p.mu is held.
func (p *ConfirmPublisher) drainReturnsLocked() {
	for {
		select {
		case r, open := <-p.returns:
			if !open {
				return
			}
			id, _ := r.Headers[queues.HeaderPublish].(int64)
			if pp, waiting := p.pending[id]; waiting && pp.ret == nil {
				pp.ret = &r
			}
		default:
			return
		}
	}
}

// raiseMax sets maxOutstanding to n if n is higher.
func (p *ConfirmPublisher) raiseMax(n int64) {
	for {
		cur := p.maxOutstanding.Load()
		if n <= cur || p.maxOutstanding.CompareAndSwap(cur, n) {
			return
		}
	}
}

// pendingCount is how many publishes are not settled yet (tests).
func (p *ConfirmPublisher) pendingCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}
