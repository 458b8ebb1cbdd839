package worker

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// ErrConfig is wrapped by every error Config.Validate returns.
var ErrConfig = errors.New("invalid config")

// Validate checks c (after WithDefaults) and returns every problem found,
// joined, each wrapping ErrConfig. It names the known values for a bad
// strategy, TLS version or log level. It reads no file and dials nothing.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if err := validAMQPURLs(c.AMQPURL); err != nil {
		bad("%w", err)
	}
	if c.Queue == "" {
		bad("queue: empty")
	}
	u, err := url.Parse(c.VendorURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		bad("vendor url %q: want https://host[:port] (or http:// for the lab's plain-HTTP runs)", c.VendorURL)
	}
	if err := c.VendorAPI.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrConfig, err))
	}
	if (c.ClientCertFile == "") != (c.ClientKeyFile == "") {
		bad("client certificate: cert file %q and key file set=%v: give both or neither", c.ClientCertFile, c.ClientKeyFile != "")
	}
	if c.ClientCertFile != "" && err == nil && u.Scheme != "https" {
		bad("client certificate with vendor url scheme %q: mutual TLS needs https://", u.Scheme)
	}
	if _, err := ParseHTTPVersion(c.HTTPVersion); err != nil {
		bad("http version: %w", err)
	}
	if c.Concurrency < 1 || c.Concurrency > MaxConcurrency {
		bad("concurrency %d: want 1..%d", c.Concurrency, MaxConcurrency)
	}
	if c.PoolSize < 0 {
		bad("pool size %d: want >= 0 (0 = concurrency)", c.PoolSize)
	}
	if c.ClientID == "" {
		bad("client id: empty (flag -client-id or VENDOR_CLIENT_ID)")
	}
	if c.ClientSecret == "" {
		bad("client secret: empty (environment VENDOR_CLIENT_SECRET)")
	}
	if known := StrategyNames(); !slices.Contains(known, c.Strategy) {
		bad("strategy %q: known strategies: %s", c.Strategy, strings.Join(known, ", "))
	}
	if _, err := ParseTLSVersion(c.TLSMax); err != nil {
		bad("tls max: %w", err)
	}
	if _, err := ParseLogLevel(c.LogLevel); err != nil {
		bad("log level: %w", err)
	}
	if c.MaxAttempts < 1 {
		bad("max attempts %d: want >= 1", c.MaxAttempts)
	}
	if _, err := queues.ParseQueueType(c.QueueType); err != nil {
		bad("queue type: %w", err)
	}
	if c.DeliveryLimit < 0 {
		bad("delivery limit %d: want >= 1", c.DeliveryLimit)
	}
	if err := c.validateReports(); err != nil {
		bad("%w", err)
	}
	if c.RetryDelay > c.RetryMaxDelay {
		bad("retry delay %v above retry max delay %v", c.RetryDelay, c.RetryMaxDelay)
	}
	if c.MaxMessages < 0 {
		bad("max messages %d: want >= 0", c.MaxMessages)
	}
	if _, err := ledger.SpecKind(c.LedgerPath); err != nil {
		bad("ledger: %v", err)
	}
	if kind, _ := ledger.SpecKind(c.LedgerPath); kind == ledger.KindBolt && c.DisableSingleActiveConsumer && !c.CompetingLocalLedgerOK {
		bad("single active consumer off with the bbolt ledger %s: several active consumers each with its own ledger can send one message twice; use a shared postgres:// ledger (docs/deployment.md, Several active workers)", c.LedgerPath)
	}
	if c.SendInterval < 0 {
		bad("send interval %v: want >= 0 (0 = no pacing)", c.SendInterval)
	}
	if c.LedgerRetention <= 0 {
		bad("ledger retention %v: want > 0, for example 168h", c.LedgerRetention)
	}
	for name, d := range map[string]time.Duration{
		"retry delay": c.RetryDelay, "retry max delay": c.RetryMaxDelay, "idle conn timeout": c.IdleConnTimeout,
		"response timeout": c.ResponseTimeout, "dial timeout": c.DialTimeout,
		"tls handshake timeout": c.TLSHandshakeTimeout, "publish timeout": c.PublishTimeout,
		"ledger timeout": c.LedgerTimeout, "send fence": c.SendFence,
		"reconnect min": c.ReconnectMin, "reconnect max": c.ReconnectMax,
	} {
		if d <= 0 {
			bad("%s %v: want > 0", name, d)
		}
	}
	if c.ReconnectMax < c.ReconnectMin {
		bad("reconnect max %v below reconnect min %v", c.ReconnectMax, c.ReconnectMin)
	}
	if c.SendFence <= c.LedgerTimeout {
		bad("send fence %v: want more than the ledger timeout %v (a Begin at its deadline must not be fenced)", c.SendFence, c.LedgerTimeout)
	}
	return errors.Join(errs...)
}
