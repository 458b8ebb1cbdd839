package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// Reset says what NewPublisher does to a topology's queues before the run.
type Reset int

const (
	// Purge declares the queues and empties them (the bench: same queues,
	// run after run).
	Purge Reset = iota
	// Delete deletes the queues first (a missing one is fine) and declares
	// them anew: a scenario of the same name may have left messages, or
	// queues of other arguments, on this broker.
	Delete
	// DeleteOnly deletes the queues and leaves declaring them to the
	// workers, which declare them with their own arguments (single active
	// consumer, queue type): a declaration with other arguments would fail
	// (PRECONDITION_FAILED). Publish only once a worker consumes
	// (WaitConsumers).
	DeleteOnly
)

// Errors of a Publisher.
var (
	// ErrNacked is wrapped when the broker refuses a publish.
	ErrNacked = errors.New("broker nacked the publish")
	// ErrUnconfirmed is wrapped by Reconnect when publishes of the old
	// channel were never confirmed (they may or may not be queued).
	ErrUnconfirmed = errors.New("publishes left unconfirmed")
)

// Publisher publishes a run's messages to a topology's main queue,
// persistent and with publisher confirms, and keeps the published list (in
// publish order) for the reconciler. Not safe for concurrent use.
type Publisher struct {
	conn      *amqp.Connection
	ch        *amqp.Channel
	topo      queues.Topology
	published []reconcile.Published
	pending   []*amqp.DeferredConfirmation
}

// NewPublisher opens a channel on conn, resets topo's queues (see Reset),
// declares them and enables confirms. Errors: the broker's, wrapped with
// the step that failed.
func NewPublisher(conn *amqp.Connection, topo queues.Topology, reset Reset) (*Publisher, error) {
	if reset == Delete || reset == DeleteOnly {
		ch, err := conn.Channel()
		if err != nil {
			return nil, fmt.Errorf("open channel: %w", err)
		}
		for _, q := range topo.Names.All() {
			_, _ = ch.QueueDelete(q, false, false, false) // a missing queue closes nothing worth keeping
		}
		_ = ch.Close()
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	p := &Publisher{conn: conn, ch: ch, topo: topo}
	if reset != DeleteOnly {
		if err := topo.Declare(ch); err != nil {
			_ = ch.Close()
			return nil, fmt.Errorf("declare topology: %w", err)
		}
	}
	if reset == Purge {
		for _, q := range topo.Names.All() {
			if _, err := ch.QueuePurge(q, false); err != nil {
				_ = ch.Close()
				return nil, fmt.Errorf("purge %s: %w", q, err)
			}
		}
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("enable confirms: %w", err)
	}
	return p, nil
}

// Reconnect opens the publisher's channel anew on conn (after a broker
// restart closed the old one), with confirms, keeping the published list.
// Publishes not confirmed on the old channel are reported, not retried.
// Errors: ErrUnconfirmed when publishes were pending, the broker's.
func (p *Publisher) Reconnect(conn *amqp.Connection) error {
	_ = p.ch.Close() // already closed by the restart, most likely
	pending := len(p.pending)
	p.pending = p.pending[:0]
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("reopen channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return fmt.Errorf("enable confirms: %w", err)
	}
	p.conn, p.ch = conn, ch
	if pending > 0 {
		return fmt.Errorf("reopen channel: %w: %d publish(es)", ErrUnconfirmed, pending)
	}
	return nil
}

// Close closes the publisher's channel.
func (p *Publisher) Close() error { return p.ch.Close() }

// Publish sends body to the main queue with message-id id and records rec
// (Seq, MessageID and PublishedAt are set here) in the published list. It
// does not wait for the broker: Confirm does. Errors: the channel's.
func (p *Publisher) Publish(ctx context.Context, id string, body []byte, rec reconcile.Published) error {
	now := time.Now()
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, "", p.topo.Names.Main, false, false, queues.Persistent(amqp.Publishing{
		ContentType: "application/json", MessageId: id, Timestamp: now, Body: body,
	}))
	if err != nil {
		return fmt.Errorf("publish message: %w", err)
	}
	p.pending = append(p.pending, dc)
	rec.Seq, rec.MessageID, rec.PublishedAt = len(p.published)+1, id, now
	p.published = append(p.published, rec)
	return nil
}

