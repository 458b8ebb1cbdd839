package worker

import (
	"context"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// MaxDeliveryRenewals is how many times the Handler renews one message's
// quorum-queue delivery budget (renew). A message the broker returned
// because of the worker's own session losses (a crash, a ledger outage, a
// lost channel) starts again with the whole budget instead of being
// dead-lettered unsent; a poison message (one that crashes the worker
// every time) still reaches the dead-letter queue, after at most
// (MaxDeliveryRenewals + 1) x (the delivery limit + 1) deliveries.
const MaxDeliveryRenewals = 3

// renew renews d's delivery budget when d comes from a quorum queue
// (HandlerConfig.DeliveryLimit > 0) that has returned it before
// (queues.DeliveryCount >= 1): it publishes a copy of d to the main
// queue's tail (the same body and headers, queues.HeaderRenewals one
// higher, without the broker's count) and acks d once the broker
// confirmed the copy. The copy is handled like any redelivery, so the
// ledger decides it and a renewal never leads to a second send; a crash
// between the copy and the ack leaves two copies the ledger decides alike.
//
// Why at the first return and not near the limit: RabbitMQ 3.10 counts
// every return, the prefetched deliveries a lost session hands back
// included, so a message can near its limit without the Handler ever
// seeing it there; renewing whenever it does see a returned one moves the
// head of the queue on and gives each a new budget. Found by the
// deterministic simulator (seed 5403: four stops for a broken ledger, two
// crashes and a lost channel within seconds returned a never-sent message
// six times; a delivery limit of 5 dead-lettered it unsent).
//
// It reports whether it renewed d (rec is then a requeue: no record is
// written; the copy's own handling writes one). A message renewed
// MaxDeliveryRenewals times, a classic queue, or a copy the broker
// refused: false, and d is handled as usual. A failed ack after the copy
// is recorded in rec.AckError (d comes back and meets the ledger).
func (h *Handler) renew(ctx context.Context, d amqp.Delivery, rec *records.Record) bool {
	count := queues.DeliveryCount(d.Headers)
	if h.c.DeliveryLimit <= 0 || count < 1 {
		return false
	}
	n := queues.Renewals(d.Headers)
	if n >= MaxDeliveryRenewals {
		return false
	}
	p := copyOf(d)
	delete(p.Headers, queues.HeaderDeliveryCount)
	p.Headers[queues.HeaderRenewals] = int32(n + 1)
	if err := h.publish(ctx, h.c.Names.Main, p); err != nil {
		h.c.Logger.Warn("delivery budget not renewed: the broker refused its copy; handled as it is",
			"refkey", refKeyOf(d.Body), "delivery_count", count, "error", Redact(err.Error(), ""))
		return false
	}
	if err := d.Ack(false); err != nil {
		rec.AckError = err.Error()
	}
	rec.Requeued = true
	rec.RefKey = refKeyOf(d.Body)
	rec.Error = fmt.Sprintf("delivery budget renewed (%d of %d): returned %d times (delivery limit %d); its copy waits at the tail of %s",
		n+1, MaxDeliveryRenewals, count, h.c.DeliveryLimit, h.c.Names.Main)
	return true
}
