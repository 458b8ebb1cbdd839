package queues

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Header names set on messages the worker re-publishes.
const (
	HeaderReason  = "x-notifier-reason"  // why it was routed here (string)
	HeaderOutcome = "x-notifier-outcome" // outcome class (string)
	HeaderAttempt = "x-notifier-attempt" // send attempts so far (int32)
	HeaderError   = "x-notifier-error"   // error text, redacted
	// HeaderCode is the vendor's business code of a REJECTED send (string,
	// "3018"), set on messages in the failed queue.
	HeaderCode = "x-notifier-vendor-code"
)

// Queue argument keys RabbitMQ reads (https://www.rabbitmq.com/docs/ttl,
// https://www.rabbitmq.com/docs/dlx).
const (
	ArgQueueType            = "x-queue-type"
	ArgMessageTTL           = "x-message-ttl"
	ArgDeadLetterExchange   = "x-dead-letter-exchange"
	ArgDeadLetterRoutingKey = "x-dead-letter-routing-key"
)

// QueueType is the queue type every queue is declared with: "classic".
//
// Why classic and not quorum: the lab (and the case) runs ONE RabbitMQ node;
// a quorum queue replicates over Raft to tolerate a node loss, which a
// single node cannot give, while it costs an fsync-heavy log per message.
// Durable classic queues with persistent messages survive a broker restart
// on one node, which is the guarantee wanted here. Classic queues also have
// the TTL and dead-letter behaviour this topology relies on in every broker
// the lab meets (Debian's RabbitMQ 3.10 offline, the official 3.13 image);
// quorum queues gained message TTL only in 3.10 and dead-letter at most
// once by default. A production cluster of three or more nodes should move
// Main to quorum (x-queue-type "quorum") and re-test the retry and held
// paths there.
const QueueType = "classic"

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
	Names       Names
	RetryDelay  time.Duration // TTL of the retry queue before re-delivery to Main
	MaxAttempts int           // attempts before a NOT_SENT message is dead-lettered
}

// Defaults for DefaultTopology.
const (
	DefaultMain        = "notifications"
	DefaultRetryDelay  = 5 * time.Second
	DefaultMaxAttempts = 5
)

// DefaultTopology returns the topology for main with DefaultRetryDelay and
// DefaultMaxAttempts. The worker and the lab's driver both declare it, so
// their arguments match (RabbitMQ refuses a redeclare with other arguments).
func DefaultTopology(main string) Topology {
	return Topology{Names: NamesFor(main), RetryDelay: DefaultRetryDelay, MaxAttempts: DefaultMaxAttempts}
}

// ErrTopology is the sentinel every Validate error matches with errors.Is.
var ErrTopology = errors.New("invalid topology")

// maxTTL is the largest x-message-ttl RabbitMQ takes, in ms (2^32-1).
const maxTTL = math.MaxUint32

// Validate checks the names (non-empty, distinct, at most 255 bytes: the
// AMQP short-string limit) and the policies (RetryDelay a whole number of
// ms from 1 ms to 2^32-1 ms, MaxAttempts >= 1). Errors match ErrTopology.
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
	ms := t.RetryDelay.Milliseconds()
	if t.RetryDelay%time.Millisecond != 0 || ms < 1 || ms > maxTTL {
		return fmt.Errorf("retry delay %s: want whole ms from 1ms to %dms: %w", t.RetryDelay, int64(maxTTL), ErrTopology)
	}
	if t.MaxAttempts < 1 {
		return fmt.Errorf("max attempts %d: want at least 1: %w", t.MaxAttempts, ErrTopology)
	}
	return nil
}

// QueueSpec is one queue as Declare declares it: durable, not exclusive,
// not auto-deleted, with Args.
type QueueSpec struct {
	Name    string
	Args    amqp.Table
	Purpose string // one line, for logs and docs
}

// Queues returns the six queue declarations of t, in order Main, Retry,
// Unknown, Held, Failed, Dead. It is pure (no broker), so tests and the
// lab can inspect the exact arguments Declare sends:
//
//	Main     dead-letter -> "" / Dead   (a reject or nack without requeue
//	                                     lands in Dead, never vanishes)
//	Retry    x-message-ttl RetryDelay ms, dead-letter -> "" / Main
//	Unknown  plain: kept for reconciliation, never consumed automatically
//	Held     dead-letter -> "" / Main; the worker sets each message's
//	         Expiration to the time until the send window opens
//	Failed   plain: vendor rejections (HeaderCode)
//	Dead     plain: INVALID messages and NOT_SENT after MaxAttempts
//
// "" is the default exchange, which routes by queue name, so no exchange
// is declared.
func (t Topology) Queues() []QueueSpec {
	n := t.Names
	plain := func() amqp.Table { return amqp.Table{ArgQueueType: QueueType} }
	toQueue := func(target string) amqp.Table {
		a := plain()
		a[ArgDeadLetterExchange] = ""
		a[ArgDeadLetterRoutingKey] = target
		return a
	}
	retry := toQueue(n.Main)
	retry[ArgMessageTTL] = t.RetryDelay.Milliseconds()
	return []QueueSpec{
		{Name: n.Main, Args: toQueue(n.Dead), Purpose: "notifications to send; rejects dead-letter to " + n.Dead},
		{Name: n.Retry, Args: retry, Purpose: fmt.Sprintf("NOT_SENT, waits %s then returns to %s", t.RetryDelay, n.Main)},
		{Name: n.Unknown, Args: plain(), Purpose: "UNKNOWN: may have reached the vendor; reconcile, never re-send automatically"},
		{Name: n.Held, Args: toQueue(n.Main), Purpose: "OUTSIDE_SEND_WINDOW: per-message TTL until the window opens, then returns to " + n.Main},
		{Name: n.Failed, Args: plain(), Purpose: "REJECTED by the vendor, with its code"},
		{Name: n.Dead, Args: plain(), Purpose: "INVALID, or NOT_SENT after the last attempt, with the reason"},
	}
}

