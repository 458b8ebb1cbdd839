package worker

import (
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// CodeRepublishFailed is the Record code of a delivery whose copy the
// broker refused for good (its target queue cannot be routed to even after
// the topology was declared again, or the copy is over the broker's size
// limit): the original was rejected without requeue, so the broker
// dead-lettered it to the dead queue (docs/deployment.md, Bounded
// re-publish).
const CodeRepublishFailed = "REPUBLISH_FAILED"

// DefaultRepublishAttempts is how many times one copy is published, with a
// repair of the session's publish path between two attempts, before the
// Handler gives up on it. All of them share one PublishTimeout.
const DefaultRepublishAttempts = 3

// route is where one outcome sends a message.
type route struct {
	outcome                      outcome.Outcome
	queue, reason, errText, code string
	expiration                   string // per-message TTL in ms (held and retry queues)
	attempt                      int
	setAttempt                   bool
	// finish records the outcome in the ledger after the re-publish was
	// confirmed (before the ack). A failure stops the worker; a refusal
	// as stale does not (finishLedger).
	finish func() error
	// finishOnRequeue also runs finish when the re-publish failed.
	finishOnRequeue bool
}

// route re-publishes d to r.queue, records the outcome in the ledger, and
// acks d. The copy is published at most RepublishAttempts times within one
// PublishTimeout, the Publisher repairing its path (Repairer) in between.
// When the copy still fails:
//
//   - for good (permanentPublishError) while d's session is live: the
//     outcome is recorded in the ledger (r.finish; nothing for a message
//     never attempted) and d is rejected without requeue, so the broker
//     dead-letters the original to the dead queue (Record.Code
//     CodeRepublishFailed, Record.Queue the dead queue);
//   - otherwise (a timeout, a lost session): d is nacked with requeue
//     (rec.Requeued), as the broker would do anyway.
//
// The ledger outcome of UNKNOWN and REJECTED is written only once the copy
// was confirmed or given up on: if d is requeued the ledger keeps
// Attempting and the redelivery goes to the unknown queue, never nowhere.
// It returns an error wrapping ErrLedger only when the ledger write failed;
// a Finish refused as stale is none (finishLedger): the copy stays where
// the attempt's outcome sent it (staleFinish says why).
func (h *Handler) route(ctx context.Context, d amqp.Delivery, rec *records.Record, r route) error {
	rec.Outcome = r.outcome
	rec.Queue = r.queue
	p := republish(d, r)
	err := h.publish(ctx, r.queue, p)
	if err != nil {
		rec.PublishError = Redact(err.Error(), "")
		if permanentPublishError(err) && deliveryLive(d) {
			return h.giveUp(d, rec, r)
		}
		rec.Requeued = true
		h.c.Logger.Warn("re-publish failed; original requeued",
			"refkey", rec.RefKey, "outcome", r.outcome, "queue", r.queue, "error", rec.PublishError)
		var ferr error
		if r.finish != nil && r.finishOnRequeue {
			if err := r.finish(); err != nil {
				ferr = fmt.Errorf("finish ledger entry %q: %w", rec.RefKey, errors.Join(ErrLedger, err))
			}
		}
		if nerr := d.Nack(false, true); nerr != nil {
			rec.AckError = nerr.Error()
		}
		return ferr
	}
	var ferr error
	if r.finish != nil {
		if err := r.finish(); err != nil {
			ferr = fmt.Errorf("finish ledger entry %q: %w", rec.RefKey, errors.Join(ErrLedger, err))
		}
	}
	// The copy is confirmed: the original is acked even when the ledger
	// write failed (the worker then stops).
	h.ack(d, rec)
	return ferr
}

// publish publishes p to queue up to RepublishAttempts times, all within
// one PublishTimeout, repairing the publisher's path between two attempts
// when it can (Repairer); after an attempt failed with
// ErrCloseNotAttributed the next ones publish alone (publishOnce). It
// returns the last publish error, or the repair error (which then decides
// whether the failure is permanent).
func (h *Handler) publish(ctx context.Context, queue string, p amqp.Publishing) error {
	pctx, cancel := context.WithTimeout(ctx, h.c.PublishTimeout)
	defer cancel()
	alone := false
	for i := 1; ; i++ {
		err := publishOnce(pctx, h.c.Publisher, queue, p, alone)
		if err == nil || i >= h.c.RepublishAttempts || pctx.Err() != nil {
			return err
		}
		alone = alone || errors.Is(err, ErrCloseNotAttributed)
		h.c.Logger.Warn("re-publish failed; re-establishing the publish path",
			"queue", queue, "attempt", i, "error", Redact(err.Error(), ""))
		if rp, ok := h.c.Publisher.(Repairer); ok {
			if rerr := rp.Repair(pctx); rerr != nil {
				return fmt.Errorf("after publish error %v: %w", err, rerr)
			}
		}
	}
}

// publishOnce is one attempt of a copy: alone (SoloPublisher), when pub
// can, after an attempt whose channel close was not attributed to it
// (ErrCloseNotAttributed: other copies were at the broker beside it), so
// that a close this time is its own; otherwise Publish.
func publishOnce(ctx context.Context, pub Publisher, queue string, p amqp.Publishing, alone bool) error {
	if sp, ok := pub.(SoloPublisher); ok && alone {
		return sp.PublishAlone(ctx, queue, p)
	}
	return pub.Publish(ctx, queue, p)
}

// giveUp settles d whose copy the broker refuses for good: the ledger gets
// the outcome (r.finish, when the message was attempted), then d is
// rejected without requeue and the broker dead-letters it to the dead queue
// (the main queue's x-dead-letter target). When the ledger write fails, d
// is requeued instead and the worker stops (ErrLedger).
func (h *Handler) giveUp(d amqp.Delivery, rec *records.Record, r route) error {
	reason := fmt.Sprintf("%s: copy to %s refused after %d attempts; original dead-lettered to %s by the broker",
		CodeRepublishFailed, r.queue, h.c.RepublishAttempts, h.c.Names.Dead)
	if rec.Code != "" {
		reason += " (vendor code " + rec.Code + ")"
	}
	if rec.Error != "" {
		reason += "; " + rec.Error
	}
	rec.Error, rec.Code, rec.Queue = reason, CodeRepublishFailed, h.c.Names.Dead
	if r.finish != nil {
		if err := r.finish(); err != nil {
			rec.Requeued = true
			if nerr := d.Nack(false, true); nerr != nil {
				rec.AckError = nerr.Error()
			}
			return fmt.Errorf("finish ledger entry %q: %w", rec.RefKey, errors.Join(ErrLedger, err))
		}
	}
	h.c.Logger.Error("re-publish refused for good; original dead-lettered",
		"refkey", rec.RefKey, "outcome", r.outcome, "queue", r.queue, "dead", h.c.Names.Dead, "error", rec.PublishError)
	if err := d.Nack(false, false); err != nil {
		// The session was lost meanwhile: the broker requeues it.
		rec.Requeued = true
		rec.AckError = err.Error()
	}
	return nil
}

// permanentPublishError reports whether err says the copy itself cannot be
// published as it is, so that another attempt on a repaired session would
// fail the same way: the queue is unroutable (ErrUnroutable) even after the
// topology was declared again, or the broker closed the channel over it
// (406 PRECONDITION_FAILED: a body over max_message_size; 311
// CONTENT_TOO_LARGE; 501 FRAME_ERROR: headers over the frame size). A
// timeout, a nack alone or a closed connection is not permanent.
func permanentPublishError(err error) bool {
	if errors.Is(err, ErrUnroutable) {
		return true
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case amqp.PreconditionFailed, amqp.ContentTooLarge, amqp.FrameError:
			return true
		}
	}
	return false
}

