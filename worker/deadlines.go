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
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
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
// A Finish the ledger refuses as stale (*ledger.StaleAttemptError: a
// delivery report or an operator settled the entry while this attempt was
// under way) is the ledger's answer, not a failure: it is logged
// (staleFinish) and nil is returned, so the delivery is routed and acked
// as usual and the session goes on.
func (h *Handler) finishLedger(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string) error {
	err := h.withLedgerDeadline(ctx, "finish", func(lctx context.Context) error {
		return h.c.Ledger.Finish(lctx, refkey, bodyHash, attempt, state, detail, h.c.Clock.Now())
	})
	if se, ok := errors.AsType[*ledger.StaleAttemptError](err); ok {
		h.staleFinish(se)
		return nil
	}
	return err
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

// gate is the handler's last look before Send, after Begin: it refuses
// the send (refused=true, d settled) when
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
// not record it. The window is read once more inside Send, right before
// each message POST (postCheck), since the token call comes in between.
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
		return true, h.holdClosed(ctx, d, rec, now, "not sent: the send window closed before the request", finish)
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

// windowClosedError is the error of postCheck's refusal of an ad: the send window
// was closed at the reading at, right before a message POST.
type windowClosedError struct{ at time.Time }

func (e windowClosedError) Error() string {
	return "the send window closed at " + e.at.Format(time.RFC3339)
}

// postFenceError is the error of postCheck's refusal by the fence: the
// POST would start age after the clock reading before Begin, past limit.
type postFenceError struct{ age, limit time.Duration }

func (e postFenceError) Error() string {
	return fmt.Sprintf("the request would start %s after its Begin, past the POST fence %s (the worker was frozen inside the vendor call)", e.age, e.limit)
}

// postCheck returns ctx carrying the check the vendor client runs right
// before each message POST (vendorapi.WithBeforePost). The token call (up
// to a response timeout) and, after a 401, the token refetch come between
// gate and the POST, so gate's look is repeated there:
//   - every message: more than PostFence since began (the reading before
//     Begin) refuses the POST (postFenceError; Send's NOT_SENT is routed to
//     the retry queue like any NOT_SENT). A worker frozen inside the vendor
//     call past it may find its attempt settled by a report or the horizon
//     (an ATTEMPTING entry is settled once older than the worst-case send
//     time, which exceeds PostFence), and a copy sent;
//   - an ad: a closed send window refuses it (windowClosedError; held).
func (h *Handler) postCheck(ctx context.Context, n message.Notification, began time.Time) context.Context {
	ad := n.Category == message.Ad
	return vendorapi.WithBeforePost(ctx, func() error {
		now := h.c.Clock.Now()
		if age := now.Sub(began); age > h.c.PostFence {
			return postFenceError{age: age, limit: h.c.PostFence}
		}
		if ad && !h.c.Window.Allowed(now) {
			return windowClosedError{at: now}
		}
		return nil
	})
}

// heldInSend reports whether serr is Send's refusal of a POST by
// postCheck's window check, and the clock reading that refused it.
func heldInSend(serr error) (at time.Time, held bool) {
	if !errors.Is(serr, vendorapi.ErrRefusedBeforePost) || vendorapi.ClassOf(serr) != outcome.NotSent {
		return time.Time{}, false
	}
	wc, ok := errors.AsType[windowClosedError](serr)
	return wc.at, ok
}

// holdClosed routes d, an ad refused by the window at the reading now
// after its Begin, to the held queue as OUTSIDE_SEND_WINDOW until the
// window's next opening, and closes its attempt NOT_SENT (also when the
// copy fails and d is requeued), so the held copy is sent once the window
// opens. why starts the reason. It returns an error wrapping ErrLedger
// only when the ledger write failed.
func (h *Handler) holdClosed(ctx context.Context, d amqp.Delivery, rec *records.Record, now time.Time, why string,
	finish func(outcome.Outcome, string) func() error) error {
	next := h.c.Window.NextOpen(now)
	rec.Clock, rec.HeldUntil = now, next // the reading that held it
	reason := why + "; opens at " + next.Format(time.RFC3339)
	rec.Error = reason
	return h.route(ctx, d, rec, route{
		outcome: outcome.OutsideSendWindow, queue: h.c.Names.Held, reason: reason,
		expiration: queues.Expiration(next.Sub(now)),
		finish:     finish(outcome.NotSent, reason), finishOnRequeue: true,
	})
}
