package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Errors of the confirm-backed publisher.
var (
	// ErrPublishNacked: the broker nacked the publish, or the channel
	// closed before it confirmed it.
	ErrPublishNacked = errors.New("publish not confirmed")
	// ErrUnroutable: the broker returned the mandatory publish (no such
	// queue).
	ErrUnroutable = errors.New("publish returned unroutable")
)

// ConfirmPublisher publishes on a channel in confirm mode with the
// mandatory flag, one message at a time, and returns only once the broker
// confirmed it. Safe for concurrent use: concurrent Publish calls take
// turns (a mutex), so a mandatory return is always matched to its own
// publish.
type ConfirmPublisher struct {
	mu      sync.Mutex
	ch      *amqp.Channel
	returns chan amqp.Return
}

var _ Publisher = (*ConfirmPublisher)(nil)

// NewConfirmPublisher puts ch in confirm mode and listens for returns.
// Errors: the channel refused confirm mode.
func NewConfirmPublisher(ch *amqp.Channel) (*ConfirmPublisher, error) {
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("enable publisher confirms: %w", err)
	}
	// Buffered: the library sends returns from its reader goroutine, and
	// the worker has at most one publish outstanding.
	returns := ch.NotifyReturn(make(chan amqp.Return, 16))
	return &ConfirmPublisher{ch: ch, returns: returns}, nil
}

// Publish publishes p to queue through the default exchange and waits for
// the broker's confirm until ctx is done. It returns nil only for a confirmed
// and routed publish; otherwise an error wrapping ErrPublishNacked,
// ErrUnroutable, ctx's error or the channel's error.
func (p *ConfirmPublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainReturns()
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, msg)
	if err != nil {
		return fmt.Errorf("publish to %s: %w", queue, err)
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		return fmt.Errorf("wait confirm from %s: %w", queue, err)
	}
	if !ok {
		return fmt.Errorf("publish to %s: %w", queue, ErrPublishNacked)
	}
	// A return for a mandatory publish arrives before its ack, on the same
	// reader goroutine, so it is already buffered here.
	select {
	case r, open := <-p.returns:
		if open {
			return fmt.Errorf("publish to %s: %w: %d %s", queue, ErrUnroutable, r.ReplyCode, r.ReplyText)
		}
	default:
	}
	return nil
}

func (p *ConfirmPublisher) drainReturns() {
	for {
		select {
		case _, open := <-p.returns:
			if !open {
				return
			}
		default:
			return
		}
	}
}
