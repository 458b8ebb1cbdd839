package worker

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Config is everything the worker is built from. The zero value of a field
// means its Default*; Validate reports what is still wrong. ClientSecret is
// never printed: Config.String redacts it, and the command reads it only
// from the environment (VENDOR_CLIENT_SECRET).
type Config struct {
	// AMQPURL is the broker, "amqp://user:pass@host:5672/vhost", or the
	// nodes of a cluster as a comma-separated list of such URLs: each
	// session dials the next one, so the worker reconnects to another node
	// when its node goes (AMQPURLs).
	AMQPURL string
	// Queue is the main queue; retry, unknown, held, failed and dead
	// queues derive from it (queues.NamesFor).
	Queue string
	// RetryDelay is the retry queue's TTL before a NOT_SENT message comes
	// back to Queue.
	RetryDelay time.Duration
	// MaxAttempts is how many send attempts a NOT_SENT message gets before
	// it is dead-lettered (>= 1).
	MaxAttempts int
	// RetryMaxDelay bounds the retry delay a vendor's Retry-After asks
	// for, and is the retry queue's x-message-ttl (must match the declared
	// topology).
	RetryMaxDelay time.Duration
	// QueueType is "classic" or "quorum" for all six queues (must match
	// the queues already on the broker: a mismatch stops the worker with
	// ErrTopology).
	QueueType string
	// DeliveryLimit is the quorum main queue's x-delivery-limit: a message
	// delivered that many times without an ack (the worker crashed on it)
	// is dead-lettered. Ignored for classic queues.
	DeliveryLimit int
	// DisableSingleActiveConsumer declares the main queue WITHOUT
	// x-single-active-consumer, so several replicas consume at once. Only
	// for the lab's negative control.
	DisableSingleActiveConsumer bool
	// CompetingLocalLedgerOK lets DisableSingleActiveConsumer run with a
	// bbolt ledger, which Validate refuses otherwise: several active
	// consumers with a ledger each can send one message twice (a
	// redelivery reaches a replica whose ledger never saw it;
	// docs/deployment.md, Several active workers). Only for the lab's
	// negative control (scenario no-sac-crash).
	CompetingLocalLedgerOK bool
	// DeadLetterAtMostOnce (quorum only) declares the dead-letter hops
	// with RabbitMQ's default at-most-once dead-lettering instead of
	// at-least-once (queues.Topology.DeadLetterAtMostOnce): a hop into a
	// queue without a leader then drops the message. Only for the lab's
	// negative control (docs/deployment.md).
	DeadLetterAtMostOnce bool
	// WorkerID names this replica in records (Record.Replica) and logs;
	// "" = the host name.
	WorkerID string
	// OpsAddr ("host:port") serves /healthz and /metrics; "" = none.
	OpsAddr string
	// VendorStatusTable maps the vendor's HTTP statuses and business codes
	// to outcomes: a YAML/JSON file path or inline JSON ("{...}");
	// "" = vendorapi.DefaultStatusTable.
	VendorStatusTable string
	// VendorReports is the vendor's delivery-report API as JSON (a
	// profile's reports section, vendorapi.ReportSpec); "" = the vendor
	// publishes none (docs/vendor-api.md#delivery-reports).
	VendorReports string
	// ReportSecretFile is the file holding the shared secret that
	// authenticates pushed reports (its content, trailing newline
	// trimmed; never logged). Required when VendorReports has push.
	ReportSecretFile string
	// ReportJournal is the file every authenticated report is appended to
	// (one JSON line, synced); "" = none.
	ReportJournal string
	// ReportSweep is how often UNKNOWN entries are swept: reports pulled,
	// the horizon applied; Default ReportSweep when 0.
	ReportSweep time.Duration

	// VendorURL is the vendor's base URL, "https://host[:port]".
	VendorURL string
	// VendorAPI is the vendor API's shape: token and send paths, token
	// authentication, refkey and code fields (a profile's api keys,
	// docs/worker-contract.md#what-the-lab-gives-the-worker). Empty fields
	// are vendorapi.DefaultAPI's, the alimtalk shape.
	VendorAPI vendorapi.API
	// VendorAddr, when set ("host:port"), is dialled for every vendor
	// connection instead of VendorURL's host; TLS still verifies
	// VendorURL's host name. "" = resolve VendorURL's host.
	VendorAddr string
	// CAFile is a PEM file of CA certificates the vendor's chain is
	// verified against. "" = the system roots.
	CAFile string
	// ClientID and ClientSecret authenticate the token call.
	ClientID     string
	ClientSecret string
	// Strategy is a name from vendorapi.Strategies(): "per-request",
	// "per-request-resume", "pooled" or "shared-closing".
	Strategy string
	// TLSMax is "1.2" or "1.3": the highest TLS version of the
	// per-request, per-request-resume and shared-closing strategies. The pooled strategy
	// ignores it.
	TLSMax string
	// IdleConnTimeout (pooled only) should sit below the vendor's
	// keepalive_timeout by at least one RTT (docs/environment.md).
	IdleConnTimeout     time.Duration
	ResponseTimeout     time.Duration // whole send call, body included
	DialTimeout         time.Duration // TCP connect
	TLSHandshakeTimeout time.Duration
	// ClientCertFile and ClientKeyFile are PEM files of the client
	// certificate and its key presented in the TLS handshake (mutual TLS,
	// the lab's SCHEME=mtls); both or neither, https only. The key is read
	// once and never logged.
	ClientCertFile, ClientKeyFile string
	// HTTPVersion is "1.1" (the case's) or "2": the pooled strategy then
	// offers h2 through ALPN and every send shares one connection; the
	// per-request strategy still makes one connection (and handshake) per
	// call. Plain http:// stays HTTP/1.1 (no h2c).
	HTTPVersion string
	// Concurrency is how many messages the worker handles at once (that
	// many sends in flight; the prefetch is Concurrency + PrefetchAhead,
	// one delivery waiting in the worker's buffer, and above 1 also
	// max(2, Concurrency/4) for the acks gathered into multiple acks,
	// docs/worker.md); 0 = 1, the case's. Every delivery rule holds at any concurrency (ledger Begin
	// before the send, send window, one outcome, ack only after routing,
	// on the delivery's own channel). Above 1 the queue's order is NOT
	// kept: sends, acks and records happen in the order messages finish.
	Concurrency int
	// SendInterval paces the worker: it takes a message no sooner than
	// SendInterval after the previous one (a steady schedule, so the mean
	// rate is 1/SendInterval), this worker's share of the vendor's rate
	// limit (docs/deployment.md, Vendor rate limit). 0 = no pacing.
	SendInterval time.Duration
	// PoolSize is the pooled strategy's idle pool (MaxIdleConnsPerHost);
	// 0 = Concurrency. Setting it below Concurrency shows the classic
	// pitfall: Go's default is 2, and above that many sends in flight the
	// pool closes and reopens connections (docs/studies.md, study A).
	PoolSize int
	// CorrelationHeader carries the refkey on each send (logs only).
	CorrelationHeader string
	// IdempotencyHeader, when set, carries the refkey as an idempotency
	// key: only for a vendor that de-duplicates on it.
	IdempotencyHeader string
	// UnsafeAllowTransportReplay gives Go's transport back its own replays
	// (vendorapi.Config.AllowTransportReplay): an HTTP/2 POST whose stream
	// the vendor reset with PROTOCOL_ERROR after reading it is sent again,
	// so one notification can reach the vendor twice. UNSAFE: for tests
	// and the lab's negative controls only (docs/outcomes.md#automatic-replays);
	// Run logs a warning at start when it is on.
	UnsafeAllowTransportReplay bool

	// LedgerPath is the LEDGER spec (ledger.OpenStore): a bbolt file path,
	// or a postgres:// or postgresql:// URL shared by every replica.
	LedgerPath string
	// LedgerRetention: entries not updated for this long are pruned in the
	// background (about hourly). 0 = DefaultLedgerRetention.
	LedgerRetention time.Duration
	// LedgerEphemeralOK lets the worker start in a container with a bbolt
	// ledger that is not on a mounted volume (lost with the container).
	LedgerEphemeralOK bool
	// RecordsPath is a JSON Lines file of Record, appended one line per
	// handled message. "" = no records.
	RecordsPath string
	// MaxMessages stops the worker (nil error) after that many handled
	// messages, i.e. messages that ended in a place (a Record each);
	// 0 = run until ctx is done.
	MaxMessages int

	// WindowStart and WindowEnd ("HH:MM") and WindowZone (IANA name) are
	// the send window of advertising messages.
	WindowStart, WindowEnd, WindowZone string
	// ClockStart, when not zero, starts the worker's clock at this instant
	// (then it advances with real time): the lab makes a run cross 20:50.
	ClockStart time.Time

	// PublishTimeout bounds one re-publish including its confirm.
	PublishTimeout time.Duration
	// LedgerTimeout bounds each ledger Begin and Finish (docs/deployment.md,
	// Deadlines). 0 = DefaultLedgerTimeout.
	LedgerTimeout time.Duration
	// SendFence is the longest a send may start after the clock reading
	// before its Begin; longer (a frozen worker, a slow ledger) and it is
	// not sent, NOT_SENT (docs/deployment.md, Fencing). Must exceed
	// LedgerTimeout. 0 = DefaultSendFence.
	SendFence time.Duration
	// ReconnectMin and ReconnectMax bound the reconnect backoff.
	ReconnectMin, ReconnectMax time.Duration
	// Heartbeat is the AMQP heartbeat interval.
	Heartbeat time.Duration
	// SummaryEvery is the number of messages between info summary lines.
	SummaryEvery int
	// LogLevel is debug, info, warn or error. Ignored when Logger is set.
	LogLevel string
	// Logger receives the worker's structured logs; nil = JSON lines on
	// stderr at LogLevel.
	Logger *slog.Logger
	// CPUProfile, when set, is a file the command writes a Go CPU profile
	// (pprof) of the whole run to (flag -cpu-profile). Run ignores it.
	CPUProfile string
}

