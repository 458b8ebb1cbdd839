package worker

import (
	"time"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// settings is the notifier-worker command line: one line per knob, giving
// its flag, its environment fallback ("" = none), its default, its help and
// the Config field it binds. BindFlags (the command's flags and
// environment fallbacks, -h) and Config.Args (the lab's command line)
// are both read from it, so a flag renamed here is renamed everywhere, and
// a Go caller that builds a Config cannot misspell one. The variable names
// are the ones docs/worker-contract.md gives contract workers, where both
// exist. Adding a knob: a Config field, and one line here.
var settings = []setting[Config]{
	knob("amqp-url", "AMQP_URL", DefaultAMQPURL, "RabbitMQ `URL`, or a cluster's nodes as a comma-separated list (each session dials the next)", func(c *Config) *string { return &c.AMQPURL }),
	knob("queue", "", DefaultQueue, "main queue; .retry .unknown .held .failed .dead derive from it", func(c *Config) *string { return &c.Queue }),
	knob("retry-delay", "", DefaultRetryDelay, "retry queue TTL before a NOT_SENT message comes back (must match the declared topology)", func(c *Config) *time.Duration { return &c.RetryDelay }),
	knob("max-attempts", "", DefaultMaxAttempts, "send attempts of a NOT_SENT message before it is dead-lettered", func(c *Config) *int { return &c.MaxAttempts }),
	knob("retry-max-delay", "RETRY_MAX_DELAY", DefaultRetryMaxDelay, "longest retry delay a vendor's Retry-After may ask for; also the retry queue's x-message-ttl (must match the declared topology)", func(c *Config) *time.Duration { return &c.RetryMaxDelay }),
	knob("queue-type", "QUEUE_TYPE", DefaultQueueType, "queue type of all six queues: classic | quorum (must match the queues on the broker)", func(c *Config) *string { return &c.QueueType }),
	knob("delivery-limit", "DELIVERY_LIMIT", DefaultDeliveryLimit, "quorum only: dead-letter a message after this many unacked deliveries (a message that keeps crashing the worker)", func(c *Config) *int { return &c.DeliveryLimit }),
	inverted("single-active-consumer", "SINGLE_ACTIVE_CONSUMER", "declare the main queue with single active consumer (false only for the lab's negative control)", func(c *Config) *bool { return &c.DisableSingleActiveConsumer }),
	knob("competing-local-ledger-ok", "COMPETING_LOCAL_LEDGER_OK", false, "allow -single-active-consumer=false with a bbolt ledger, which can send twice (only for the lab's negative control; docs/deployment.md)", func(c *Config) *bool { return &c.CompetingLocalLedgerOK }),
	knob("dead-letter-at-most-once", "", false, "quorum only: dead-letter at most once, RabbitMQ's default (a hop into a queue without a leader drops the message; only for the lab's negative control)", func(c *Config) *bool { return &c.DeadLetterAtMostOnce }),
	knob("worker-id", "WORKER_ID", "", "this replica's name in records and logs; empty = the host name", func(c *Config) *string { return &c.WorkerID }),
	knob("ops-addr", "OPS_ADDR", DefaultOpsAddr, "serve /healthz and /metrics on this `host:port`; empty or \""+OpsAddrOff+"\" = none", func(c *Config) *string { return &c.OpsAddr }),
	knob("vendor-status-table", "VENDOR_STATUS_TABLE", "", "vendor status table: YAML/JSON `file` or inline JSON mapping HTTP statuses and business codes to outcomes; empty = 429/408 NOT_SENT, other 4xx REJECTED, 5xx UNKNOWN", func(c *Config) *string { return &c.VendorStatusTable }),

	knob("vendor-reports", "VENDOR_REPORTS", "", "vendor delivery-report API as inline JSON (a profile's reports section); empty = the vendor publishes none", func(c *Config) *string { return &c.VendorReports }),
	knob("report-secret-file", "REPORT_SECRET_FILE", "", "`file` holding the shared secret of pushed delivery reports (required with push)", func(c *Config) *string { return &c.ReportSecretFile }),
	knob("report-journal", "REPORT_JOURNAL", "", "append every authenticated delivery report to this `file`; empty = none", func(c *Config) *string { return &c.ReportJournal }),
	knob("report-sweep", "REPORT_SWEEP", DefaultReportSweep, "how often UNKNOWN entries are swept: reports pulled, the vendor's horizon applied", func(c *Config) *time.Duration { return &c.ReportSweep }),

	knob("vendor-url", "VENDOR_URL", "", "vendor base `URL`, https://host[:port]", func(c *Config) *string { return &c.VendorURL }),
	knob("vendor-addr", "VENDOR_ADDR", "", "dial this `host:port` for the vendor instead of the URL's host; TLS still verifies the URL's host", func(c *Config) *string { return &c.VendorAddr }),
	knob("vendor-token-path", "VENDOR_TOKEN_PATH", vendorapi.TokenPath, "vendor token endpoint `path` (a profile's api.token_path)", func(c *Config) *string { return &c.VendorAPI.TokenPath }),
	knob("vendor-token-auth", "VENDOR_TOKEN_AUTH", vendorapi.TokenAuthBasic, "token call authentication: basic (HTTP Basic) | form (OAuth2 client credentials, form-encoded body)", func(c *Config) *string { return &c.VendorAPI.TokenAuth }),
	knob("vendor-send-path", "VENDOR_SEND_PATH", vendorapi.MessagePath, "vendor send endpoint `path` (api.send_path)", func(c *Config) *string { return &c.VendorAPI.SendPath }),
	knob("vendor-refkey-field", "VENDOR_REFKEY_FIELD", vendorapi.DefaultRefKeyField, "send body JSON `key` carrying the refkey (api.refkey_field)", func(c *Config) *string { return &c.VendorAPI.RefKeyField }),
	knob("vendor-code-field", "VENDOR_CODE_FIELD", vendorapi.DefaultCodeField, "send answer JSON `key` carrying the business code (api.code_field)", func(c *Config) *string { return &c.VendorAPI.CodeField }),
	knob("ca-file", "VENDOR_CA_FILE", "", "PEM `file` of CAs to verify the vendor against; empty = system roots", func(c *Config) *string { return &c.CAFile }),
	knob("client-id", "VENDOR_CLIENT_ID", "", "vendor client id for the token call (the secret is read only from the environment)", func(c *Config) *string { return &c.ClientID }),
	secret("VENDOR_CLIENT_SECRET", func(c *Config) *string { return &c.ClientSecret }),
	knob("strategy", "", DefaultStrategy, "HTTP client strategy: per-request | per-request-resume (per-request with a shared TLS session cache) | pooled | shared-closing (one client, a new connection per POST)", func(c *Config) *string { return &c.Strategy }),
	knob("tls-max", "", DefaultTLSMax, "highest TLS version of the per-request and shared-closing strategies: 1.2 | 1.3 (pooled is never capped; the lab passes 1.2 as in the case)", func(c *Config) *string { return &c.TLSMax }),
	knob("idle-conn-timeout", "", DefaultIdleConnTimeout, "pooled: close idle connections after this; keep it at least one RTT below the vendor's keepalive_timeout", func(c *Config) *time.Duration { return &c.IdleConnTimeout }),
	knob("response-timeout", "", DefaultResponseTimeout, "whole send call, body included (a timeout is UNKNOWN)", func(c *Config) *time.Duration { return &c.ResponseTimeout }),
	knob("dial-timeout", "", DefaultDialTimeout, "TCP connect timeout (vendor and broker)", func(c *Config) *time.Duration { return &c.DialTimeout }),
	knob("tls-handshake-timeout", "", DefaultTLSHandshakeTimeout, "TLS handshake timeout", func(c *Config) *time.Duration { return &c.TLSHandshakeTimeout }),
	knob("client-cert-file", "CLIENT_CERT_FILE", "", "PEM `file` of the client certificate for mutual TLS (with -client-key-file)", func(c *Config) *string { return &c.ClientCertFile }),
	knob("client-key-file", "CLIENT_KEY_FILE", "", "PEM `file` of the client certificate's key (never logged)", func(c *Config) *string { return &c.ClientKeyFile }),
	knob("http-version", "HTTP_VERSION", DefaultHTTPVersion, "HTTP version offered to the vendor: 1.1 | 2 (h2 through ALPN; https only)", func(c *Config) *string { return &c.HTTPVersion }),
	knob("concurrency", "CONCURRENCY", DefaultConcurrency, "messages handled at once (sends in flight; the prefetch is one more, and above 1 also max(2, N/4) for acks gathered into multiple acks); above 1 the queue order is not kept", func(c *Config) *int { return &c.Concurrency }),
	knob("send-interval", "SEND_INTERVAL", time.Duration(0), "take a message no sooner than this after the previous one: this worker's share of the vendor's rate limit (active workers / sends per second); 0 = no pacing", func(c *Config) *time.Duration { return &c.SendInterval }),
	knob("pool-size", "POOL_SIZE", 0, "pooled: idle connections kept per host; 0 = concurrency (2 is Go's default, the classic pitfall)", func(c *Config) *int { return &c.PoolSize }),
	knob("correlation-header", "VENDOR_CORRELATION_HEADER", DefaultCorrelationHeader, "request header carrying the refkey for logs (not an idempotency key)", func(c *Config) *string { return &c.CorrelationHeader }),
	knob("unsafe-allow-transport-replay", "UNSAFE_ALLOW_TRANSPORT_REPLAY", false, "UNSAFE, tests and negative controls only: let Go's transport re-send a request the vendor may have processed (an HTTP/2 reset with PROTOCOL_ERROR after the body), so a notification can be sent twice (docs/outcomes.md)", func(c *Config) *bool { return &c.UnsafeAllowTransportReplay }),
	knob("idempotency-header", "", DefaultIdempotencyHeader, "request header carrying the refkey as an idempotency key; empty = none (only for a vendor that de-duplicates on it)", func(c *Config) *string { return &c.IdempotencyHeader }),

	knob("ledger", "LEDGER", DefaultLedgerPath, "attempt ledger `spec`: a bbolt file path (one replica) or a postgres:// URL (shared by every replica)", func(c *Config) *string { return &c.LedgerPath }),
	knob("ledger-retention", "LEDGER_RETENTION", DefaultLedgerRetention, "prune ledger entries not updated for this long, hourly", func(c *Config) *time.Duration { return &c.LedgerRetention }),
	knob("ledger-ephemeral-ok", "LEDGER_EPHEMERAL_OK", false, "start in a container although the bbolt ledger is not on a mounted volume (it is lost with the container)", func(c *Config) *bool { return &c.LedgerEphemeralOK }),
	knob("records", "", "", "append one JSON line per handled message to this `file`; empty = none", func(c *Config) *string { return &c.RecordsPath }),
	knob("max-messages", "", 0, "exit 0 after this many handled messages; 0 = run until SIGTERM/SIGINT", func(c *Config) *int { return &c.MaxMessages }),

	knob("window-start", "", DefaultWindowStart, "send window opening for ad messages, `HH:MM`", func(c *Config) *string { return &c.WindowStart }),
	knob("window-end", "", DefaultWindowEnd, "send window closing for ad messages, `HH:MM` (exclusive)", func(c *Config) *string { return &c.WindowEnd }),
	knob("window-zone", "", DefaultWindowZone, "send window time zone (IANA name)", func(c *Config) *string { return &c.WindowZone }),
	instant("clock-start", "", "start the worker's clock at this RFC 3339 `time` (then it runs at real speed); empty = host clock", func(c *Config) *time.Time { return &c.ClockStart }),

	knob("publish-timeout", "", DefaultPublishTimeout, "one re-publish including its broker confirm", func(c *Config) *time.Duration { return &c.PublishTimeout }),
	knob("ledger-timeout", "", DefaultLedgerTimeout, "deadline of each ledger Begin and Finish; a Begin past it sends nothing (docs/deployment.md)", func(c *Config) *time.Duration { return &c.LedgerTimeout }),
	knob("send-fence", "", DefaultSendFence, "refuse a send (NOT_SENT) that would start longer than this after its Begin: a frozen worker; must exceed -ledger-timeout (docs/deployment.md)", func(c *Config) *time.Duration { return &c.SendFence }),
	knob("reconnect-max", "", DefaultReconnectMax, "broker reconnect backoff interval cap (doubles from 250ms; each delay within ±50%)", func(c *Config) *time.Duration { return &c.ReconnectMax }),
	knob("summary-every", "", DefaultSummaryEvery, "log an info summary line every N handled messages", func(c *Config) *int { return &c.SummaryEvery }),
	knob("log-level", "LOG_LEVEL", DefaultLogLevel, "debug | info | warn | error (debug logs one line per message)", func(c *Config) *string { return &c.LogLevel }),
	knob("cpu-profile", "", "", "write a Go CPU profile (pprof) of the whole run to `file`; empty = none", func(c *Config) *string { return &c.CPUProfile }),
}

// directSettings are the direct subcommand's own flags (DirectOptions),
// besides settings.
var directSettings = []setting[DirectOptions]{
	knob("count", "", 1000, "measured sends", func(o *DirectOptions) *int { return &o.Count }),
	knob("warmup", "", 50, "sends made first and not measured", func(o *DirectOptions) *int { return &o.Warmup }),
	knob("refkey-prefix", "", "direct", "refkeys are PREFIX-N (warm-up PREFIX-wN)", func(o *DirectOptions) *string { return &o.RefKeyPrefix }),
}
