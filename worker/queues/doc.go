// Package queues declares the worker's RabbitMQ topology and names its
// headers.
//
// Six durable queues of one type (Topology.Type: classic by default, or
// quorum), all reached through the default exchange "" (which routes by
// queue name); the worker declares them at start and the lab's driver
// declares the same Topology, idempotently:
//
//	driver ──publish──> notifications ──> worker (single active consumer, prefetch 1)
//	                      ^   ^   │                 │
//	                      │   │   └ reject/nack ──> .dead <──┤ INVALID; NOT_SENT after MaxAttempts
//	   own Expiration     │   │                               │   (x-notifier-reason)
//	   (retry delay): .retry ┘ │  <──────────────────────────┤ NOT_SENT (x-notifier-attempt + 1)
//	   own Expiration: .held ─┘  <───────────────────────────┤ OUTSIDE_SEND_WINDOW (Expiration =
//	                                                          │   time until the window opens)
//	                   .unknown  <───────────────────────────┤ UNKNOWN (never re-sent automatically)
//	                   .failed   <───────────────────────────┤ REJECTED (x-notifier-vendor-code)
//	                                                          └ SENT: ack
//
// # Who does what
//
// The broker only delays and routes back: Retry holds a message until its
// own Expiration ends (the worker sets RetryDelay, or the vendor's
// Retry-After when longer; the queue's x-message-ttl RetryMaxDelay caps
// it, RabbitMQ applying the lower of the two) and dead-letters it to Main;
// Held dead-letters a message to Main when its own Expiration ends. The worker
// decides everything else: it re-publishes the body to the chosen queue with
// headers (HeaderAttempt via WithAttempt, HeaderReason, HeaderOutcome,
// HeaderError, HeaderCode), persistent (Persistent), then acks the delivery.
// Main's own dead-letter target is Dead, so a reject or nack without
// requeue is kept, never dropped. Messages are persistent only if their
// publisher marks them so: durable queues keep nothing else over a restart.
//
// # Attempts
//
// HeaderAttempt counts send attempts already made. A first publish has
// none (0). After a NOT_SENT send the worker computes attempts :=
// Attempt(h)+1 and asks AfterNotSent(attempts): Retry while attempts <
// MaxAttempts, Dead after. RabbitMQ also counts dead-letter trips in the
// x-death header; the worker's own header is used because it is set
// explicitly, survives a re-publish and reads the same on every broker.
//
// # Per-message TTL only expires at the head of a queue
//
// RabbitMQ (3.10 and later alike) expires a message with its own
// Expiration only when it reaches the head of the queue; a short-lived
// message behind a long-lived one waits. That is harmless for Held: every
// held message carries Expiration = NextOpen(now) - now, and NextOpen is
// non-decreasing in now (window.TestNextOpenMonotonic), so messages enter
// Held in the order they are due and the head is always the first due.
// Expiration is rounded up (Expiration), so one never returns early; if one
// returned early anyway (the window changed between runs, clocks differ),
// the worker checks the window again on every delivery and holds it again.
// Retry is subject to the same rule: a message with a long Retry-After at
// the head holds back a shorter one behind it, which then waits longer
// than asked, never less (a retry is never early).
// RabbitMQ removes a message's Expiration when it dead-letters it, so a
// released message does not expire again in Main.
//
// # Replicas: single active consumer
//
// Main is declared with x-single-active-consumer (Topology.
// SingleActiveConsumer): however many worker replicas consume it, RabbitMQ
// delivers to one at a time, so the case's "one consumer, concurrency 1"
// holds with two replicas and during a rolling deploy. When the active
// consumer's channel closes, RabbitMQ makes the next registered consumer
// active and redelivers the unacked message to it
// (https://www.rabbitmq.com/docs/consumers#single-active-consumer).
//
// # Quorum queues and poison messages
//
// With Type Quorum, Main also gets x-delivery-limit (DeliveryLimit): a
// message returned that many times without an ack (the worker crashed or
// was killed while holding it, or nacked it with requeue) is dead-lettered
// to Dead, where RabbitMQ's x-death header says reason "delivery_limit"
// (https://www.rabbitmq.com/docs/quorum-queues#poison-message-handling).
// RabbitMQ 3.10 added message TTL to quorum queues, so Retry and Held work
// on both types.
//
// # Dead-letter hops: at least once on quorum queues
//
// Retry -> Main, Held -> Main and Main -> Dead are dead-letter hops. By
// default RabbitMQ dead-letters at most once: a message expiring (or
// rejected) while the target queue has no leader, on a cluster where the
// target's node is down, is dropped. With Type Quorum the three source
// queues are declared with x-dead-letter-strategy at-least-once and
// x-overflow reject-publish (which at-least-once requires; no length limit
// is set, so nothing is ever rejected for it): the source keeps the
// message until the target confirmed it, and retries, so a hop can
// deliver a message twice (the ledger makes the second a DUPLICATE) but
// never drops it. It needs RabbitMQ 3.10 or later with the stream_queue
// feature flag (on by default since 3.9)
// (https://www.rabbitmq.com/docs/quorum-queues#dead-lettering). Classic
// queues always dead-letter at most once (docs/deployment.md).
//
// # Changing arguments of an existing queue
//
// RabbitMQ refuses to redeclare a queue with other arguments (another type,
// single active consumer turned on, or a quorum queue declared before the
// at-least-once dead-letter arguments existed): PRECONDITION_FAILED (406),
// and the channel is closed. Declare returns a *MismatchError naming the
// queue, the argument, both values and every argument the worker declares;
// the worker logs it in one line and exits (status 3). Move the messages to a queue declared with the new arguments
// (or delete the old queue when it is empty), then start the worker again.
package queues