// WithDefaults returns c with every zero field set to its Default*.
func (c Config) WithDefaults() Config {
	set := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	setD := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	set(&c.AMQPURL, DefaultAMQPURL)
	set(&c.Queue, DefaultQueue)
	set(&c.Strategy, DefaultStrategy)
	set(&c.TLSMax, DefaultTLSMax)
	set(&c.HTTPVersion, DefaultHTTPVersion)
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	set(&c.CorrelationHeader, DefaultCorrelationHeader)
	set(&c.LedgerPath, DefaultLedgerPath)
	set(&c.WindowStart, DefaultWindowStart)
	set(&c.WindowEnd, DefaultWindowEnd)
	set(&c.WindowZone, DefaultWindowZone)
	set(&c.LogLevel, DefaultLogLevel)
	setD(&c.RetryDelay, DefaultRetryDelay)
	setD(&c.RetryMaxDelay, DefaultRetryMaxDelay)
	setD(&c.ReportSweep, DefaultReportSweep)
	set(&c.QueueType, DefaultQueueType)
	if c.WorkerID == "" {
		c.WorkerID, _ = os.Hostname()
	}
	if c.DeliveryLimit == 0 {
		c.DeliveryLimit = DefaultDeliveryLimit
	}
	setD(&c.IdleConnTimeout, DefaultIdleConnTimeout)
	setD(&c.ResponseTimeout, DefaultResponseTimeout)
	setD(&c.DialTimeout, DefaultDialTimeout)
	setD(&c.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout)
	setD(&c.PublishTimeout, DefaultPublishTimeout)
	setD(&c.LedgerTimeout, DefaultLedgerTimeout)
	setD(&c.SendFence, DefaultSendFence)
	setD(&c.LedgerRetention, DefaultLedgerRetention)
	setD(&c.ReconnectMin, DefaultReconnectMin)
	setD(&c.ReconnectMax, DefaultReconnectMax)
	setD(&c.Heartbeat, DefaultHeartbeat)
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.SummaryEvery == 0 {
		c.SummaryEvery = DefaultSummaryEvery
	}
	return c
}

