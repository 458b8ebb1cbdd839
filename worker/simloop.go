package worker

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// SimLoop runs the worker's consume loop as Run wires it (newConsumer:
// the Handler over the metrics wrapper of the ledger, the session loop,
// serve, the ledger wait, the channel generations) on parts the caller
// provides: the broker, the loop's clock and sleeps, and the backoff's
// randomness. It exists for the deterministic simulator (worker/sim),
// which runs it against its models and steps it from one wait to the
// next; a worker calls Run. Records are discarded (the simulator reads
// the log), there are no metrics and no /healthz.
type SimLoop struct {
	// Config is the worker's configuration; WithDefaults is applied and
	// Validate is not (no broker URL, vendor or ledger path is needed).
	// Config.Logger receives every line of the loop and the Handler
	// (nil: discarded).
	Config Config
	// Sender, Ledger (the store, wrapped in the worker's timedLedger as
	// Run does), Window and Clock are the Handler's (HandlerConfig).
	Sender Sender
	Ledger Ledger
	Window Window
	Clock  window.Clock
	// Dialer opens the broker sessions (required).
	Dialer BrokerDialer
	// Now reads the loop's clock (a session's age, for the backoff's
	// reset); nil is time.Now.
	Now func() time.Time
	// Sleep is every wait of the loop and serve: it waits d, or until ctx
	// is done or stop (nil: none) is closed, and reports whether the
	// whole delay elapsed. nil is a real timer.
	Sleep func(ctx context.Context, d time.Duration, stop <-chan struct{}) bool
	// Jitter is the backoff's randomness, uniform in [0, 1); nil is
	// rand.Float64.
	Jitter func() float64
	// Idle, when set, is called each time serve is about to wait.
	// inflight is how many of its handlers (Go) have not finished. In its
	// main wait (draining false) only a delivery (taken while inflight is
	// below Config.Concurrency), a handler finishing, the session's loss
	// or ctx can wake it (with Config.SendInterval, also the pacer's real
	// timer: the simulator does not pace); draining, it waits for the
	// handlers in flight only, before it returns.
	Idle func(inflight int, draining bool)
	// Go, when set, starts each handler of serve: f handles one delivery
	// (ack included) and, as its last step, hands it to serve, which
	// wakes. nil runs f on a goroutine of the worker's own at once; the
	// simulator holds f until its scheduler runs it, one at a time.
	Go func(f func())
	// AfterFunc, when set, replaces time.AfterFunc for the ack batcher's
	// flush delay (AckFlushDelay, at Config.Concurrency above 1): f runs
	// once d has passed unless Stop came first. The simulator runs f when
	// its clock passes d.
	AfterFunc func(d time.Duration, f func()) interface{ Stop() bool }
}

// Run runs the loop until ctx is done (nil), or a fatal error: the broker
// refused the topology for good (wraps ErrTopology) or the Handler
// failed otherwise than the ledger (a ledger failure is waited out, as
// Run does).
func (s SimLoop) Run(ctx context.Context) error {
	cfg := s.Config.WithDefaults()
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := newConsumer(cfg, log, consumerParts{sender: s.Sender, ledger: s.Ledger, window: s.Window, clock: s.Clock,
		records: records.NewWriter(io.Discard), dialer: s.Dialer})
	if s.Now != nil {
		c.now = s.Now
	}
	c.sleeper, c.jitter, c.idle, c.spawn, c.afterFunc = s.Sleep, s.Jitter, s.Idle, s.Go, s.AfterFunc
	return c.loop(ctx)
}
