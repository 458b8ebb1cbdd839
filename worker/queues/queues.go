// Package queues declares the worker's RabbitMQ topology and names its
// headers.
//
// CONTRACT STUB (written by the lead): keep the exported names and
// signatures, fill in the bodies.
package queues

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Header names set on messages the worker re-publishes.
const (
	HeaderReason  = "x-notifier-reason"  // why it was routed here (string)
	HeaderOutcome = "x-notifier-outcome" // outcome class (string)
	HeaderAttempt = "x-notifier-attempt" // send attempts so far (int32)
	HeaderError   = "x-notifier-error"   // error text, redacted
	HeaderCode    = "x-notifier-vendor-code"
)

// Names are the queue names for one main queue. All derive from Main.
type Names struct {
	Main, Retry, Unknown, Held, Failed, Dead string
}

// NamesFor returns the names derived from main ("notifications" ->
// "notifications.retry", ".unknown", ".held", ".failed", ".dead").
func NamesFor(main string) Names { panic("TODO") }

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
func DefaultTopology(main string) Topology { panic("TODO") }

// Declare declares every queue (and exchange) idempotently on ch.
func (t Topology) Declare(ch *amqp.Channel) error { panic("TODO") }
