// Package worker is the notification worker: one RabbitMQ consumer
// handling Config.Concurrency messages at once (1 by default, the case's;
// the prefetch is one more, PrefetchAhead, and above 1 also room for
// the acks gathered into multiple acks, ackGroup) that decodes each
// message, applies the send window and the
// attempt ledger, sends it to the vendor, routes it to exactly one place
// (docs/outcomes.md) and writes one Record per handled message.
//
//	RabbitMQ main queue
//	     | single active consumer, QoS prefetch N+1 (N + max(2, N/4) + 1 above N=1), manual ack
//	     v
//	 Consumer ---- per connection: generation g (acks of older g refused)
//	     |
//	     v
//	 Handler: message.Decode --INVALID------------------> dead queue + ack
//	     |    window (ad only) --OUTSIDE_SEND_WINDOW-----> held queue (TTL to opening) + ack
//	     |    ledger.Begin --Duplicate-------------------> ack (DUPLICATE, not sent)
//	     |                 --Unresolved------------------> unknown queue + ack (ledger untouched)
//	     |                 --Conflict (other body)-------> dead queue, INVALID REFKEY_CONFLICT + ack
//	     |                 --Proceed
//	     |    gate: session lost / window / fence ----> requeue / held queue / retry queue, ledger NOT_SENT
//	     v
//	 Sender (vendorapi.Client), for an ad the window read again right before each message POST
//	                         window closed ------------> held queue + ack, ledger NOT_SENT
//	                         SENT ---------------------> ledger SENT + ack
//	                         REJECTED -----------------> failed queue + ack
//	                         NOT_SENT -----------------> retry queue (attempt+1, expiration = retry
//	                                                     delay or Retry-After, bounded) or dead queue + ack
//	                         UNKNOWN ------------------> unknown queue + ack (never re-sent)
//	     |
//	     v
//	 Record (JSON line, -records) + slog line
//
// Re-publishing uses publisher confirms and the original message is acked
// only after the broker confirmed the copy: a failed re-publish nacks the
// original with requeue, so nothing is lost. The ledger is written before any
// request goes out; when it cannot be written the message is nacked with
// requeue, the session is closed and the worker consumes again once the
// ledger answers (Handle's error wraps ErrLedger; the consume loop waits
// instead of exiting, docs/deployment.md, Deadlines). An outcome the ledger
// refuses because a delivery report or an operator settled the entry first
// (ledger.ErrStaleAttempt) is the ledger's answer, not a failure: it is
// logged, the settlement is kept, and the delivery is routed and acked.
//
// # Concurrency
//
// With Config.Concurrency N above 1 the consumer runs up to N handlers at
// once (prefetch N + max(2, N/4) + 1, N sends in flight): each delivery still goes through ledger Begin before
// its send, the send window and exactly one route, and is acked only after
// it was routed, through its own channel generation. Its ack is gathered
// (ackBatcher): once every delivery before it is settled, one multiple ack
// settles a run of them (max(2, N/4), or whatever waits after
// AckFlushDelay or when nothing is in flight); a multiple ack never covers
// a delivery not yet finished, and a nack goes alone at once. The queue's order is
// no longer kept: sends, acks and records follow the order in which
// messages finish. Records, metrics and the summary are written from one
// goroutine.
//
// # Replicas
//
// The main queue is declared with single active consumer (queues.Topology):
// with two or more replicas, or during a rolling deploy, RabbitMQ delivers
// to one at a time and the others stand by; when the active one's channel
// closes, a standby one takes over and receives the unacked message again.
// A replica learns it is active from its first delivery: it logs "active
// consumer" then ("standby" before), /healthz says so, and every Record
// carries its WORKER_ID in Record.Replica.
//
// # Shutdown budget
//
// On SIGTERM the in-flight message is finished first. ShutdownGrace(cfg)
// is how long that may take at worst (4 vendor calls of ResponseTimeout,
// one re-publish of PublishTimeout, ShutdownMargin; 55 s with the
// defaults); the worker logs it at start. Whatever stops the worker must
// wait at least that long before SIGKILL (docs/deployment.md).
//
// # Operations
//
// With OpsAddr set (the command's default :9090) the worker serves
// /healthz (200 "active" or "standby" while the broker session is open and
// the ledger answers, else 503) and /metrics (Prometheus text format, see
// Metrics), counted from the same Records as the records file.
//
// # Command line
//
// One table (flagspec.go) declares each setting of the notifier-worker
// command: its flag, its environment fallback, its default, its help and
// the Config field it binds. BindFlags reads a command line (and
// Flags.Resolve the fallbacks) into a Config; Config.Args writes a Config
// back as a command line, which is how the lab starts a worker container:
// code outside worker/ builds a Config, never flag strings (a test fails
// on a worker-flag literal there).
//
// # Simulation
//
// The consume loop reaches RabbitMQ only through a BrokerDialer (amqp091
// in Run), and waits, reads the time and draws its backoff's randomness
// through parts Run fills with real time: SimLoop runs the very same loop
// on the deterministic simulator's broker model, clock and seeded
// randomness (worker/sim, docs/testing.md).
//
// Run wires everything from a Config; cmd/notifier-worker is its thin main.
package worker
