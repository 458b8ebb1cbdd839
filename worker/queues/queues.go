package queues

import (
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
	// HeaderPublish is set by worker.ConfirmPublisher on everything it
	// publishes (int64, unique within one publisher): a basic.return
	// carries no delivery tag, so a return is matched to its publish by
	// it. Consumers ignore it; a copy's copy carries the latest one.
	HeaderPublish = "x-notifier-publish"
)

// Attempt reads HeaderAttempt from h: the number of send attempts already
// made for this message. Missing, negative or unreadable values give 0;
// values above 2^31-1 are capped there. It accepts any Go integer type
// (amqp091-go decodes AMQP field values to int8, uint8, int16, uint16,
// int32, uint32 and int64), a float32/float64 holding a whole number, and a
// decimal string or []byte ("3"), because publishers in other languages
// send the header with different types.
func Attempt(h amqp.Table) int { return headerInt(h, HeaderAttempt) }

// Headers of a delivery's quorum-queue delivery budget (DeliveryCount,
// Renewals).
const (
	// HeaderDeliveryCount is set by RabbitMQ on a redelivery from a quorum
	// queue: how many times the message was returned (nacked with
	// requeue, or unacked when its channel closed, prefetched ones
	// included: RabbitMQ 3.10 counts every return).
	HeaderDeliveryCount = "x-delivery-count"
	// HeaderRenewals counts the times the worker renewed the message's
	// delivery budget (int32; worker.Handler, docs/deployment.md).
	HeaderRenewals = "x-notifier-renewals"
)

// DeliveryCount reads HeaderDeliveryCount from h (0 when missing), with
// Attempt's rules for its type.
func DeliveryCount(h amqp.Table) int { return headerInt(h, HeaderDeliveryCount) }

// Renewals reads HeaderRenewals from h (0 when missing), with Attempt's
// rules for its type.
func Renewals(h amqp.Table) int { return headerInt(h, HeaderRenewals) }

// headerInt reads h[key] as a count by Attempt's rules.
func headerInt(h amqp.Table, key string) int {
	if h == nil {
		return 0
	}
	var n int64
	switch v := h[key].(type) {
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