// Declarer is the part of *amqp.Channel that DeclareOn uses, so the
// declaration order and arguments can be tested without a broker.
type Declarer interface {
	QueueDeclare(name string, durable, autoDelete, exclusive, noWait bool, args amqp.Table) (amqp.Queue, error)
}

var _ Declarer = (*amqp.Channel)(nil)

// Declare declares every queue (and exchange) idempotently on ch. Only the
// default exchange is used, so no exchange is declared. Declaring the same
// Topology again is a no-op; declaring one whose arguments differ from the
// queues already on the broker fails with the broker's PRECONDITION_FAILED
// (406), which also closes ch. Errors: ErrTopology from Validate, or the
// broker's *amqp.Error wrapped with the queue name.
func (t Topology) Declare(ch *amqp.Channel) error { return t.DeclareOn(ch) }

// DeclareOn is Declare on any Declarer.
func (t Topology) DeclareOn(d Declarer) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("declare topology: %w", err)
	}
	for _, q := range t.Queues() {
		if _, err := d.QueueDeclare(q.Name, true, false, false, false, q.Args); err != nil {
			return fmt.Errorf("declare queue %s: %w", q.Name, err)
		}
	}
	return nil
}

// Attempt reads HeaderAttempt from h: the number of send attempts already
// made for this message. Missing, negative or unreadable values give 0;
// values above 2^31-1 are capped there. It accepts any Go integer type
// (amqp091-go decodes AMQP field values to int8, uint8, int16, uint16,
// int32, uint32 and int64), a float32/float64 holding a whole number, and a
// decimal string or []byte ("3"), because publishers in other languages
// send the header with different types.
func Attempt(h amqp.Table) int {
	if h == nil {
		return 0
	}
	var n int64
	switch v := h[HeaderAttempt].(type) {
	case int:
		n = int64(v)
	case int8:
		n = int64(v)
	case int16:
		n = int64(v)
	case int32:
		n = int64(v)
	case int64:
		n = v
	case uint8:
		n = int64(v)
	case uint16:
		n = int64(v)
	case uint32:
		n = int64(v)
	case uint64:
		if v > math.MaxInt32 {
			return math.MaxInt32
		}
		n = int64(v)
	case float32:
		n = floatAttempt(float64(v))
	case float64:
		n = floatAttempt(v)
	case string:
		p, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0
		}
		n = p
	case []byte:
		p, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err != nil {
			return 0
		}
		n = p
	default:
		return 0
	}
	switch {
	case n < 0:
		return 0
	case n > math.MaxInt32:
		return math.MaxInt32
	}
	return int(n)
}

func floatAttempt(f float64) int64 {
	if math.IsNaN(f) || f < 0 || f != math.Trunc(f) {
		return 0
	}
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int64(f)
}

// WithAttempt returns a copy of h (nil is fine) with HeaderAttempt set to n
// as int32, the type the worker publishes. h itself is not changed, so a
// delivery's headers can be reused safely.
func WithAttempt(h amqp.Table, n int) amqp.Table {
	out := make(amqp.Table, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	if n < 0 {
		n = 0
	}
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	out[HeaderAttempt] = int32(n)
	return out
}

// AfterNotSent routes a message whose send just ended NOT_SENT (the
// handler calls it to choose between Retry and Dead). attempts is
// the count including the one that just failed, normally Attempt(headers)+1.
// It returns the Retry queue while attempts < MaxAttempts, else the Dead
// queue (and dead=true). The worker re-publishes the body with
// WithAttempt(headers, attempts), persistent, then acks the delivery.
func (t Topology) AfterNotSent(attempts int) (queue string, dead bool) {
	if attempts >= t.MaxAttempts {
		return t.Names.Dead, true
	}
	return t.Names.Retry, false
}

// Expiration formats d as an AMQP per-message TTL for
// amqp.Publishing.Expiration: whole milliseconds as a decimal string,
// rounded UP so a held message never comes back before the window opens,
// and at least "1" (a TTL of 0 would expire at once and bounce the message
// between Main and Held in a tight loop). RabbitMQ's upper bound is 2^32-1
// ms (about 49.7 days); larger values are capped to it.
func Expiration(d time.Duration) string {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms < 1 {
		ms = 1
	}
	if ms > maxTTL {
		ms = maxTTL
	}
	return strconv.FormatInt(int64(ms), 10)
}

// Persistent returns p with DeliveryMode amqp.Persistent (2). Durable
// queues keep only persistent messages over a broker restart, and marking
// messages persistent is the publisher's job: the worker and the lab's
// driver pass every Publishing through Persistent.
func Persistent(p amqp.Publishing) amqp.Publishing {
	p.DeliveryMode = amqp.Persistent
	return p
}