// deliveryLive reports whether d's channel generation is live (its
// Acknowledger says so; one that cannot tell is taken as live).
func deliveryLive(d amqp.Delivery) bool {
	l, ok := d.Acknowledger.(interface{ Live() bool })
	return !ok || l.Live()
}

func (h *Handler) ack(d amqp.Delivery, rec *records.Record) {
	if err := d.Ack(false); err != nil {
		rec.AckError = err.Error()
		h.c.Logger.Warn("ack failed; the broker will redeliver it and the ledger suppresses a second send",
			"refkey", rec.RefKey, "outcome", rec.Outcome, "error", err)
	}
}

// republish copies d's body, headers and properties into a persistent
// Publishing with the outcome headers added.
func republish(d amqp.Delivery, r route) amqp.Publishing {
	h := make(amqp.Table, len(d.Headers)+5)
	for k, v := range d.Headers {
		h[k] = v
	}
	h[queues.HeaderOutcome] = string(r.outcome) // amqp tables take plain strings only
	h[queues.HeaderReason] = r.reason
	if r.errText != "" {
		h[queues.HeaderError] = r.errText
	}
	if r.code != "" {
		h[queues.HeaderCode] = r.code
	}
	if r.setAttempt {
		h = queues.WithAttempt(h, r.attempt)
	}
	body := make([]byte, len(d.Body))
	copy(body, d.Body)
	return amqp.Publishing{
		Headers:         h,
		ContentType:     d.ContentType,
		ContentEncoding: d.ContentEncoding,
		DeliveryMode:    amqp.Persistent,
		Priority:        d.Priority,
		CorrelationId:   d.CorrelationId,
		ReplyTo:         d.ReplyTo,
		Expiration:      r.expiration,
		MessageId:       d.MessageId,
		Timestamp:       d.Timestamp,
		Type:            d.Type,
		AppId:           d.AppId,
		Body:            body,
	}
}
