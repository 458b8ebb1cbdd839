package queues

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Queue argument keys RabbitMQ reads (https://www.rabbitmq.com/docs/ttl,
// https://www.rabbitmq.com/docs/dlx, https://www.rabbitmq.com/docs/consumers
// "Single Active Consumer", https://www.rabbitmq.com/docs/quorum-queues).
const (
	ArgQueueType            = "x-queue-type"
	ArgMessageTTL           = "x-message-ttl"
	ArgDeadLetterExchange   = "x-dead-letter-exchange"
	ArgDeadLetterRoutingKey = "x-dead-letter-routing-key"
	ArgSingleActiveConsumer = "x-single-active-consumer"
	ArgDeliveryLimit        = "x-delivery-limit"
	// ArgDeadLetterStrategy is a quorum queue's dead-letter strategy:
	// "at-most-once" (RabbitMQ's default) or DeadLetterAtLeastOnce
	// (RabbitMQ 3.10+, https://www.rabbitmq.com/docs/quorum-queues#dead-lettering).
	ArgDeadLetterStrategy = "x-dead-letter-strategy"
	// ArgOverflow is a queue's length-limit behaviour; at-least-once
	// dead-lettering needs OverflowRejectPublish (with RabbitMQ's default
	// drop-head it falls back to at-most-once), also when no length limit
	// is set.
	ArgOverflow = "x-overflow"
)

// Values of ArgDeadLetterStrategy and ArgOverflow the quorum topology
// declares.
const (
	DeadLetterAtLeastOnce = "at-least-once"
	OverflowRejectPublish = "reject-publish"
)

// QueueType is the type every queue of a Topology is declared with.
type QueueType string

// The queue types a Topology can use.
//
// Classic is the default: the lab (and the case) runs ONE RabbitMQ node,
// where a quorum queue's Raft log buys no replica to fail over to, while
// durable classic queues with persistent messages already survive a broker
// restart. Quorum is for a cluster of three or more nodes, and for its
// delivery limit: a message whose delivery keeps crashing the worker (a
// poison message) is dead-lettered after DeliveryLimit deliveries instead
// of being redelivered for ever. RabbitMQ 3.10 (Debian's package, the lab's
// offline image) and later support on quorum queues everything this
// topology relies on: x-message-ttl, per-message expiration, dead-lettering
// and single active consumer (docs/deployment.md; checked against the real
// broker by TestIntegrationQuorumTopology).
const (
	Classic QueueType = "classic"
	Quorum  QueueType = "quorum"
)

// QueueTypes lists the allowed queue types.
var QueueTypes = []QueueType{Classic, Quorum}

// ParseQueueType returns the queue type named s. Errors: s is not one of
// QueueTypes; the message names the allowed values.
func ParseQueueType(s string) (QueueType, error) {
	t := QueueType(s)
	if !slices.Contains(QueueTypes, t) {
		return "", fmt.Errorf("queue type %q: want classic or quorum: %w", s, ErrTopology)
	}
	return t, nil
}

// Names are the queue names for one main queue. All derive from Main.
type Names struct {
	Main, Retry, Unknown, Held, Failed, Dead string
}

// NamesFor returns the names derived from main ("notifications" ->
// "notifications.retry", ".unknown", ".held", ".failed", ".dead").
func NamesFor(main string) Names {
	return Names{
		Main:    main,
		Retry:   main + ".retry",
		Unknown: main + ".unknown",
		Held:    main + ".held",
		Failed:  main + ".failed",
		Dead:    main + ".dead",
	}
}

// All returns the six names in declaration order: Main, Retry, Unknown,
// Held, Failed, Dead.
func (n Names) All() []string {
	return []string{n.Main, n.Retry, n.Unknown, n.Held, n.Failed, n.Dead}
}

// Topology is the declared set of queues and their policies.
type Topology struct {
	Names Names
	// RetryDelay is the default wait of a NOT_SENT message in the retry
	// queue before it returns to Main. The worker sets it (or the
	// vendor's Retry-After, bounded by RetryMaxDelay) as each retried
	// message's own expiration; it is not a queue argument.
	RetryDelay time.Duration
	// RetryMaxDelay is the retry queue's x-message-ttl: the longest any
	// message waits there, whatever its own expiration (RabbitMQ applies
	// the lower of the two).
	RetryMaxDelay time.Duration
	// MaxAttempts is the number of send attempts before a NOT_SENT
	// message is dead-lettered.
	MaxAttempts int
	// Type is the queue type of all six queues; "" = Classic.
	Type QueueType
	// SingleActiveConsumer declares Main with x-single-active-consumer:
	// whatever the number of worker replicas consuming it, RabbitMQ
	// delivers to one of them at a time and the others stand by. Off only
	// to demonstrate what goes wrong without it.
	SingleActiveConsumer bool
	// DeliveryLimit (quorum only) is Main's x-delivery-limit: after that
	// many returned deliveries (nack with requeue, or the consumer's
	// channel closed while it held the message) RabbitMQ dead-letters the
	// message to Dead, with x-death reason "delivery_limit". 0 = none.
	DeliveryLimit int
	// DeadLetterAtMostOnce (quorum only) leaves the three dead-letter hops
	// (Retry -> Main, Held -> Main, Main -> Dead) on RabbitMQ's default
	// at-most-once strategy: a message dead-lettered while the target has
	// no leader is dropped. Off (at-least-once) unless a negative control
	// needs the loss. Classic queues always dead-letter at most once
	// (docs/deployment.md).
	DeadLetterAtMostOnce bool
}

// Defaults for DefaultTopology.
const (
	DefaultMain          = "notifications"
	DefaultRetryDelay    = 5 * time.Second
	DefaultRetryMaxDelay = 5 * time.Minute
	DefaultMaxAttempts   = 5
	DefaultDeliveryLimit = 5
)

// DefaultTopology returns the topology for main: classic queues, single
// active consumer on, DefaultRetryDelay, DefaultRetryMaxDelay,
// DefaultMaxAttempts and DefaultDeliveryLimit (used by quorum queues only).
// The worker and the lab's driver both declare it, so their arguments
// match (RabbitMQ refuses a redeclare with other arguments).
func DefaultTopology(main string) Topology {
	return Topology{
		Names:                NamesFor(main),
		RetryDelay:           DefaultRetryDelay,
		RetryMaxDelay:        DefaultRetryMaxDelay,
		MaxAttempts:          DefaultMaxAttempts,
		Type:                 Classic,
		SingleActiveConsumer: true,
		DeliveryLimit:        DefaultDeliveryLimit,
	}
}

// ErrTopology is the sentinel every Validate error matches with errors.Is.
var ErrTopology = errors.New("invalid topology")

// maxTTL is the largest x-message-ttl RabbitMQ takes, in ms (2^32-1).
const maxTTL = math.MaxUint32

// Validate checks the names (non-empty, distinct, at most 255 bytes: the
// AMQP short-string limit) and the policies (RetryDelay and RetryMaxDelay
// whole numbers of ms from 1 ms to 2^32-1 ms, RetryDelay <= RetryMaxDelay
// when RetryMaxDelay is set, MaxAttempts >= 1, Type one of QueueTypes,
// DeliveryLimit >= 0). Errors match ErrTopology.
func (t Topology) Validate() error {
	seen := map[string]bool{}
	for _, n := range t.Names.All() {
		switch {
		case n == "":
			return fmt.Errorf("queue name is empty in %+v: %w", t.Names, ErrTopology)
		case len(n) > 255:
			return fmt.Errorf("queue name %.40q... is longer than 255 bytes: %w", n, ErrTopology)
		case strings.HasPrefix(n, "amq."):
			return fmt.Errorf("queue name %q uses the reserved amq. prefix: %w", n, ErrTopology)
		case seen[n]:
			return fmt.Errorf("queue name %q is used twice: %w", n, ErrTopology)
		}
		seen[n] = true
	}
	if err := validTTL("retry delay", t.RetryDelay); err != nil {
		return err
	}
	if t.RetryMaxDelay != 0 {
		if err := validTTL("retry max delay", t.RetryMaxDelay); err != nil {
			return err
		}
		if t.RetryDelay > t.RetryMaxDelay {
			return fmt.Errorf("retry delay %s above retry max delay %s: %w", t.RetryDelay, t.RetryMaxDelay, ErrTopology)
		}
	}
	if t.MaxAttempts < 1 {
		return fmt.Errorf("max attempts %d: want at least 1: %w", t.MaxAttempts, ErrTopology)
	}
	if t.Type != "" {
		if _, err := ParseQueueType(string(t.Type)); err != nil {
			return err
		}
	}
	if t.DeliveryLimit < 0 {
		return fmt.Errorf("delivery limit %d: want 0 (none) or more: %w", t.DeliveryLimit, ErrTopology)
	}
	return nil
}

func validTTL(name string, d time.Duration) error {
	ms := d.Milliseconds()
	if d%time.Millisecond != 0 || ms < 1 || ms > maxTTL {
		return fmt.Errorf("%s %s: want whole ms from 1ms to %dms: %w", name, d, int64(maxTTL), ErrTopology)
	}
	return nil
}

// QueueSpec is one queue as Declare declares it: durable, not exclusive,
// not auto-deleted (a quorum queue must be durable and not exclusive), with
// Args.
type QueueSpec struct {
	Name    string
	Args    amqp.Table
	Purpose string // one line, for logs and docs
}

// Queues returns the six queue declarations of t, in order Main, Retry,
// Unknown, Held, Failed, Dead, each with x-queue-type t.Type. It is pure
// (no broker), so tests and the lab can inspect the exact arguments
// Declare sends:
//
//	Main     dead-letter -> "" / Dead   (a reject or nack without requeue
//	         lands in Dead, never vanishes); x-single-active-consumer when
//	         SingleActiveConsumer; x-delivery-limit when quorum and
//	         DeliveryLimit > 0
//	Retry    x-message-ttl RetryMaxDelay ms (the cap), dead-letter -> "" /
//	         Main; the worker sets each message's Expiration (RetryDelay or
//	         the vendor's Retry-After)
//	Unknown  plain: kept for reconciliation, never consumed automatically
//	Held     dead-letter -> "" / Main; the worker sets each message's
//	         Expiration to the time until the send window opens
//	Failed   plain: vendor rejections (HeaderCode)
//	Dead     plain: INVALID messages, NOT_SENT after MaxAttempts, and
//	         (quorum) messages over the delivery limit
//
// With quorum queues, Main, Retry and Held (the queues that dead-letter)
// also carry x-dead-letter-strategy at-least-once and x-overflow
// reject-publish, unless DeadLetterAtMostOnce: the source queue keeps a
// dead-lettered message until the target confirmed it, so a hop into a
// queue without a leader waits instead of dropping the message (RabbitMQ
// 3.10+; https://www.rabbitmq.com/docs/quorum-queues#dead-lettering). No
// length limit is set, so reject-publish never rejects a publish here.
//
// "" is the default exchange, which routes by queue name, so no exchange
// is declared.
func (t Topology) Queues() []QueueSpec {
	n := t.Names
	qt := t.Type
	if qt == "" {
		qt = Classic
	}
	plain := func() amqp.Table { return amqp.Table{ArgQueueType: string(qt)} }
	toQueue := func(target string) amqp.Table {
		a := plain()
		a[ArgDeadLetterExchange] = ""
		a[ArgDeadLetterRoutingKey] = target
		if qt == Quorum && !t.DeadLetterAtMostOnce {
			a[ArgDeadLetterStrategy] = DeadLetterAtLeastOnce
			a[ArgOverflow] = OverflowRejectPublish
		}
		return a
	}
	retryCap := t.RetryMaxDelay
	if retryCap == 0 {
		retryCap = DefaultRetryMaxDelay
	}
	retry := toQueue(n.Main)
	retry[ArgMessageTTL] = retryCap.Milliseconds()
	main := toQueue(n.Dead)
	mainPurpose := "notifications to send; rejects dead-letter to " + n.Dead
	if t.SingleActiveConsumer {
		main[ArgSingleActiveConsumer] = true
		mainPurpose += "; one active consumer at a time"
	}
	if qt == Quorum && t.DeliveryLimit > 0 {
		main[ArgDeliveryLimit] = int64(t.DeliveryLimit)
		mainPurpose += fmt.Sprintf("; dead-lettered after %d deliveries", t.DeliveryLimit)
	}
	return []QueueSpec{
		{Name: n.Main, Args: main, Purpose: mainPurpose},
		{Name: n.Retry, Args: retry, Purpose: fmt.Sprintf("NOT_SENT, waits its own expiration (default %s, at most %s) then returns to %s", t.RetryDelay, retryCap, n.Main)},
		{Name: n.Unknown, Args: plain(), Purpose: "UNKNOWN: may have reached the vendor; reconcile, never re-send automatically"},
		{Name: n.Held, Args: toQueue(n.Main), Purpose: "OUTSIDE_SEND_WINDOW: per-message TTL until the window opens, then returns to " + n.Main},
		{Name: n.Failed, Args: plain(), Purpose: "REJECTED by the vendor, with its code"},
		{Name: n.Dead, Args: plain(), Purpose: "INVALID, NOT_SENT after the last attempt, or over the delivery limit, with the reason"},
	}
}

// Declarer is the part of *amqp.Channel that DeclareOn uses, so the
// declaration order and arguments can be tested without a broker.
type Declarer interface {
	QueueDeclare(name string, durable, autoDelete, exclusive, noWait bool, args amqp.Table) (amqp.Queue, error)
}

var _ Declarer = (*amqp.Channel)(nil)

// Declare declares every queue idempotently on ch. Only the default
// exchange is used, so no exchange is declared. Declaring the same Topology
// again is a no-op; declaring one whose arguments differ from the queues
// already on the broker fails with the broker's PRECONDITION_FAILED (406),
// which also closes ch. Errors: ErrTopology from Validate; a
// *MismatchError (matching ErrQueueMismatch) for a 406; or the broker's
// error wrapped with the queue name.
func (t Topology) Declare(ch *amqp.Channel) error { return t.DeclareOn(ch) }

// DeclareOn is Declare on any Declarer.
func (t Topology) DeclareOn(d Declarer) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("declare topology: %w", err)
	}
	for _, q := range t.Queues() {
		if _, err := d.QueueDeclare(q.Name, true, false, false, false, q.Args); err != nil {
			if me := mismatch(q, err); me != nil {
				return me
			}
			return fmt.Errorf("declare queue %s: %w", q.Name, err)
		}
	}
	return nil
}

// AfterNotSent routes a message whose send just ended NOT_SENT (the
// handler calls it to choose between Retry and Dead). attempts is the count
// including the one that just failed, normally Attempt(headers)+1. It
// returns the Retry queue while attempts < MaxAttempts, else the Dead queue
// (and dead=true). The worker re-publishes the body with
// WithAttempt(headers, attempts), persistent, then acks the delivery.
func (t Topology) AfterNotSent(attempts int) (queue string, dead bool) {
	if attempts >= t.MaxAttempts {
		return t.Names.Dead, true
	}
	return t.Names.Retry, false
}
