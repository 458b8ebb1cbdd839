package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// ErrLedgerDeadline is wrapped (with context.DeadlineExceeded) by a ledger
// Begin or Finish that did not answer within HandlerConfig.LedgerTimeout.
var ErrLedgerDeadline = errors.New("ledger did not answer in time")

// beginLedger is Ledger.Begin bounded by LedgerTimeout. The ledger gets a
// ctx with that deadline; a store that ignores its ctx is abandoned at the
// deadline all the same. A Begin given up on decided nothing for the
// worker: it does not send. The bbolt file then writes nothing once it
// gets its writer lock; a commit already under way at the deadline (bbolt)
// or a statement that reached PostgreSQL may still land its Attempting
// row, so a redelivery can become UNKNOWN: never a second send
// (docs/deployment.md, Deadlines).
func (h *Handler) beginLedger(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	type result struct {
		d   ledger.Decision
		e   ledger.Entry
		err error
	}
	var r result
	err := h.withLedgerDeadline(ctx, "begin", func(lctx context.Context) error {
		r.d, r.e, r.err = h.c.Ledger.Begin(lctx, refkey, bodyHash, now)
		return r.err
	})
	if err != nil {
		return 0, ledger.Entry{}, err
	}
	return r.d, r.e, nil
}

// finishLedger is Ledger.Finish bounded by LedgerTimeout (as beginLedger).
// attempt is the Begin's Entry.Attempts this Finish closes (ledger.Store).
func (h *Handler) finishLedger(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string) error {
	return h.withLedgerDeadline(ctx, "finish", func(lctx context.Context) error {
		return h.c.Ledger.Finish(lctx, refkey, bodyHash, attempt, state, detail, h.c.Clock.Now())
	})
}

// withLedgerDeadline runs call with a ctx bounded by LedgerTimeout and
// returns its error, or an error wrapping ErrLedgerDeadline and
// context.DeadlineExceeded at the deadline (call then goes on alone; its
// result is dropped).
func (h *Handler) withLedgerDeadline(ctx context.Context, op string, call func(context.Context) error) error {
	lctx, cancel := context.WithTimeout(ctx, h.c.LedgerTimeout)
	defer cancel()
	done := make(chan error, 1)
	h.calls.run(func() { done <- call(lctx) })
	select {
	case err := <-done:
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("ledger %s: %w within %s: %w", op, ErrLedgerDeadline, h.c.LedgerTimeout, err)
		}
		return err
	case <-lctx.Done():
		select {
		case err := <-done: // answered at the same instant
			if err == nil {
				return nil
			}
		default:
		}
		return fmt.Errorf("ledger %s: %w within %s: %w", op, ErrLedgerDeadline, h.c.LedgerTimeout, lctx.Err())
	}
}

// gate is the last look before the request, after Begin: it refuses the
// send (refused=true, d settled) when
//
//   - d's broker session is lost (its generation retired): the attempt is
//     closed NOT_SENT and d is left to the broker, which requeues it;
//   - n is an ad and the window closed meanwhile (a slow Begin across
//     20:50): the attempt is closed NOT_SENT and d goes to the held queue
//     as OUTSIDE_SEND_WINDOW;
//   - more than SendFence passed, by Clock, since began (the reading before
//     Begin): the worker was frozen or the ledger slow; the attempt is
//     closed NOT_SENT and d goes to the retry queue like any NOT_SENT.
//
// Nothing was sent in each case, so NOT_SENT is the honest outcome
// (docs/deployment.md, Fencing). err wraps ErrLedger when the ledger could
// not record it.
func (h *Handler) gate(ctx context.Context, d amqp.Delivery, n message.Notification, rec *records.Record, began time.Time, entry ledger.Entry,
	finish func(outcome.Outcome, string) func() error) (refused bool, err error) {
	if !deliveryLive(d) {
		reason := "not sent: the delivery's broker session was lost before the request"
		rec.Outcome, rec.Error, rec.Requeued = outcome.NotSent, reason, true
		if ferr := finish(outcome.NotSent, reason)(); ferr != nil {
			err = fmt.Errorf("finish ledger entry %q: %w", n.RefKey, errors.Join(ErrLedger, ferr))
		}
		if nerr := d.Nack(false, true); nerr != nil {
			rec.AckError = nerr.Error() // expected: the broker requeued it already
		}
		return true, err
	}
	now := h.c.Clock.Now()
	if n.Category == message.Ad && !h.c.Window.Allowed(now) {
		next := h.c.Window.NextOpen(now)
		rec.Clock, rec.HeldUntil = now, next // the reading that held it
		reason := "not sent: the send window closed before the request; opens at " + next.Format(time.RFC3339)
		rec.Error = reason
		return true, h.route(ctx, d, rec, route{
			outcome: outcome.OutsideSendWindow, queue: h.c.Names.Held, reason: reason,
			expiration: queues.Expiration(next.Sub(now)),
			finish:     finish(outcome.NotSent, reason), finishOnRequeue: true,
		})
	}
	if age := now.Sub(began); age > h.c.SendFence {
		reason := fmt.Sprintf("not sent: the request would start %s after its Begin, past the send fence %s", age, h.c.SendFence)
		rec.Error = reason
		attempts := max(rec.Attempt+1, entry.Attempts)
		rec.Attempt = attempts
		return true, h.routeNotSent(ctx, d, rec, attempts, reason, 0, finish(outcome.NotSent, reason))
	}
	return false, nil
}