// String prints c for logs with the client secret and the AMQP password
// redacted.
func (c Config) String() string {
	c.ClientSecret = redactedIfSet(c.ClientSecret)
	c.AMQPURL = redactAMQPURLs(c.AMQPURL)
	c.LedgerPath = redactLedger(c.LedgerPath)
	c.Logger = nil
	type plain Config // no String method: no recursion
	return fmt.Sprintf("%+v", plain(c))
}

// LogValue makes slog print the redacted form.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("amqp_url", redactAMQPURLs(c.AMQPURL)),
		slog.String("queue", c.Queue),
		slog.String("vendor_url", c.VendorURL),
		slog.String("vendor_addr", c.VendorAddr),
		slog.Any("vendor_api", c.VendorAPI.WithDefaults()),
		slog.String("ca_file", c.CAFile),
		slog.String("client_id", c.ClientID),
		slog.String("strategy", c.Strategy),
		slog.String("tls_max", c.TLSMax),
		slog.String("client_cert_file", c.ClientCertFile),
		slog.Bool("client_key_set", c.ClientKeyFile != ""),
		slog.String("http_version", c.HTTPVersion),
		slog.Int("concurrency", c.Concurrency),
		slog.String("send_interval", c.SendInterval.String()),
		slog.Int("pool_size", c.PoolSize),
		slog.String("idle_conn_timeout", c.IdleConnTimeout.String()),
		slog.String("response_timeout", c.ResponseTimeout.String()),
		slog.String("dial_timeout", c.DialTimeout.String()),
		slog.String("correlation_header", c.CorrelationHeader),
		slog.String("idempotency_header", c.IdempotencyHeader),
		slog.Bool("unsafe_allow_transport_replay", c.UnsafeAllowTransportReplay),
		slog.String("ledger", redactLedger(c.LedgerPath)),
		slog.String("ledger_retention", c.LedgerRetention.String()),
		slog.Bool("ledger_ephemeral_ok", c.LedgerEphemeralOK),
		slog.String("records", c.RecordsPath),
		slog.Int("max_messages", c.MaxMessages),
		slog.String("window", c.WindowStart+"-"+c.WindowEnd+" "+c.WindowZone),
		slog.Time("clock_start", c.ClockStart),
		slog.String("retry_delay", c.RetryDelay.String()),
		slog.Int("max_attempts", c.MaxAttempts),
		slog.String("retry_max_delay", c.RetryMaxDelay.String()),
		slog.String("queue_type", c.QueueType),
		slog.Int("delivery_limit", c.DeliveryLimit),
		slog.Bool("single_active_consumer", !c.DisableSingleActiveConsumer),
		slog.Bool("dead_letter_at_most_once", c.DeadLetterAtMostOnce),
		slog.String("worker_id", c.WorkerID),
		slog.String("ops_addr", c.OpsAddr),
		slog.String("vendor_status_table", c.VendorStatusTable),
		slog.String("vendor_reports", c.VendorReports),
		slog.String("report_secret_file", c.ReportSecretFile),
		slog.String("report_journal", c.ReportJournal),
		slog.String("report_sweep", c.ReportSweep.String()),
	)
}

func redactedIfSet(s string) string {
	if s == "" {
		return ""
	}
	return "<redacted>"
}

// RedactURL returns raw with its password replaced by "xxxxx", or raw
// unchanged when it does not parse.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable url>"
	}
	return u.Redacted()
}

// redactLedger hides the password of a PostgreSQL ledger URL; a file path
// is returned as is.
func redactLedger(spec string) string {
	if kind, _ := ledger.SpecKind(spec); kind == ledger.KindPostgres {
		return RedactURL(spec)
	}
	return spec
}

// Topology returns the queue topology cfg (after WithDefaults) declares:
// the lab's driver must declare the same one (RabbitMQ refuses a redeclare
// with other arguments).
func (c Config) Topology() queues.Topology {
	t := queues.DefaultTopology(c.Queue)
	t.RetryDelay = c.RetryDelay
	t.RetryMaxDelay = c.RetryMaxDelay
	t.MaxAttempts = c.MaxAttempts
	t.Type = queues.QueueType(c.QueueType)
	t.DeliveryLimit = c.DeliveryLimit
	t.SingleActiveConsumer = !c.DisableSingleActiveConsumer
	t.DeadLetterAtMostOnce = c.DeadLetterAtMostOnce
	return t
}
