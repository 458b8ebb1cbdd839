// Command notifier-worker consumes notifications from RabbitMQ (one
// consumer, prefetch -concurrency, 1 by default), sends each to the messaging vendor over HTTPS and
// routes it to exactly one place (see package worker and docs/outcomes.md).
//
// "notifier-worker ledger ..." reads and resolves the attempt ledger;
// "notifier-worker direct ..." calls the vendor client in a loop without
// broker or ledger (the lab's DRIVER=direct).
//
// Configuration is by flags, each with an environment fallback where
// noted; the vendor secret is read ONLY from VENDOR_CLIENT_SECRET. Run
// with -h for the list.
//
// Exit status: 0 after SIGTERM/SIGINT (the in-flight message finished and
// acked) or after -max-messages handled messages; 2 for a bad flag or
// configuration (nothing started); 3 when the broker refused the queue
// topology for good (a queue exists with other arguments, for example
// another -queue-type: migrate or delete it; restarting cannot help); 1 for
// any other error (ledger write failure, unreadable CA or ledger file).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
	_ "time/tzdata" // the image is FROM scratch: no zoneinfo on disk

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// errUsage marks a flag or configuration error (exit 2).
var errUsage = errors.New("usage")

func main() {
	if len(os.Args) > 1 && os.Args[1] == "ledger" {
		os.Exit(ledgerMain(context.Background(), os.Args[2:], os.Getenv, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "direct" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		os.Exit(directMain(ctx, os.Args[2:], os.Getenv, os.Stdout, os.Stderr))
	}
	opts, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "notifier-worker: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process at once
	}()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintf(os.Stderr, "notifier-worker: %v\n", err)
		os.Exit(exitCode(err))
	}
}

// exitCode maps a run error to the exit status of the package doc.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, worker.ErrConfig):
		return 2
	case errors.Is(err, worker.ErrTopology):
		return 3
	}
	return 1
}

func run(ctx context.Context, cfg worker.Config) error {
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return fmt.Errorf("create cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	return worker.Run(ctx, cfg)
}

// parseFlags parses args into a Config, taking fallbacks from getenv. The
// secret comes only from VENDOR_CLIENT_SECRET. Errors wrap errUsage, or are
// flag.ErrHelp for -h.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (worker.Config, error) {
	return parseFlagsWith("notifier-worker", args, getenv, stderr, nil)
}

