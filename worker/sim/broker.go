package sim

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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
	gen    int
	// open holds the open channels, in the order they opened (each holds
	// its delivered, unsettled messages by delivery tag).
	open []*Channel
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
	// copies counts, per message (HeaderMessage), the copies the worker
	// (its handler or drain) enqueued: an ack (brokerack.go) asks whether
	// one came since the delivery.
	copies map[string]int
	// acked, when set, is told each delivery an ack settles, and whether
	// the worker enqueued a copy of its message since it was delivered
	// (the checker's ack-after-outcome); failures records the channel
	// errors the worker caused since the scheduler last took them.
	acked    func(ch *Channel, message string, copied bool)
	failures []string
	// Faults counts the publish faults that fired, by kind; Acks the
	// multiple acks and the deliveries they settled.
	Faults, Acks map[string]int
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
	// copies is the broker's count of the worker's copies of m's message
	// when it was delivered.
	copies int
}

// NewBroker returns a broker with topo's six queues declared.
func NewBroker(clock *Clock, topo queues.Topology) *Broker {
	b := &Broker{clock: clock, names: topo.Names, queues: map[string]*queue{}, copies: map[string]int{},
		crash: func(string) error { return nil }, Faults: map[string]int{}, Acks: map[string]int{}}
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
func (b *Broker) Unacked() int {
	n := 0
	for _, c := range b.open {
		n += len(c.unacked)
	}
	return n
}

// TakeMoves returns the enqueues since the last call.
func (b *Broker) TakeMoves() []Move {
	m := b.moves
	b.moves = nil
	return m
}

func (b *Broker) enqueue(who string, q *queue, m *bmsg) {
	q.msgs = append(q.msgs, m)
	id := headerString(m.p.Headers, HeaderMessage)
	b.moves = append(b.moves, Move{Who: who, Queue: q.name, Message: id,
		Outcome: headerString(m.p.Headers, queues.HeaderOutcome)})
	if who == "handler" || who == "drain" {
		b.copies[id]++
	}
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
// prefetch, its deliveries) or a channel the unknown drain gets from. It
// numbers its deliveries 1, 2, 3, ... (delivery tags are per channel, as
// RabbitMQ's), and holds the unsettled ones by tag.
type Channel struct {
	b        *Broker
	gen      int
	open     bool
	prefetch int
	buf      []amqp.Delivery
	tag      uint64
	unacked  map[uint64]*unacked
	// Owner is the replica whose process opened the channel (-1: none
	// named).
	Owner int
	// failed, when set, is told the channel error the broker closed the
	// channel with (the session learns its end, as amqp091's NotifyClose
	// tells a real one).
	failed func(err error)
}

// OpenChannel opens a channel with prefetch (0: a channel for Get); one
// with a prefetch consumes the main queue, registered behind the
// consumers already there.
func (b *Broker) OpenChannel(prefetch int) *Channel {
	b.gen++
	c := &Channel{b: b, gen: b.gen, open: true, prefetch: prefetch, unacked: map[uint64]*unacked{}, Owner: -1}
	if prefetch > 0 {
		b.consumers = append(b.consumers, c)
	}
	b.open = append(b.open, c)
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

func (c *Channel) inFlight() int { return len(c.unacked) }

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
	c.tag++
	c.unacked[c.tag] = &unacked{m: m, queue: q, ch: c, copies: c.b.copies[headerString(m.p.Headers, HeaderMessage)]}
	h := make(amqp.Table, len(m.p.Headers)+1)
	for k, v := range m.p.Headers {
		h[k] = v
	}
	if m.returns > 0 && q.limit > 0 {
		h["x-delivery-count"] = int64(m.returns)
	}
	return amqp.Delivery{Acknowledger: acker{c}, Headers: h, ContentType: m.p.ContentType,
		DeliveryMode: m.p.DeliveryMode, MessageId: m.p.MessageId, Timestamp: m.p.Timestamp,
		Expiration: m.p.Expiration, DeliveryTag: c.tag, Redelivered: m.redelivered,
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
	c.b.consumers = slices.DeleteFunc(c.b.consumers, func(o *Channel) bool { return o == c })
	c.b.open = slices.DeleteFunc(c.b.open, func(o *Channel) bool { return o == c })
	// Highest tag first, each to the head: the queue keeps their order.
	tags := slices.Sorted(maps.Keys(c.unacked))
	slices.Reverse(tags)
	for _, t := range tags {
		c.settle(t, false, true)
	}
}

// settle acks (ack) or returns the delivery tag: requeue to the head, or
// dead-letter.
func (c *Channel) settle(tag uint64, ack, requeue bool) {
	b := c.b
	u := c.unacked[tag]
	delete(c.unacked, tag)
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
