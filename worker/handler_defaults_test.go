package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// TestNewHandlerZeroKnobsUseDefaults: a HandlerConfig that leaves
// MaxAttempts, RetryDelay and RetryMaxDelay at 0 gets DefaultMaxAttempts,
// DefaultRetryDelay and DefaultRetryMaxDelay (HandlerConfig's docs): a
// NOT_SENT message is retried after DefaultRetryDelay until its
// DefaultMaxAttempts-th attempt, then dead-lettered; it is not
// dead-lettered at its first attempt, nor retried at once.
func TestNewHandlerZeroKnobsUseDefaults(t *testing.T) {
	for attempt := 1; attempt <= DefaultMaxAttempts; attempt++ {
		t.Run(fmt.Sprintf("attempt %d", attempt), func(t *testing.T) {
			pub := &fakePublisher{}
			send := &fakeSender{err: sendErr(outcome.NotSent, "", errors.New("dial tcp: connection refused"))}
			h := NewHandler(HandlerConfig{
				Publisher: pub, Sender: send, Ledger: openLedger(t), Window: window.Default(),
				Clock: fixedClock{inWindow}, Names: names,
			})
			hdr := amqp.Table{}
			if attempt > 1 {
				hdr[queues.HeaderAttempt] = int32(attempt - 1)
			}
			rec, err := h.Handle(context.Background(), delivery(&fakeAcker{}, 1, body(t, "r-defaults", message.Info), hdr))
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if len(pub.pubs) != 1 {
				t.Fatalf("re-published %d messages, want 1", len(pub.pubs))
			}
			p := pub.pubs[0].p
			reason, _ := p.Headers[queues.HeaderReason].(string)
			if attempt == DefaultMaxAttempts {
				want := fmt.Sprintf("(%d of %d)", attempt, DefaultMaxAttempts)
				if rec.Queue != names.Dead || !strings.Contains(reason, want) {
					t.Errorf("queue %q reason %q; want %s and %q", rec.Queue, reason, names.Dead, want)
				}
				return
			}
			if rec.Queue != names.Retry {
				t.Fatalf("queue %q (reason %q); want %s: attempt %d of the default %d", rec.Queue, reason, names.Retry, attempt, DefaultMaxAttempts)
			}
			if got, want := p.Expiration, queues.Expiration(DefaultRetryDelay); got != want {
				t.Errorf("retry expiration %q ms, want %q (DefaultRetryDelay)", got, want)
			}
		})
	}
}
