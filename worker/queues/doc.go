// Package queues declares the worker's RabbitMQ topology and names its
// headers.
//
// Six durable classic queues, all reached through the default exchange ""
// (which routes by queue name); the worker declares them at start and the
// lab's driver declares the same Topology, idempotently:
//
//	driver ──publish──> notifications ──> worker (one consumer, prefetch 1)
//	                      ^   ^   │                 │
//	                      │   │   └ reject/nack ──> .dead <──┤ INVALID; NOT_SENT after MaxAttempts
//	   x-message-ttl      │   │                               │   (x-notifier-reason)
//	   RetryDelay: .retry ┘   │  <───────────────────────────┤ NOT_SENT (x-notifier-attempt + 1)
//	   own Expiration: .held ─┘  <───────────────────────────┤ OUTSIDE_SEND_WINDOW (Expiration =
//	                                                          │   time until the window opens)
//	                   .unknown  <───────────────────────────┤ UNKNOWN (never re-sent automatically)
//	                   .failed   <───────────────────────────┤ REJECTED (x-notifier-vendor-code)
//	                                                          └ SENT: ack
//
// # Who does what
//
// The broker only delays and routes back: Retry holds a message for
// RetryDelay (queue-level x-message-ttl) and dead-letters it to Main; Held
// dead-letters a message to Main when its own Expiration ends. The worker
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
// Retry uses a queue-wide TTL, for which FIFO order is expiry order.
// RabbitMQ removes a message's Expiration when it dead-letters it, so a
// released message does not expire again in Main.
package queues
