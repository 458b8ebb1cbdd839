package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultMaxQueueMessages bounds how many messages ReadQueues holds per
// queue; a queue that still has more is an error (ErrTooManyMessages),
// never a silently partial snapshot.
const DefaultMaxQueueMessages = 1_000_000

// DefaultDialTimeout bounds the AMQP dial of ReadQueues.
const DefaultDialTimeout = 10 * time.Second

var (
	// ErrQueueInUse: a queue has a consumer (the worker still runs). It
	// would take the messages ReadQueues puts back; stop it first.
	ErrQueueInUse = errors.New("queue has consumers")
	// ErrNoQueue: a queue does not exist (the worker never declared it).
	ErrNoQueue = errors.New("queue does not exist")
	// ErrTooManyMessages: a queue holds more than the limit.
	ErrTooManyMessages = errors.New("queue holds too many messages")
)

// Peeker is the part of *amqp.Channel ReadQueuesOn uses.
type Peeker interface {
	QueueDeclarePassive(name string, durable, autoDelete, exclusive, noWait bool, args amqp.Table) (amqp.Queue, error)
	Get(queue string, autoAck bool) (amqp.Delivery, bool, error)
}

var _ Peeker = (*amqp.Channel)(nil)

// ReadQueues returns the messages of every queue in names without
// consuming them. It dials amqpURL, opens ONE channel, checks that each
// queue exists and has no consumer, takes every message with basic.get
// and autoAck=false until the queue is empty, and then closes the channel:
// RabbitMQ puts every unacked message back at its place in its queue. It
// never acks. Holding the messages unacked until the end makes the
// snapshot consistent: a retry or held message's TTL does not expire
// while it is held, so nothing moves between queues mid-read.
//
// Side effects: the messages read come back with Redelivered set; one
// whose TTL ran out while held is dead-lettered when it is put back (as it
// would have been). Requires the worker stopped (ErrQueueInUse). Errors:
// ErrNoQueue, ErrQueueInUse, ErrTooManyMessages (over
// DefaultMaxQueueMessages per queue), or the broker's.
func ReadQueues(ctx context.Context, amqpURL string, names []string) (map[string][]QueuedMessage, error) {
	conn, err := amqp.DialConfig(amqpURL, amqp.Config{Dial: amqp.DefaultDial(DefaultDialTimeout)})
	if err != nil {
		return nil, fmt.Errorf("read queues: dial: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("read queues: open channel: %w", err)
	}
	out, rerr := ReadQueuesOn(ctx, ch, names, DefaultMaxQueueMessages)
	// Closing the channel requeues every message read, acked by nobody.
	if cerr := ch.Close(); cerr != nil && rerr == nil && !errors.Is(cerr, amqp.ErrClosed) {
		return nil, fmt.Errorf("read queues: close channel (requeue): %w", cerr)
	}
	return out, rerr
}

// ReadQueuesOn reads names on p as ReadQueues does, holding at most limit
// messages per queue; the caller closes the channel afterwards to requeue
// them. It returns a non-nil map with an entry for every queue.
func ReadQueuesOn(ctx context.Context, p Peeker, names []string, limit int) (map[string][]QueuedMessage, error) {
	out := make(map[string][]QueuedMessage, len(names))
	ready := make(map[string]int, len(names))
	for _, name := range names {
		q, err := p.QueueDeclarePassive(name, true, false, false, false, nil)
		if err != nil {
			var aerr *amqp.Error
			if errors.As(err, &aerr) && aerr.Code == amqp.NotFound {
				return nil, fmt.Errorf("read queue %s: %w: %w", name, ErrNoQueue, err)
			}
			return nil, fmt.Errorf("read queue %s: %w", name, err)
		}
		if q.Consumers > 0 {
			return nil, fmt.Errorf("read queue %s: %w: %d (stop the worker first)", name, ErrQueueInUse, q.Consumers)
		}
		ready[name] = q.Messages
	}
	for _, name := range names {
		msgs := []QueuedMessage{}
		// An empty queue is not read: RabbitMQ refuses basic.get on a
		// quorum queue with single active consumer.
		for ready[name] > 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("read queue %s: %w", name, err)
			}
			if len(msgs) == limit {
				return nil, fmt.Errorf("read queue %s: %w: more than %d", name, ErrTooManyMessages, limit)
			}
			d, ok, err := p.Get(name, false)
			if err != nil {
				return nil, fmt.Errorf("read queue %s: get: %w", name, err)
			}
			if !ok {
				break
			}
			msgs = append(msgs, queuedFrom(name, d))
		}
		out[name] = msgs
	}
	return out, nil
}

// queuedFrom keeps what Reconcile needs of a delivery, and not the body.
func queuedFrom(queue string, d amqp.Delivery) QueuedMessage {
	h := make(map[string]any, len(d.Headers))
	for k, v := range d.Headers {
		h[k] = v
	}
	return QueuedMessage{
		Queue:       queue,
		RefKey:      bodyRefKey(d.Body, DefaultRefKeyField),
		MessageID:   d.MessageId,
		Headers:     h,
		Redelivered: d.Redelivered,
	}
}

// redactURL hides the password of a URL for logs.
func redactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
