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
	closes  chan *amqp.Error
	// closeErr is the broker's reason for closing ch, once seen.
	closeErr *amqp.Error
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
	// Buffered: the library sends the close reason before it fails the
	// outstanding confirms, so it is here when Publish looks.
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	return &ConfirmPublisher{ch: ch, returns: returns, closes: closes}, nil
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
	if p.closeErr == nil {
		select {
		case e := <-p.closes:
			p.closeErr = e
		default:
		}
	}
	return p.closeErr
}

// Publish publishes p to queue through the default exchange and waits for
// the broker's confirm until ctx is done. It returns nil only for a confirmed
// and routed publish; otherwise an error wrapping ErrPublishNacked,
// ErrUnroutable, ctx's error or the channel's error. When the broker closed
// the channel over this publish (a 406 PRECONDITION_FAILED for a body over
// its max_message_size), the error wraps ErrPublishNacked and the broker's
// *amqp.Error.
func (p *ConfirmPublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainReturns()
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, msg)
	if err != nil {
		if ce := p.channelError(); ce != nil {
			return fmt.Errorf("publish to %s: %w: %w", queue, err, ce)
		}
		return fmt.Errorf("publish to %s: %w", queue, err)
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		return fmt.Errorf("wait confirm from %s: %w", queue, err)
	}
	if !ok {
		if ce := p.channelError(); ce != nil {
			return fmt.Errorf("publish to %s: %w: %w", queue, ErrPublishNacked, ce)
		}
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
