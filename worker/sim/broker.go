package sim

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// HeaderMessage is the header the simulator's producer puts on every
// message ("m<Msg>/b<Body>"); the worker copies headers into every copy it
// publishes, so the checker finds each message's copies by it.
const HeaderMessage = "x-sim-message"

// Broker is the model of RabbitMQ as the worker relies on it, built from
// the worker's own declarations (queues.Topology.Queues): the default
// exchange routing by queue name; per-message expiration and x-message-ttl
// (the lower wins), expired only at the head of a queue, as RabbitMQ does,
// and dead-lettered to x-dead-letter-routing-key with the expiration
// removed; a reject or nack without requeue on main dead-lettered to
// dead; a consume channel with a prefetch whose unacked deliveries go back
// to the head, redelivered, when it closes (channel close, process
// crash); a quorum queue's delivery count (x-delivery-count) and
// x-delivery-limit, over which a returned message is dead-lettered (at
// least once: the model never drops one); basic.get for the unknown
// drain; publisher confirms and mandatory returns (brokerpub.go); single
// active consumer on the main queue when the topology declares it
// (x-single-active-consumer): only the first registered consumer that is
// still open gets deliveries, and when its channel closes (its unacked
// deliveries requeued, redelivered) the next one becomes active; without
// it every consumer takes deliveries (competing consumers).
type Broker struct {
	clock  *Clock
	names  queues.Names
	queues map[string]*queue
	order  []string
	nextID uint64
	tag    uint64
	gen    int
	// unacked holds every delivered, unsettled message by tag.
	unacked map[uint64]*unacked
	// sac: the main queue has single active consumer; consumers are the
	// open consume channels in the order they registered (the first is
	// the active one).
	sac       bool
	consumers []*Channel
	// fault is the armed publish fault ("" none).
	fault string
	// crash is called at the crash points a publish or an ack passes
	// ("publish-before", "publish-after", "ack"); a non-nil error (the
	// process died there, or its connection closed while it was frozen
	// there: crashPoint) is the call's.
	crash func(point string) error
	// moves records every enqueue since the scheduler last took them.
	moves []Move
	// Faults counts the publish faults that fired, by kind.
	Faults map[string]int
}

// Move is one message enqueued: by whom ("producer", "handler", "drain",
// "broker" for a dead-letter hop or a requeue), where, and its headers'
// outcome.
type Move struct {
	Who, Queue, Message, Outcome string
}

type queue struct {
	name string
	// missing: the queue was deleted (while empty) and is not declared
	// again yet: a publish to it is returned unroutable (Declare).
	missing bool
	msgs    []*bmsg
	dlx     string // dead-letter routing key ("" none)
	ttl     time.Duration
	limit   int // x-delivery-limit (0 none)
}

type bmsg struct {
	id          uint64
	p           amqp.Publishing
	expiresAt   time.Time // zero: never
	redelivered bool
	returns     int // quorum delivery count
}

type unacked struct {
	m     *bmsg
	queue *queue
	ch    *Channel
}

// NewBroker returns a broker with topo's six queues declared.
func NewBroker(clock *Clock, topo queues.Topology) *Broker {
	b := &Broker{clock: clock, names: topo.Names, queues: map[string]*queue{}, unacked: map[uint64]*unacked{},
		crash: func(string) error { return nil }, Faults: map[string]int{}}
	for _, spec := range topo.Queues() {
		q := &queue{name: spec.Name}
		if v, ok := spec.Args[queues.ArgDeadLetterRoutingKey].(string); ok {
			q.dlx = v
		}
		if v, ok := spec.Args[queues.ArgMessageTTL].(int64); ok {
			q.ttl = time.Duration(v) * time.Millisecond
		}
		if v, ok := spec.Args[queues.ArgDeliveryLimit].(int64); ok {
			q.limit = int(v)
		}
		b.queues[spec.Name] = q
		b.order = append(b.order, spec.Name)
		if spec.Name == topo.Names.Main {
			b.sac, _ = spec.Args[queues.ArgSingleActiveConsumer].(bool)
		}
	}
	return b
}

// Len returns the number of ready (not unacked) messages in queue.
func (b *Broker) Len(name string) int { return len(b.queues[name].msgs) }

// Unacked returns the number of delivered, unsettled messages.
func (b *Broker) Unacked() int { return len(b.unacked) }

// TakeMoves returns the enqueues since the last call.
func (b *Broker) TakeMoves() []Move {
	m := b.moves
	b.moves = nil
	return m
}

func (b *Broker) enqueue(who string, q *queue, m *bmsg) {
	q.msgs = append(q.msgs, m)
	b.moves = append(b.moves, Move{Who: who, Queue: q.name, Message: headerString(m.p.Headers, HeaderMessage),
		Outcome: headerString(m.p.Headers, queues.HeaderOutcome)})
}

func headerString(h amqp.Table, k string) string {
	s, _ := h[k].(string)
	return s
}