// parseFlagsWith is parseFlags for the command or a subcommand named name;
// extra, when not nil, adds the subcommand's own flags before parsing.
func parseFlagsWith(name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet)) (worker.Config, error) {
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	var c worker.Config
	var clockStart string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `notifier-worker: consume notifications from RabbitMQ (one consumer,
prefetch -concurrency), send each to the messaging vendor over HTTPS, and route it to
exactly one place: acked (SENT), failed, retry, unknown, held or dead-letter
queue. The vendor secret is read only from VENDOR_CLIENT_SECRET.

Usage: notifier-worker [flags]
       notifier-worker ledger list|show|resolve ...   read the attempt ledger, resolve an UNKNOWN (ledger -h)
       notifier-worker direct -count N ...            the client strategies in a loop, no broker (direct -h)

`)
		fs.PrintDefaults()
	}
	if extra != nil {
		extra(fs) // may replace fs.Usage
	}
	fs.StringVar(&c.AMQPURL, "amqp-url", env("AMQP_URL", worker.DefaultAMQPURL), "RabbitMQ `URL` [env AMQP_URL]")
	fs.StringVar(&c.Queue, "queue", worker.DefaultQueue, "main queue; .retry .unknown .held .failed .dead derive from it")
	fs.DurationVar(&c.RetryDelay, "retry-delay", worker.DefaultRetryDelay, "retry queue TTL before a NOT_SENT message comes back (must match the declared topology)")
	fs.IntVar(&c.MaxAttempts, "max-attempts", worker.DefaultMaxAttempts, "send attempts of a NOT_SENT message before it is dead-lettered")
	fs.StringVar(&c.VendorURL, "vendor-url", env("VENDOR_URL", ""), "vendor base `URL`, https://host[:port] [env VENDOR_URL]")
	fs.StringVar(&c.VendorAddr, "vendor-addr", env("VENDOR_ADDR", ""), "dial this `host:port` for the vendor instead of the URL's host; TLS still verifies the URL's host [env VENDOR_ADDR]")
	fs.StringVar(&c.CAFile, "ca-file", env("VENDOR_CA_FILE", ""), "PEM `file` of CAs to verify the vendor against; empty = system roots [env VENDOR_CA_FILE]")
	fs.StringVar(&c.VendorAPI.TokenPath, "vendor-token-path", vendorapi.TokenPath, "vendor token endpoint `path` (a profile's api.token_path) [env VENDOR_TOKEN_PATH]")
	fs.StringVar(&c.VendorAPI.TokenAuth, "vendor-token-auth", vendorapi.TokenAuthBasic, "token call authentication: basic (HTTP Basic) | form (OAuth2 client credentials, form-encoded body) [env VENDOR_TOKEN_AUTH]")
	fs.StringVar(&c.VendorAPI.SendPath, "vendor-send-path", vendorapi.MessagePath, "vendor send endpoint `path` (api.send_path) [env VENDOR_SEND_PATH]")
	fs.StringVar(&c.VendorAPI.RefKeyField, "vendor-refkey-field", vendorapi.DefaultRefKeyField, "send body JSON `key` carrying the refkey (api.refkey_field) [env VENDOR_REFKEY_FIELD]")
	fs.StringVar(&c.VendorAPI.CodeField, "vendor-code-field", vendorapi.DefaultCodeField, "send answer JSON `key` carrying the business code (api.code_field) [env VENDOR_CODE_FIELD]")
	fs.StringVar(&c.ClientID, "client-id", env("VENDOR_CLIENT_ID", ""), "vendor client id for the token call [env VENDOR_CLIENT_ID]; the secret is read only from env VENDOR_CLIENT_SECRET")
	fs.StringVar(&c.Strategy, "strategy", worker.DefaultStrategy, "HTTP client strategy: per-request | pooled")
	fs.StringVar(&c.ClientCertFile, "client-cert-file", "", "PEM `file` of the client certificate for mutual TLS (with -client-key-file) [env CLIENT_CERT_FILE]")
	fs.StringVar(&c.ClientKeyFile, "client-key-file", "", "PEM `file` of the client certificate's key (never logged) [env CLIENT_KEY_FILE]")
	fs.StringVar(&c.HTTPVersion, "http-version", worker.DefaultHTTPVersion, "HTTP version offered to the vendor: 1.1 | 2 (h2 through ALPN; https only) [env HTTP_VERSION]")
	fs.IntVar(&c.Concurrency, "concurrency", worker.DefaultConcurrency, "messages handled at once (prefetch and sends in flight); above 1 the queue order is not kept [env CONCURRENCY]")
	fs.IntVar(&c.PoolSize, "pool-size", 0, "pooled: idle connections kept per host; 0 = concurrency (2 is Go's default, the classic pitfall) [env POOL_SIZE]")
	fs.StringVar(&c.TLSMax, "tls-max", worker.DefaultTLSMax, "highest TLS version of the per-request strategy: 1.2 | 1.3 (pooled is never capped; the lab passes 1.2 as in the case)")
	fs.DurationVar(&c.IdleConnTimeout, "idle-conn-timeout", worker.DefaultIdleConnTimeout, "pooled: close idle connections after this; keep it at least one RTT below the vendor's keepalive_timeout")
	fs.DurationVar(&c.ResponseTimeout, "response-timeout", worker.DefaultResponseTimeout, "whole send call, body included (a timeout is UNKNOWN)")
	fs.DurationVar(&c.DialTimeout, "dial-timeout", worker.DefaultDialTimeout, "TCP connect timeout (vendor and broker)")
	fs.DurationVar(&c.TLSHandshakeTimeout, "tls-handshake-timeout", worker.DefaultTLSHandshakeTimeout, "TLS handshake timeout")
	fs.StringVar(&c.CorrelationHeader, "correlation-header", worker.DefaultCorrelationHeader, "request header carrying the refkey for logs (not an idempotency key) [env VENDOR_CORRELATION_HEADER]")
	fs.StringVar(&c.IdempotencyHeader, "idempotency-header", worker.DefaultIdempotencyHeader, "request header carrying the refkey as an idempotency key; empty = none (only for a vendor that de-duplicates on it)")
	fs.StringVar(&c.LedgerPath, "ledger", env("LEDGER", worker.DefaultLedgerPath), "attempt ledger `spec`: a bbolt file path (one replica) or a postgres:// URL (shared by every replica) [env LEDGER]")
	fs.DurationVar(&c.LedgerRetention, "ledger-retention", envDuration(getenv, "LEDGER_RETENTION", worker.DefaultLedgerRetention), "prune ledger entries not updated for this long, hourly [env LEDGER_RETENTION]")
	fs.BoolVar(&c.LedgerEphemeralOK, "ledger-ephemeral-ok", getenv("LEDGER_EPHEMERAL_OK") == "true", "start in a container although the bbolt ledger is not on a mounted volume (it is lost with the container) [env LEDGER_EPHEMERAL_OK=true]")
	fs.StringVar(&c.RecordsPath, "records", "", "append one JSON line per handled message to this `file`; empty = none")
	fs.IntVar(&c.MaxMessages, "max-messages", 0, "exit 0 after this many handled messages; 0 = run until SIGTERM/SIGINT")
	fs.StringVar(&c.WindowStart, "window-start", worker.DefaultWindowStart, "send window opening for ad messages, `HH:MM`")
	fs.StringVar(&c.WindowEnd, "window-end", worker.DefaultWindowEnd, "send window closing for ad messages, `HH:MM` (exclusive)")
	fs.StringVar(&c.WindowZone, "window-zone", worker.DefaultWindowZone, "send window time zone (IANA name)")
	fs.StringVar(&clockStart, "clock-start", "", "start the worker's clock at this RFC 3339 `time` (then it runs at real speed); empty = host clock")
	fs.DurationVar(&c.PublishTimeout, "publish-timeout", worker.DefaultPublishTimeout, "one re-publish including its broker confirm")
	fs.DurationVar(&c.LedgerTimeout, "ledger-timeout", worker.DefaultLedgerTimeout, "deadline of each ledger Begin and Finish; a Begin past it sends nothing (docs/deployment.md)")
	fs.DurationVar(&c.SendFence, "send-fence", worker.DefaultSendFence, "refuse a send (NOT_SENT) that would start longer than this after its Begin: a frozen worker; must exceed -ledger-timeout (docs/deployment.md)")
	fs.DurationVar(&c.ReconnectMax, "reconnect-max", worker.DefaultReconnectMax, "broker reconnect backoff interval cap (doubles from 250ms; each delay within ±50%)")
	fs.IntVar(&c.SummaryEvery, "summary-every", worker.DefaultSummaryEvery, "log an info summary line every N handled messages")
	fs.StringVar(&c.LogLevel, "log-level", env("LOG_LEVEL", worker.DefaultLogLevel), "debug | info | warn | error (debug logs one line per message) [env LOG_LEVEL]")
	fs.StringVar(&c.CPUProfile, "cpu-profile", "", "write a Go CPU profile (pprof) of the whole run to `file`; empty = none")
	fs.DurationVar(&c.RetryMaxDelay, "retry-max-delay", worker.DefaultRetryMaxDelay, "longest retry delay a vendor's Retry-After may ask for; also the retry queue's x-message-ttl (must match the declared topology) [env RETRY_MAX_DELAY]")
	fs.StringVar(&c.QueueType, "queue-type", worker.DefaultQueueType, "queue type of all six queues: classic | quorum (must match the queues on the broker) [env QUEUE_TYPE]")
	fs.IntVar(&c.DeliveryLimit, "delivery-limit", worker.DefaultDeliveryLimit, "quorum only: dead-letter a message after this many unacked deliveries (a message that keeps crashing the worker) [env DELIVERY_LIMIT]")
	sac := fs.Bool("single-active-consumer", true, "declare the main queue with single active consumer (false only for the lab's negative control) [env SINGLE_ACTIVE_CONSUMER]")
	host, _ := os.Hostname()
	fs.StringVar(&c.WorkerID, "worker-id", host, "this replica's name in records and logs [env WORKER_ID]")
	fs.StringVar(&c.OpsAddr, "ops-addr", worker.DefaultOpsAddr, "serve /healthz and /metrics on this `host:port`; empty or \"off\" = none [env OPS_ADDR]")
	fs.StringVar(&c.VendorStatusTable, "vendor-status-table", "", "vendor status table: YAML/JSON `file` or inline JSON mapping HTTP statuses and business codes to outcomes; empty = 429/408 NOT_SENT, other 4xx REJECTED, 5xx UNKNOWN [env VENDOR_STATUS_TABLE]")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	if err := envFallbacks(fs, getenv, map[string]string{
		"retry-max-delay": "RETRY_MAX_DELAY", "queue-type": "QUEUE_TYPE", "delivery-limit": "DELIVERY_LIMIT",
		"single-active-consumer": "SINGLE_ACTIVE_CONSUMER", "worker-id": "WORKER_ID", "ops-addr": "OPS_ADDR",
		"vendor-status-table": "VENDOR_STATUS_TABLE",
		"client-cert-file":    "CLIENT_CERT_FILE", "client-key-file": "CLIENT_KEY_FILE",
		"http-version": "HTTP_VERSION", "concurrency": "CONCURRENCY", "pool-size": "POOL_SIZE",
		// The vendor API's shape, named as in docs/worker-contract.md.
		"vendor-token-path": "VENDOR_TOKEN_PATH", "vendor-token-auth": "VENDOR_TOKEN_AUTH",
		"vendor-send-path": "VENDOR_SEND_PATH", "vendor-refkey-field": "VENDOR_REFKEY_FIELD",
		"vendor-code-field": "VENDOR_CODE_FIELD", "correlation-header": "VENDOR_CORRELATION_HEADER",
	}); err != nil {
		return c, err
	}
	c.DisableSingleActiveConsumer = !*sac
	if c.OpsAddr == "off" {
		c.OpsAddr = ""
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if err := checkLedgerEnv(getenv); err != nil {
		return c, err
	}
	if clockStart != "" {
		t, err := time.Parse(time.RFC3339Nano, clockStart)
		if err != nil {
			return c, fmt.Errorf("%w: clock-start %q: want RFC 3339, like 2026-11-30T20:49:50+09:00", errUsage, clockStart)
		}
		c.ClockStart = t
	}
	c.ClientSecret = getenv("VENDOR_CLIENT_SECRET")
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	return c, nil
}

// envFallbacks sets each flag of envs (flag name -> environment variable)
// that was not given on the command line from its variable, when that is
// set and not empty. Errors wrap errUsage and name the variable and the
// flag's parse error.
func envFallbacks(fs *flag.FlagSet, getenv func(string) string, envs map[string]string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, key := range envs {
		v := getenv(key)
		if given[name] || v == "" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("%w: environment %s=%q: %w", errUsage, key, v, err)
		}
	}
	return nil
}
