package worker

import (
	"context"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// UnknownGetter reads one message of a queue with manual ack, as
// amqp.Channel.Get does: all the unknown drain needs of the broker.
type UnknownGetter interface {
	Get(queue string, autoAck bool) (amqp.Delivery, bool, error)
}

var _ UnknownGetter = (*amqp.Channel)(nil)

// DrainStats counts what one pass of DrainUnknown did.
type DrainStats struct {
	Acked  int // SENT: acked away
	Failed int // REJECTED: moved to the failed queue
	Resent int // NOT_SENT: moved to the main queue, to be sent
	Kept   int // still UNKNOWN or ATTEMPTING (or undecodable, or no entry): put back at the tail
}

// DrainUnknown is one pass of the unknown drain that follows each report
// sweep: it looks at up to limit messages of names.Unknown (the count the
// queue held when the pass began) and moves each by its refkey's ledger
// state (SENT: acked away; REJECTED: to names.Failed; NOT_SENT: to
// names.Main; anything else: back to the tail), every copy confirmed by
// pub before the original is acked through its delivery (up to
// DefaultRepublishAttempts publishes, pub's path repaired in between when
// it is a Repairer, as the worker's is: a deleted queue declared again). It is the code
// the worker runs on its own broker connection, exported for the
// deterministic simulator (worker/sim), which gives it a modelled broker.
// Errors: a get, a ledger read or a publish failed; the message at hand is
// then nacked with requeue and the pass stops.
func DrainUnknown(ctx context.Context, q UnknownGetter, pub Publisher, store ledger.Store, names queues.Names, limit int) (DrainStats, error) {
	st, err := drainUnknown(ctx, q, pub, store, names, limit)
	return DrainStats(st), err
}