// publish enqueues a copy of p on queue name (the default exchange).
func (b *Broker) publish(who, name string, p amqp.Publishing) error {
	q, ok := b.queues[name]
	if !ok || q.missing {
		// basic.return (312 NO_ROUTE) before the confirm.
		return fmt.Errorf("publish to %s: %w: 312 NO_ROUTE", name, worker.ErrUnroutable)
	}
	h := make(amqp.Table, len(p.Headers))
	for k, v := range p.Headers {
		h[k] = v
	}
	p.Headers = h
	p.Body = append([]byte(nil), p.Body...)
	b.nextID++
	m := &bmsg{id: b.nextID, p: p}
	now := b.clock.Now()
	ttl := q.ttl
	if p.Expiration != "" {
		if ms, err := strconv.ParseInt(p.Expiration, 10, 64); err == nil && ms >= 0 {
			if d := time.Duration(ms) * time.Millisecond; ttl == 0 || d < ttl {
				ttl = d
			}
		}
	}
	if ttl > 0 {
		m.expiresAt = now.Add(ttl)
	}
	b.enqueue(who, q, m)
	return nil
}

// Channel is one AMQP channel of the model: the consume channel (its
// prefetch, its deliveries) or a channel the unknown drain gets from.
type Channel struct {
	b        *Broker
	gen      int
	open     bool
	prefetch int
	buf      []amqp.Delivery
}

// OpenChannel opens a channel with prefetch (0: a channel for Get); one
// with a prefetch consumes the main queue, registered behind the
// consumers already there.
func (b *Broker) OpenChannel(prefetch int) *Channel {
	b.gen++
	c := &Channel{b: b, gen: b.gen, open: true, prefetch: prefetch}
	if prefetch > 0 {
		b.consumers = append(b.consumers, c)
	}
	return c
}

// Active reports whether the consume channel c gets deliveries: it is
// open and, under single active consumer, the first registered.
func (c *Channel) Active() bool {
	if !c.open || c.prefetch == 0 {
		return false
	}
	return !c.b.sac || c.b.consumers[0] == c
}

// Open reports whether the channel is open.
func (c *Channel) Open() bool { return c.open }

func (c *Channel) inFlight() int {
	n := 0
	for _, u := range c.b.unacked {
		if u.ch == c {
			n++
		}
	}
	return n
}

// Next returns the next delivery of the main queue on the consume
// channel: the broker first fills the channel up to its prefetch.
func (c *Channel) Next() (amqp.Delivery, bool) {
	if !c.open {
		return amqp.Delivery{}, false
	}
	main := c.b.queues[c.b.names.Main]
	for c.Active() && c.inFlight() < c.prefetch && len(main.msgs) > 0 {
		c.buf = append(c.buf, c.deliver(main))
	}
	if len(c.buf) == 0 {
		return amqp.Delivery{}, false
	}
	d := c.buf[0]
	c.buf = c.buf[1:]
	return d, true
}

func (c *Channel) deliver(q *queue) amqp.Delivery {
	m := q.msgs[0]
	q.msgs = q.msgs[1:]
	c.b.tag++
	c.b.unacked[c.b.tag] = &unacked{m: m, queue: q, ch: c}
	h := make(amqp.Table, len(m.p.Headers)+1)
	for k, v := range m.p.Headers {
		h[k] = v
	}
	if m.returns > 0 && q.limit > 0 {
		h["x-delivery-count"] = int64(m.returns)
	}
	return amqp.Delivery{Acknowledger: acker{c}, Headers: h, ContentType: m.p.ContentType,
		DeliveryMode: m.p.DeliveryMode, MessageId: m.p.MessageId, Timestamp: m.p.Timestamp,
		Expiration: m.p.Expiration, DeliveryTag: c.b.tag, Redelivered: m.redelivered,
		RoutingKey: q.name, Body: append([]byte(nil), m.p.Body...)}
}

// Get is basic.get with manual ack (autoAck must be false).
func (c *Channel) Get(name string, autoAck bool) (amqp.Delivery, bool, error) {
	if !c.open {
		return amqp.Delivery{}, false, amqp.ErrClosed
	}
	if autoAck {
		return amqp.Delivery{}, false, errors.New("sim broker: get with auto-ack is not modelled")
	}
	q, ok := c.b.queues[name]
	if !ok || q.missing {
		return amqp.Delivery{}, false, fmt.Errorf("get %s: 404 NOT_FOUND: no such queue", name)
	}
	if len(q.msgs) == 0 {
		return amqp.Delivery{}, false, nil
	}
	return c.deliver(q), true, nil
}

