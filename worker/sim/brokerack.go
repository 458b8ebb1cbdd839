package sim

import (
	"fmt"
	"slices"

	amqp "github.com/rabbitmq/amqp091-go"
)

// acker is a delivery's amqp.Acknowledger: it settles on the delivery's
// channel as RabbitMQ's channel does (rabbit_channel.erl, collect_acks,
// rabbitmq/rabbitmq-server deps/rabbit/src): a tag names one unsettled
// delivery of that channel; with multiple set, every unsettled delivery
// of the channel up to and including it (tag 0 with multiple: all of
// them, AMQP 0-9-1 basic.ack). A tag the channel does not hold unsettled
// (never delivered on it, or settled already: a double ack, or a multiple
// ack naming a tag a nack settled) is a channel error: 406
// PRECONDITION_FAILED "unknown delivery tag", the channel closes and its
// unsettled deliveries go back to their queues, redelivered. The call
// itself returns nil, as amqp091-go's does (v1.16.0 channel.go: Ack, Nack
// and Reject send the method and wait for no reply; the broker's
// channel.close comes after, to the session's NotifyClose). On a channel
// already closed it returns amqp.ErrClosed. Live reports whether the
// channel is open, as the consumer's generation check does for the
// Handler.
type acker struct{ c *Channel }

var _ amqp.Acknowledger = acker{}

// collect returns the tags op settles, in ascending order; none (and nil)
// after a channel error.
func (a acker) collect(op string, tag uint64, multiple bool) ([]uint64, error) {
	c := a.c
	if !c.open {
		return nil, fmt.Errorf("%s tag %d: %w", op, tag, amqp.ErrClosed)
	}
	var tags []uint64
	if _, ok := c.unacked[tag]; !ok && (tag != 0 || !multiple) {
		c.fail(op, tag)
		return nil, nil
	}
	if !multiple {
		return []uint64{tag}, nil
	}
	for t := range c.unacked {
		if tag == 0 || t <= tag {
			tags = append(tags, t)
		}
	}
	slices.Sort(tags)
	return tags, nil
}

// fail is the channel error of an unknown delivery tag: the broker
// closes the channel (its unsettled deliveries requeued) and tells the
// session; the scheduler's step facts record it (a worker that makes
// one breaks the invariant no-channel-error).
func (c *Channel) fail(op string, tag uint64) {
	reason := fmt.Sprintf("PRECONDITION_FAILED - unknown delivery tag %d", tag)
	c.b.failures = append(c.b.failures, fmt.Sprintf("%s of tag %d: 406 %s", op, tag, reason))
	c.Close()
	if c.failed != nil {
		c.failed(&amqp.Error{Code: amqp.PreconditionFailed, Reason: reason, Server: true})
	}
}

// TakeChannelErrors returns the channel errors since the last call.
func (b *Broker) TakeChannelErrors() []string {
	f := b.failures
	b.failures = nil
	return f
}

func (a acker) Ack(tag uint64, multiple bool) error {
	if err := a.c.b.crash("ack"); err != nil {
		return err
	}
	tags, err := a.collect("ack", tag, multiple)
	if multiple && len(tags) > 0 {
		a.c.b.Acks["multiple acks"]++
		a.c.b.Acks["deliveries settled by a multiple ack"] += len(tags)
	}
	for _, t := range tags {
		u := a.c.unacked[t]
		id := headerString(u.m.p.Headers, HeaderMessage)
		copied := a.c.b.copies[id] > u.copies
		a.c.settle(t, true, false)
		if a.c.b.acked != nil {
			a.c.b.acked(a.c, id, copied)
		}
	}
	return err
}

func (a acker) Nack(tag uint64, multiple, requeue bool) error {
	tags, err := a.collect("nack", tag, multiple)
	for _, t := range tags {
		a.c.settle(t, false, requeue)
	}
	return err
}

func (a acker) Reject(tag uint64, requeue bool) error {
	tags, err := a.collect("reject", tag, false)
	for _, t := range tags {
		a.c.settle(t, false, requeue)
	}
	return err
}

// Live reports whether the delivery's channel is still open.
func (a acker) Live() bool { return a.c.open }
