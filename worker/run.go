package worker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// Run runs the worker until ctx is done (SIGTERM/SIGINT in the command) or
// cfg.MaxMessages messages were handled, and returns nil then: the in-flight
// message is finished, recorded and acked first, and the vendor client, the
// broker connection, the ledger and the records file are closed.
//
// Broker connection loss is not an error: Run reconnects with a capped,
// jittered backoff. Errors: an invalid cfg (wraps ErrConfig), an unreadable
// CA file, the ledger cannot be opened (locked by another worker, 1 s), the
// records file cannot be opened, the broker refused the topology for good
// (wraps ErrTopology), or the ledger could not be written (wraps ErrLedger;
// the message at hand was nacked with requeue and not sent).
func Run(ctx context.Context, cfg Config) (err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Logger
	if log == nil {
		lvl, _ := ParseLogLevel(cfg.LogLevel)
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	}
	win, err := window.Parse(cfg.WindowStart, cfg.WindowEnd, cfg.WindowZone)
	if err != nil {
		return fmt.Errorf("parse send window: %w", err)
	}
	var clock window.Clock = window.System{}
	if !cfg.ClockStart.IsZero() {
		clock = window.StartedAt(cfg.ClockStart)
	}
	client, err := NewVendorClient(cfg)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := client.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close vendor client: %w", cerr)
		}
	}()
	led, stopPrune, err := openLedgerStore(ctx, cfg, clock, log)
	if err != nil {
		return err
	}
	defer func() {
		stopPrune()
		if cerr := led.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close ledger: %w", cerr)
		}
	}()
	recs, err := records.Open(cfg.RecordsPath)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := recs.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close records: %w", cerr)
		}
	}()

	metrics := NewMetrics()
	c := newConsumer(cfg, log, consumerParts{sender: client, ledger: led, window: win, clock: clock, records: recs, metrics: metrics})
	log.Info("starting", "config", cfg, "shutdown_grace", ShutdownGrace(cfg).String())
	if cfg.UnsafeAllowTransportReplay {
		log.Warn(UnsafeReplayWarning, "flag", "unsafe-allow-transport-replay")
	}
	push, stopReports, err := startReports(ctx, cfg, led, client, clock, metrics, log)
	if err != nil {
		return err
	}
	defer stopReports()
	if cfg.OpsAddr != "" {
		ops := opsHandler(&c.health, led, metrics)
		if push != nil {
			ops = withReports(ops, push)
		}
		stop, err := startOps(cfg.OpsAddr, ops, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	err = c.loop(ctx)
	c.stats.log(log, time.Now())
	if me, ok := errors.AsType[*queues.MismatchError](err); ok {
		log.Error("queue exists with other arguments; migrate or delete it, then start again",
			"queue", me.Queue, "argument", me.Argument, "on_broker", me.Current, "declared", me.Declared, "error", err.Error())
		return err
	}
	if err != nil {
		log.Error("stopping on error", "error", err.Error())
		return err
	}
	log.Info("stopped", "handled", c.stats.handled)
	return nil
}

// consumerParts are what newConsumer wires besides the Config.
type consumerParts struct {
	sender Sender
	// ledger is the store; the Handler gets it inside timedLedger.
	ledger  Ledger
	window  Window
	clock   window.Clock
	records *records.Writer
	metrics *Metrics // nil = none
	// dialer opens the broker sessions; nil = RabbitMQ (amqpDialer).
	dialer BrokerDialer
}

// newConsumer wires the consume loop as Run runs it: the Handler over
// timedLedger, its timeouts, fences and retry delays from cfg (after
// WithDefaults), group commit where it pairs (groupCommit), the pacer,
// wall time and p's broker.
func newConsumer(cfg Config, log *slog.Logger, p consumerParts) *consumer {
	topo := cfg.Topology()
	dialer := p.dialer
	if dialer == nil {
		dialer = &amqpDialer{cfg: cfg, topo: topo}
	}
	return &consumer{
		cfg:  cfg,
		log:  log,
		pace: pacer{interval: cfg.SendInterval},
		handler: NewHandler(HandlerConfig{
			Sender:         p.sender,
			Ledger:         timedLedger{Ledger: p.ledger, m: p.metrics},
			Window:         p.window,
			Clock:          p.clock,
			Names:          topo.Names,
			MaxAttempts:    cfg.MaxAttempts,
			DeliveryLimit:  quorumDeliveryLimit(topo),
			PublishTimeout: cfg.PublishTimeout,
			LedgerTimeout:  cfg.LedgerTimeout,
			SendFence:      cfg.SendFence,
			PostFence:      cfg.SendFence + 3*cfg.ResponseTimeout,
			RetryDelay:     cfg.RetryDelay,
			RetryMaxDelay:  cfg.RetryMaxDelay,
			Replica:        cfg.WorkerID,
			Logger:         log,
			// Finish of one message and Begin of the next in one
			// bbolt transaction (docs/worker.md, Cost per message).
			ReleaseAfterSend: groupCommit(cfg, p.ledger),
		}),
		records:  p.records,
		topology: topo,
		metrics:  p.metrics,
		dialer:   dialer,
		now:      time.Now,
	}
}

// UnsafeReplayWarning is the message of the warning Run logs at start when
// Config.UnsafeAllowTransportReplay is on.
const UnsafeReplayWarning = "UNSAFE: the transport's own replays are on; a notification the vendor may have processed can be sent twice (tests and negative controls only, docs/outcomes.md)"

// PoolSize is the pooled strategy's idle pool for cfg: Config.PoolSize,
// or Config.Concurrency (at least 1) when it is 0.
func PoolSize(cfg Config) int {
	if cfg.PoolSize > 0 {
		return cfg.PoolSize
	}
	return max(cfg.Concurrency, 1)
}

// MaxConns is the pooled strategy's connection cap for cfg: the
// concurrency (never more connections than sends in flight) when the idle
// pool holds them all; 0, no cap, when Config.PoolSize is set below the
// concurrency, as Go's transport defaults are (MaxIdleConnsPerHost 2,
// MaxConnsPerHost 0), so that the pitfall shows as it happens in
// production (docs/studies.md, study A).
func MaxConns(cfg Config) int {
	n := max(cfg.Concurrency, 1)
	if PoolSize(cfg) < n {
		return 0
	}
	return n
}

// NewVendorClient builds the vendor client of cfg (after WithDefaults): the
// named strategy, the CA file as the only roots, the client certificate
// (mutual TLS), the HTTP version, the idle pool (PoolSize), the TLS cap for
// the per-request strategy, the timeouts, the headers, the vendor API's
// shape and the vendor status table. Errors: a VendorAPI that does not
// validate (wraps ErrConfig and vendorapi.ErrAPI), unknown strategy
// (naming the known ones) or HTTP version, unreadable or empty CA file,
// unreadable client certificate or key, a status table that cannot be read or is invalid (wraps ErrConfig and
// vendorapi.ErrStatusTable, naming the field).
func NewVendorClient(cfg Config) (*vendorapi.Client, error) {
	strategies := vendorapi.Strategies()
	newStrategy, ok := strategies[cfg.Strategy]
	if !ok {
		return nil, fmt.Errorf("%w: strategy %q: known strategies: %v", ErrConfig, cfg.Strategy, StrategyNames())
	}
	httpVersion, err := ParseHTTPVersion(cfg.HTTPVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	vc := vendorapi.Config{
		DialTimeout:         cfg.DialTimeout,
		TLSHandshakeTimeout: cfg.TLSHandshakeTimeout,
		ResponseTimeout:     cfg.ResponseTimeout,
		IdleConnTimeout:     cfg.IdleConnTimeout,
		MaxIdleConnsPerHost: PoolSize(cfg),
		MaxConnsPerHost:     MaxConns(cfg),
		HTTPVersion:         httpVersion,
		// The negative control's switch; Run warns when it is on.
		AllowTransportReplay: cfg.UnsafeAllowTransportReplay,
	}
	if cfg.ClientCertFile != "" || cfg.ClientKeyFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.ClientCertFile, cfg.ClientKeyFile)
		if err != nil {
			// The key's bytes are never in the error: LoadX509KeyPair
			// names the files and what failed to parse.
			return nil, fmt.Errorf("load client certificate %s: %w", cfg.ClientCertFile, err)
		}
		vc.ClientCertificates = []tls.Certificate{cert}
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read ca file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("read ca file %s: %w", cfg.CAFile, errors.New("no PEM certificate found"))
		}
		vc.RootCAs = pool
	}
	if cfg.Strategy == vendorapi.PerRequestName || cfg.Strategy == vendorapi.SharedClosingName || cfg.Strategy == vendorapi.PerRequestResumeName {
		v, err := ParseTLSVersion(cfg.TLSMax)
		if err != nil {
			return nil, fmt.Errorf("%w: tls max: %w", ErrConfig, err)
		}
		vc.MaxTLSVersion = v
	}
	if cfg.VendorAddr != "" {
		d := &net.Dialer{Timeout: cfg.DialTimeout}
		addr := cfg.VendorAddr
		vc.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}
	}
	if err := cfg.VendorAPI.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	opts := []vendorapi.Option{vendorapi.WithCorrelationHeader(cfg.CorrelationHeader), vendorapi.WithAPI(cfg.VendorAPI)}
	if cfg.VendorStatusTable != "" {
		table, err := vendorapi.LoadStatusTable(cfg.VendorStatusTable)
		if err != nil {
			return nil, fmt.Errorf("%w: vendor status table: %w", ErrConfig, err)
		}
		opts = append(opts, vendorapi.WithStatusTable(table))
	}
	if cfg.IdempotencyHeader != "" {
		opts = append(opts, vendorapi.WithIdempotencyHeader(cfg.IdempotencyHeader))
	}
	creds := vendorapi.Credentials{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret}
	return vendorapi.NewClient(cfg.VendorURL, creds, newStrategy(vc), opts...), nil
}

// quorumDeliveryLimit is topo's delivery limit when its queues are quorum
// queues (the only ones that count deliveries), else 0.
func quorumDeliveryLimit(topo queues.Topology) int {
	if topo.Type != queues.Quorum {
		return 0
	}
	return topo.DeliveryLimit
}