// Close closes the channel: its unacked deliveries go back to the head of
// their queues in order, redelivered (a quorum queue counts a return, and
// dead-letters a message over its delivery limit), and a consumer leaves
// the main queue (under single active consumer the next one registered
// becomes active).
func (c *Channel) Close() {
	if !c.open {
		return
	}
	c.open = false
	c.buf = nil
	for i, o := range c.b.consumers {
		if o == c {
			c.b.consumers = append(c.b.consumers[:i:i], c.b.consumers[i+1:]...)
			break
		}
	}
	var tags []uint64
	for t, u := range c.b.unacked {
		if u.ch == c {
			tags = append(tags, t)
		}
	}
	// Highest tag first, each to the head: the queue keeps their order.
	for i := range tags {
		for j := i + 1; j < len(tags); j++ {
			if tags[j] > tags[i] {
				tags[i], tags[j] = tags[j], tags[i]
			}
		}
	}
	for _, t := range tags {
		c.b.settle(t, false, true)
	}
}

// settle acks (ack) or returns the delivery tag: requeue to the head, or
// dead-letter.
func (b *Broker) settle(tag uint64, ack, requeue bool) {
	u := b.unacked[tag]
	delete(b.unacked, tag)
	if ack {
		return
	}
	q, m := u.queue, u.m
	if requeue {
		m.redelivered = true
		if q.limit > 0 {
			m.returns++
			if m.returns > q.limit {
				b.deadLetter(q, m, "delivery_limit")
				return
			}
		}
		q.msgs = append([]*bmsg{m}, q.msgs...)
		return
	}
	b.deadLetter(q, m, "rejected")
}

// HeaderDeathReason is the reason of a message's last dead-lettering
// ("expired", "rejected", "delivery_limit"), as RabbitMQ 3.13+ sets it.
const HeaderDeathReason = "x-last-death-reason"

// deadLetter moves m from q to q's dead-letter target (nowhere when q
// has none), its expiration removed, the reason in HeaderDeathReason.
func (b *Broker) deadLetter(q *queue, m *bmsg, reason string) {
	if q.dlx == "" {
		return
	}
	m.p.Expiration, m.expiresAt, m.redelivered, m.returns = "", time.Time{}, false, 0
	m.p.Headers[HeaderDeathReason] = reason
	b.enqueue("broker", b.queues[q.dlx], m)
}

// Expire dead-letters every expired message at the head of a queue.
func (b *Broker) Expire() {
	now := b.clock.Now()
	for _, name := range b.order {
		q := b.queues[name]
		for len(q.msgs) > 0 && !q.msgs[0].expiresAt.IsZero() && !q.msgs[0].expiresAt.After(now) {
			m := q.msgs[0]
			q.msgs = q.msgs[1:]
			b.deadLetter(q, m, "expired")
		}
	}
}

// NextExpiry returns the earliest expiry of a queue's head, and false
// when no head expires.
func (b *Broker) NextExpiry() (time.Time, bool) {
	var t time.Time
	for _, name := range b.order {
		q := b.queues[name]
		if len(q.msgs) > 0 && !q.msgs[0].expiresAt.IsZero() && (t.IsZero() || q.msgs[0].expiresAt.Before(t)) {
			t = q.msgs[0].expiresAt
		}
	}
	return t, !t.IsZero()
}

// Copy is one message waiting in a queue, as the checker sees it.
type Copy struct {
	Queue, Message, Outcome, Code string
	Attempt                       int
	// DeathReason is HeaderDeathReason ("" never dead-lettered).
	DeathReason string
}

// Copies returns every ready message of every queue, in queue order.
func (b *Broker) Copies() []Copy {
	var out []Copy
	for _, name := range b.order {
		for _, m := range b.queues[name].msgs {
			out = append(out, Copy{Queue: name, Message: headerString(m.p.Headers, HeaderMessage),
				Outcome: headerString(m.p.Headers, queues.HeaderOutcome), Code: headerString(m.p.Headers, queues.HeaderCode),
				Attempt: queues.Attempt(m.p.Headers), DeathReason: headerString(m.p.Headers, HeaderDeathReason)})
		}
	}
	return out
}

// acker is a delivery's amqp.Acknowledger: it settles on its channel
// while the channel is open. Live reports that, as the consumer's
// generation check does for the Handler.
type acker struct{ c *Channel }

var _ amqp.Acknowledger = acker{}

func (a acker) check(tag uint64) error {
	if !a.c.open {
		return fmt.Errorf("settle tag %d: %w", tag, amqp.ErrClosed)
	}
	if u, ok := a.c.b.unacked[tag]; !ok || u.ch != a.c {
		a.c.Close() // RabbitMQ: PRECONDITION_FAILED, unknown delivery tag
		return fmt.Errorf("settle tag %d: unknown delivery tag", tag)
	}
	return nil
}

func (a acker) Ack(tag uint64, multiple bool) error {
	if err := a.c.b.crash("ack"); err != nil {
		return err
	}
	if err := a.check(tag); err != nil {
		return err
	}
	a.c.b.settle(tag, true, false)
	return nil
}

func (a acker) Nack(tag uint64, multiple, requeue bool) error {
	if err := a.check(tag); err != nil {
		return err
	}
	a.c.b.settle(tag, false, requeue)
	return nil
}

func (a acker) Reject(tag uint64, requeue bool) error { return a.Nack(tag, false, requeue) }

// Live reports whether the delivery's channel is still open.
func (a acker) Live() bool { return a.c.open }
