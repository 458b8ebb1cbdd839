package sim

import (
	"context"
	"fmt"
	"slices"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
)

// The broker model's publish path, as the worker's ConfirmPublisher sees
// RabbitMQ's: every publish is mandatory on a channel in confirm mode, so
// it ends in a confirm ack (nil), a confirm nack (an error wrapping
// worker.ErrPublishNacked, nothing enqueued), a basic.return before the
// confirm when no queue takes it (an error wrapping worker.ErrUnroutable,
// nothing enqueued: a return never counts as routed), or no confirm at
// all (the publisher's deadline). A queue deleted while the worker runs
// is missing until a declaration creates it again: every session's Dial
// declares the topology, and so does the Handler's repair of its publish
// path between two attempts of one copy (worker.Repairer).

// Produce is the producer's publish of p to the main queue.
func (b *Broker) Produce(p amqp.Publishing) { _ = b.publish("producer", b.names.Main, p) }

// ArmPublishFault arms f (PublishFaults) on the next publish.
func (b *Broker) ArmPublishFault(f string) { b.fault = f }

// deletable reports whether the fault "unroutable" may delete queue
// name: an empty queue (nothing ready, nothing delivered unacked) that is
// no queue's dead-letter target, so neither the main queue nor the dead
// one. Deleting a queue that holds messages, or one a message is
// dead-lettered to (RabbitMQ drops it), loses messages: a loss the
// broker's operator made, not the worker's.
func (b *Broker) deletable(name string) bool {
	q, ok := b.queues[name]
	if !ok || q.missing || len(q.msgs) > 0 || name == b.names.Main {
		return false
	}
	for _, c := range b.open {
		for _, u := range c.unacked {
			if u.queue == q {
				return false
			}
		}
	}
	for _, o := range b.queues {
		if o.dlx == name {
			return false
		}
	}
	return true
}

// Declare declares the topology again, as a session's Dial and the
// publish path's repair do: every missing queue is created again (empty).
// It returns the queues created.
func (b *Broker) Declare() []string {
	var made []string
	for _, name := range b.order {
		if q := b.queues[name]; q.missing {
			q.missing = false
			made = append(made, name)
		}
	}
	return made
}

// Missing returns the queues deleted and not declared again.
func (b *Broker) Missing() []string {
	var out []string
	for _, name := range b.order {
		if b.queues[name].missing {
			out = append(out, name)
		}
	}
	return slices.Clip(out)
}

// Publisher is the worker's Publisher on this broker (a confirm channel,
// mandatory publishes).
type Publisher struct {
	b   *Broker
	who string
}

// Publisher returns a Publisher whose publishes are recorded as who's.
func (b *Broker) Publisher(who string) *Publisher { return &Publisher{b: b, who: who} }

// Publish enqueues p on queue and returns nil (confirmed and routed),
// unless the queue is missing (returned: an error wrapping
// worker.ErrUnroutable) or the armed publish fault says otherwise: "nack"
// enqueues nothing and fails (worker.ErrPublishNacked), "confirm-lost"
// enqueues it and fails as a confirm that never came, "unroutable"
// deletes the target queue first (only one deletable: else the fault
// stays armed for a later publish).
func (p *Publisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	b := p.b
	if err := b.crash("publish-before"); err != nil {
		return err
	}
	f := b.fault
	b.fault = ""
	switch {
	case f == "unroutable" && !b.deletable(queue):
		b.fault, f = f, "" // not this publish's
	case f == "unroutable":
		b.queues[queue].missing = true
	}
	if f != "" {
		b.Faults[f]++
	}
	if f == "nack" {
		return fmt.Errorf("publish to %s: %w: broker nacked the publish", queue, worker.ErrPublishNacked)
	}
	if err := b.publish(p.who, queue, msg); err != nil {
		return err
	}
	if err := b.crash("publish-after"); err != nil {
		return err
	}
	if f == "confirm-lost" {
		return fmt.Errorf("publish to %s: no confirm: %w", queue, context.DeadlineExceeded)
	}
	return nil
}