// Confirm waits until the broker confirmed every publish so far. Errors:
// ErrNacked naming the delivery tag, or ctx's.
func (p *Publisher) Confirm(ctx context.Context) error {
	for _, dc := range p.pending {
		ok, err := dc.WaitContext(ctx)
		if err != nil {
			return fmt.Errorf("wait confirm: %w", err)
		}
		if !ok {
			return fmt.Errorf("publish message: %w (delivery tag %d)", ErrNacked, dc.DeliveryTag)
		}
	}
	p.pending = p.pending[:0]
	return nil
}

// PublishConfirmed is Publish then Confirm: one message at a time, as the
// fault scenarios pace them.
func (p *Publisher) PublishConfirmed(ctx context.Context, id string, body []byte, rec reconcile.Published) error {
	if err := p.Publish(ctx, id, body, rec); err != nil {
		return err
	}
	return p.Confirm(ctx)
}

// Published returns the published list so far, in publish order.
func (p *Publisher) Published() []reconcile.Published { return p.published }

// MainDepth returns how many messages the main queue holds (ready ones).
func (p *Publisher) MainDepth() (int, error) {
	q, err := p.ch.QueueDeclarePassive(p.topo.Names.Main, true, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("inspect %s: %w", p.topo.Names.Main, err)
	}
	return q.Messages, nil
}

// WaitConsumer waits until the main queue has a consumer (the worker is
// up), polling every 100 ms. Errors: after timeout, one naming the queue
// with the text logs returns (the worker's log tail); or ctx's.
func (p *Publisher) WaitConsumer(ctx context.Context, timeout time.Duration, logs func() string) error {
	_, err := p.WaitConsumers(ctx, 1, timeout, logs)
	return err
}

// WaitConsumers waits until the main queue has at least n consumers,
// polling every 100 ms, and returns the last count seen. The queue may not
// exist yet (DeleteOnly: the workers declare it); a passive declare of a
// missing queue closes the channel, so each poll uses a channel of its
// own. Errors: after timeout, one naming the queue, the count and the text
// logs returns; or ctx's.
func (p *Publisher) WaitConsumers(ctx context.Context, n int, timeout time.Duration, logs func() string) (int, error) {
	deadline := time.Now().Add(timeout)
	got := 0
	for {
		if q, err := p.inspectMain(); err == nil {
			got = q.Consumers
			if got >= n {
				return got, nil
			}
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("%d of %d consumer(s) on %s after %s; logs:\n%s", got, n, p.topo.Names.Main, timeout, logs())
		}
		if err := Sleep(ctx, 100*time.Millisecond); err != nil {
			return got, err
		}
	}
}

// inspectMain declares the main queue passively on a channel of its own
// (a missing queue closes that channel, not the publisher's).
func (p *Publisher) inspectMain() (amqp.Queue, error) {
	ch, err := p.conn.Channel()
	if err != nil {
		return amqp.Queue{}, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(p.topo.Names.Main, true, false, false, false, nil)
	if err != nil {
		return amqp.Queue{}, fmt.Errorf("inspect %s: %w", p.topo.Names.Main, err)
	}
	return q, nil
}

// WritePublished writes ps to path, one reconcile.WritePublished line each
// (the published file). Errors: the file's, wrapped.
func WritePublished(path string, ps []reconcile.Published) error {
	var buf bytes.Buffer
	for _, p := range ps {
		if err := reconcile.WritePublished(&buf, p); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write published: %w", err)
	}
	return nil
}
