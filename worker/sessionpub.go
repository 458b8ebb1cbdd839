package worker

import (
	"context"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// Repairer is a Publisher that can re-establish its path to the broker
// after a failed publish: the Handler calls Repair between two attempts of
// one copy (HandlerConfig.RepublishAttempts, docs/deployment.md, Bounded
// re-publish). Errors: the path could not be re-established (the
// connection is gone, the broker refused the declarations).
type Repairer interface {
	Repair(ctx context.Context) error
}

// SoloPublisher is a Publisher that can publish with none of its other
// publishes at the broker, so that a channel the broker closes is that
// publish's own (ConfirmPublisher.PublishAlone). The Handler uses it for
// the next attempts of a copy after one failed with ErrCloseNotAttributed.
type SoloPublisher interface {
	PublishAlone(ctx context.Context, queue string, p amqp.Publishing) error
}

// sessionPublisher is the Publisher of one broker session: a confirm
// channel on the session's connection that Repair replaces when the broker
// closed it (a 406 for a copy over max_message_size closes only that
// channel), after declaring the topology again on a channel of its own (a
// queue deleted while the worker runs is created again). The consume
// channel, and so the session's generation, is not touched: the deliveries
// in flight stay ackable.
type sessionPublisher struct {
	conn *amqp.Connection
	topo queues.Topology

	mu  sync.Mutex
	cur *ConfirmPublisher
}

var (
	_ Publisher     = (*sessionPublisher)(nil)
	_ Repairer      = (*sessionPublisher)(nil)
	_ SoloPublisher = (*sessionPublisher)(nil)
	_ SoloPublisher = (*ConfirmPublisher)(nil)
)

// newSessionPublisher opens the session's publish channel on conn.
func newSessionPublisher(conn *amqp.Connection, topo queues.Topology) (*sessionPublisher, error) {
	sp := &sessionPublisher{conn: conn, topo: topo}
	pub, err := sp.openChannel()
	if err != nil {
		return nil, err
	}
	sp.cur = pub
	return sp, nil
}

func (sp *sessionPublisher) openChannel() (*ConfirmPublisher, error) {
	ch, err := sp.conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open publish channel: %w", err)
	}
	pub, err := NewConfirmPublisher(ch)
	if err != nil {
		_ = ch.Close()
		return nil, err
	}
	return pub, nil
}

// Publish publishes on the current publish channel (ConfirmPublisher.Publish).
func (sp *sessionPublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	sp.mu.Lock()
	pub := sp.cur
	sp.mu.Unlock()
	return pub.Publish(ctx, queue, msg)
}

// PublishAlone publishes alone on the current publish channel
// (ConfirmPublisher.PublishAlone).
func (sp *sessionPublisher) PublishAlone(ctx context.Context, queue string, msg amqp.Publishing) error {
	sp.mu.Lock()
	pub := sp.cur
	sp.mu.Unlock()
	return pub.PublishAlone(ctx, queue, msg)
}

// Repair declares the topology again on a fresh channel (recreating a
// deleted queue) and replaces the publish channel when it is closed. It
// does not wait longer than ctx for the channel operations the client lets
// it bound; a declaration on a live connection is answered in milliseconds.
func (sp *sessionPublisher) Repair(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if sp.conn.IsClosed() {
		return fmt.Errorf("re-establish publish path: %w", amqp.ErrClosed)
	}
	ch, err := sp.conn.Channel()
	if err != nil {
		return fmt.Errorf("re-establish publish path: open channel: %w", err)
	}
	derr := sp.topo.Declare(ch)
	_ = ch.Close()
	if derr != nil {
		return fmt.Errorf("re-establish publish path: %w", derr)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.cur.Closed() {
		return nil
	}
	pub, err := sp.openChannel()
	if err != nil {
		return fmt.Errorf("re-establish publish path: %w", err)
	}
	sp.cur = pub
	return nil
}

// close closes the current publish channel.
func (sp *sessionPublisher) close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	_ = sp.cur.Close() // a channel of a dead connection: nothing to do
}
