package worker

import (
	"time"

	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Defaults for Config, reused as the command's flag defaults.
const (
	// DefaultAMQPURL is RabbitMQ on the local host with its stock account.
	DefaultAMQPURL = "amqp://guest:guest@localhost:5672/"
	// DefaultQueue is the main queue; the others derive from it
	// (queues.NamesFor).
	DefaultQueue = queues.DefaultMain
	// DefaultStrategy is the shared keep-alive client (the case's fix).
	DefaultStrategy = vendorapi.PooledName
	// DefaultTLSMax caps the per-request strategy at TLS 1.3, i.e. no cap.
	// The lab passes "1.2" to reproduce the case's old engine, which could
	// not speak TLS 1.3 (docs/case.md). The pooled strategy is never capped.
	DefaultTLSMax = "1.3"
	// DefaultHTTPVersion is "1.1", the case's engine's.
	DefaultHTTPVersion = "1.1"
	// DefaultConcurrency is one message at a time, the case's worker.
	DefaultConcurrency = 1
	// MaxConcurrency bounds Config.Concurrency (and the prefetch).
	MaxConcurrency = 256
	// DefaultCorrelationHeader carries the refkey on every send so the
	// proxy's access log can join requests to messages. Not an idempotency
	// key.
	DefaultCorrelationHeader = "X-Refkey"
	// DefaultIdempotencyHeader is "" (none): Go's transport replays a POST
	// on its own when it carries Idempotency-Key or X-Idempotency-Key, and
	// the case's vendor does not de-duplicate (docs/vendor-api.md).
	DefaultIdempotencyHeader = ""
	// DefaultLedgerPath is the bbolt attempt ledger file.
	DefaultLedgerPath = "./notifier-ledger.db"
	// DefaultLedgerRetention is how long a ledger entry is kept after its
	// last update (7 days): longer than any redelivery or retry horizon
	// (docs/deployment.md).
	DefaultLedgerRetention = 7 * 24 * time.Hour
	// DefaultWindowStart, DefaultWindowEnd and DefaultWindowZone are the
	// case's send window for advertising messages: 08:00 to 20:50
	// Asia/Seoul (docs/outcomes.md).
	DefaultWindowStart = "08:00"
	DefaultWindowEnd   = "20:50"
	DefaultWindowZone  = "Asia/Seoul"
	// DefaultRetryDelay and DefaultMaxAttempts match
	// queues.DefaultTopology: RabbitMQ refuses a redeclare with other
	// arguments, so the worker and the lab's driver must agree.
	DefaultRetryDelay  = queues.DefaultRetryDelay
	DefaultMaxAttempts = queues.DefaultMaxAttempts
	// DefaultRetryMaxDelay bounds a retry delay taken from the vendor's
	// Retry-After; it is also the retry queue's x-message-ttl.
	DefaultRetryMaxDelay = queues.DefaultRetryMaxDelay
	// DefaultQueueType is "classic" (queues.Classic explains why).
	DefaultQueueType = string(queues.Classic)
	// DefaultDeliveryLimit is the quorum main queue's x-delivery-limit.
	DefaultDeliveryLimit = queues.DefaultDeliveryLimit
	// DefaultOpsAddr is where the command serves /healthz and /metrics.
	// Config.OpsAddr "" serves nothing.
	DefaultOpsAddr = ":9090"
	// DefaultPublishTimeout bounds one re-publish including its broker
	// confirm.
	DefaultPublishTimeout = 10 * time.Second
	// DefaultLedgerTimeout bounds one ledger Begin or Finish (2 s): a
	// ledger that does not answer is given up on instead of hanging for
	// TCP's retransmission time. Begin and Finish at this deadline fit in
	// ShutdownMargin (docs/deployment.md, Deadlines).
	DefaultLedgerTimeout = 2 * time.Second
	// DefaultSendFence is the longest a send may start after its Begin
	// (5 s, more than DefaultLedgerTimeout): a worker frozen or slowed
	// longer does not send (docs/deployment.md, Fencing).
	DefaultSendFence = 5 * time.Second
	// DefaultReconnectMin and DefaultReconnectMax bound the broker
	// reconnect backoff and the pause after requeued deliveries (one
	// policy, newBackoff: doubling, each delay within ±50%).
	DefaultReconnectMin = 250 * time.Millisecond
	DefaultReconnectMax = 30 * time.Second
	// DefaultHeartbeat is the AMQP heartbeat interval: a dead broker
	// connection is noticed within about two of them.
	DefaultHeartbeat = 10 * time.Second
	// DefaultSummaryEvery is how many handled messages separate two
	// info-level summary log lines.
	DefaultSummaryEvery = 100
	// DefaultLogLevel is "info".
	DefaultLogLevel = "info"
)

// Vendor client defaults, re-exported from package vendor for the flags.
const (
	DefaultIdleConnTimeout     = vendorapi.DefaultIdleConnTimeout
	DefaultResponseTimeout     = vendorapi.DefaultResponseTimeout
	DefaultDialTimeout         = vendorapi.DefaultDialTimeout
	DefaultTLSHandshakeTimeout = vendorapi.DefaultTLSHandshakeTimeout
)
