package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// ErrStaleDelivery is returned by the ack, nack or reject of a delivery
// whose channel generation is no longer live (its connection or channel was
// lost). The broker has requeued it; acking its tag on another channel
// would ack a different message.
var ErrStaleDelivery = errors.New("delivery from a lost channel")

// ErrTopology wraps a topology declaration the broker refused for good: a
// queue exists with other arguments (a *queues.MismatchError, the broker's
// PRECONDITION_FAILED) or the topology is invalid. The worker logs it in
// one line and stops instead of reconnecting; the command exits 3.
var ErrTopology = errors.New("declare topology")

// generations numbers broker sessions (connection + channels). Exactly one
// generation is live at a time; 0 means none.
type generations struct {
	counter atomic.Uint64
	live    atomic.Uint64
}

// start makes a new generation live and returns it.
func (g *generations) start() uint64 {
	gen := g.counter.Add(1)
	g.live.Store(gen)
	return gen
}

// retire ends gen if it is still the live one.
func (g *generations) retire(gen uint64) { g.live.CompareAndSwap(gen, 0) }

// isLive reports whether gen is the live generation.
func (g *generations) isLive(gen uint64) bool { return gen != 0 && g.live.Load() == gen }

// genAcker ties a delivery to its channel generation: it forwards to the
// delivery's own channel only while that generation is live.
type genAcker struct {
	gen   uint64
	gens  *generations
	inner amqp.Acknowledger
}

var _ amqp.Acknowledger = genAcker{}

func (a genAcker) check(op string, tag uint64) error {
	if !a.gens.isLive(a.gen) {
		return fmt.Errorf("%s tag %d of generation %d: %w", op, tag, a.gen, ErrStaleDelivery)
	}
	return nil
}

// Live reports whether the delivery's channel generation is still live:
// the Handler sends nothing for a delivery whose session is lost
// (docs/deployment.md, Deadlines).
func (a genAcker) Live() bool { return a.gens.isLive(a.gen) }

func (a genAcker) Ack(tag uint64, multiple bool) error {
	if err := a.check("ack", tag); err != nil {
		return err
	}
	return a.inner.Ack(tag, multiple)
}

func (a genAcker) Nack(tag uint64, multiple, requeue bool) error {
	if err := a.check("nack", tag); err != nil {
		return err
	}
	return a.inner.Nack(tag, multiple, requeue)
}

func (a genAcker) Reject(tag uint64, requeue bool) error {
	if err := a.check("reject", tag); err != nil {
		return err
	}
	return a.inner.Reject(tag, requeue)
}

// consumer runs the consume loop over broker sessions.
type consumer struct {
	cfg      Config
	log      *slog.Logger
	handler  *Handler
	records  *records.Writer
	topology queues.Topology
	gens     generations
	stats    stats
	health   health
	metrics  *Metrics // nil = none
	// dialer opens the broker sessions (amqpDialer in Run).
	dialer BrokerDialer
	// now is wall time (tests and the simulator may replace it): the
	// summary's and a session's age.
	now func() time.Time
	// sleeper, when set, replaces sleep for every wait of the loop and of
	// serve (reconnect backoff, ledger wait, requeue pause); jitter, when
	// set, replaces rand.Float64 as the backoff's randomness; idle, when
	// set, is called each time serve is about to wait (SimLoop.Idle);
	// spawn, when set, starts serve's handlers (SimLoop.Go); afterFunc,
	// when set, starts the ack batcher's flush timers (SimLoop.AfterFunc).
	// The simulator's scheduler sets them; Run sets none of them.
	sleeper   func(ctx context.Context, d time.Duration, stop <-chan struct{}) bool
	jitter    func() float64
	idle      func(inflight int, draining bool)
	spawn     func(f func())
	afterFunc func(d time.Duration, f func()) stopper
	// pace spaces the deliveries taken (Config.SendInterval), across
	// sessions.
	pace pacer
}

// sleep waits d, or until ctx is done or stop (may be nil) is closed, on
// c.sleeper when set; it reports whether the whole delay elapsed.
func (c *consumer) sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) bool {
	if c.sleeper != nil {
		return c.sleeper(ctx, d, stop)
	}
	return sleep(ctx, d, stop)
}

// account writes the Record of a handled message (not of a requeued one)
// and logs it.
func (c *consumer) account(ctx context.Context, rec *records.Record, body []byte) {
	rec.CPUMS = ProcessCPUMS()
	if rec.Requeued {
		c.log.Warn("message requeued", "refkey", rec.RefKey, "outcome", rec.Outcome,
			"queue", rec.Queue, "error", rec.Error, "publish_error", rec.PublishError, "ack_error", rec.AckError)
		return
	}
	c.stats.add(rec)
	c.metrics.observe(rec, c.topology.Names.Retry)
	rec.Seq = c.records.LastSeq() + c.stats.handled
	if err := c.records.Write(*rec); err != nil {
		c.log.Error("write record", "seq", rec.Seq, "refkey", rec.RefKey, "error", err)
	}
	if c.log.Enabled(ctx, slog.LevelDebug) {
		var recipient string // masked; never in clear
		if n, err := message.Decode(body); err == nil {
			recipient = n.MaskedRecipient()
		}
		c.log.Debug("handled", "seq", rec.Seq, "refkey", rec.RefKey, "recipient", recipient, "outcome", rec.Outcome, "queue", rec.Queue, "code", rec.Code, "error", rec.Error,
			"total_ms", rec.TotalMS, "reused", rec.Reused, "tls", rec.TLSVersion,
			"redelivered", rec.Redelivered, "attempt", rec.Attempt, "ack_error", rec.AckError)
	}
	if c.cfg.SummaryEvery > 0 && c.stats.handled%c.cfg.SummaryEvery == 0 {
		c.stats.log(c.log, c.now())
	}
}

// stats aggregates handled messages for the summary log line.
type stats struct {
	handled   int
	byOutcome map[outcome.Outcome]int
	first     time.Time
	sendMS    float64
	sends     int
}

func (s *stats) add(r *records.Record) {
	if s.byOutcome == nil {
		s.byOutcome = map[outcome.Outcome]int{}
		s.first = r.Start
	}
	s.handled++
	s.byOutcome[r.Outcome]++
	if r.TotalMS > 0 {
		s.sends++
		s.sendMS += r.TotalMS
	}
}

func (s *stats) log(l *slog.Logger, now time.Time) {
	if s.handled == 0 {
		l.Info("summary", "handled", 0)
		return
	}
	el := now.Sub(s.first).Seconds()
	rate, mean := 0.0, 0.0
	if el > 0 {
		rate = float64(s.handled) / el
	}
	if s.sends > 0 {
		mean = s.sendMS / float64(s.sends)
	}
	args := []any{"handled", s.handled, "per_s", round2(rate), "send_mean_ms", round2(mean), "cpu_ms", round2(ProcessCPUMS())}
	for _, o := range outcome.All {
		if n := s.byOutcome[o]; n > 0 {
			args = append(args, string(o), n)
		}
	}
	l.Info("summary", args...)
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// session is one broker session of the loop: its channel generation
// (genAcker) and its deliveries.
type session struct {
	BrokerSession
	gen        uint64
	deliveries <-chan amqp.Delivery
}

// open dials a session (BrokerDialer.Dial, prefetch Config.Concurrency
// (at least 1) + PrefetchAhead), makes a new generation live and starts
// consuming as "notifier-worker-<generation>". Errors wrap ErrTopology
// when the broker refused the topology for good.
func (c *consumer) open() (*session, error) {
	bs, err := c.dialer.Dial(c.prefetch())
	if err != nil {
		return nil, err
	}
	gen := c.gens.start()
	deliveries, err := bs.Consume(fmt.Sprintf("notifier-worker-%d", gen), func(err error) { c.ended(gen, err) })
	if err != nil {
		c.gens.retire(gen)
		return nil, err
	}
	return &session{BrokerSession: bs, gen: gen, deliveries: deliveries}, nil
}

// ended is the end of session gen (BrokerSession.Consume): its generation
// is retired, so its deliveries are no longer acked nor sent
// (genAcker), and /healthz reports no broker.
func (c *consumer) ended(gen uint64, err error) {
	c.gens.retire(gen)
	c.health.broker.Store(false)
	c.health.active.Store(false)
	if err != nil {
		c.log.Warn("broker session lost", "generation", gen, "error", err.Error())
	}
}

// loop opens sessions (c.dialer) until ctx is done, MaxMessages is
// reached or a fatal error happens, reconnecting with backoff when a
// session is lost and waiting for the ledger (waitLedger) after it failed.
// Its waits go through c.sleep, its backoff's randomness through c.jitter.
func (c *consumer) loop(ctx context.Context) error {
	bo := newBackoff(c.cfg.ReconnectMin, c.cfg.ReconnectMax, c.jitter)
	failures := 0
	for {
		if ctx.Err() != nil {
			return nil
		}
		s, err := c.open()
		if err != nil {
			if errors.Is(err, ErrTopology) {
				return err
			}
			failures++
			d := bo.NextBackOff()
			c.log.Warn("broker unavailable; reconnecting", "error", err.Error(), "failures", failures, "delay", d.String())
			if !c.sleep(ctx, d, nil) {
				return nil
			}
			continue
		}
		failures = 0
		began := c.now()
		c.health.active.Store(false)
		c.health.broker.Store(true)
		c.log.Info("consuming", "queue", c.topology.Names.Main, "prefetch", c.prefetch(), "concurrency", c.concurrency(), "generation", s.gen,
			"single_active_consumer", c.topology.SingleActiveConsumer)
		c.log.Info("standby", "worker_id", c.cfg.WorkerID,
			"detail", "no delivery yet: another replica may be the active consumer, or the queue is empty")
		lost, err := c.serve(ctx, s.gen, c.handler.WithPublisher(s.Publisher()), s.deliveries, s.Lost())
		s.Close()
		c.health.broker.Store(false)
		c.health.active.Store(false)
		switch {
		case errors.Is(err, errStop):
			return nil
		case errors.Is(err, ErrLedger):
			// A ledger that does not answer is no reason to exit: a
			// restarted worker meets the same ledger (a crash loop), and
			// /healthz already answers 503. The session is closed, so its
			// unacked deliveries go back to the queue (nothing was sent
			// without its Begin), and the worker consumes again once the
			// ledger answers (docs/deployment.md, Deadlines).
			c.log.Error("ledger failed; consuming again once it answers", "error", err.Error())
			if !c.waitLedger(ctx, bo) {
				return nil
			}
		case err != nil:
			return err
		case lost:
			// A session that lived long resets the backoff; one that died
			// at once keeps doubling it.
			if c.now().Sub(began) > c.cfg.ReconnectMax {
				bo.Reset()
			}
			d := bo.NextBackOff()
			c.log.Warn("broker session ended; reconnecting", "generation", s.gen, "delay", d.String())
			if !c.sleep(ctx, d, nil) {
				return nil
			}
		}
	}
}

// waitLedger waits until the handler's ledger takes a write again
// (ledgerCheck: CheckWrite, else Ping; each try bounded by LedgerTimeout),
// or ctx is done (false). It always backs off first, one delay of bo
// before every try, the first one included: a ledger that answers at once
// but fails the next Begin (a read passes, a write does not) would
// otherwise have the loop take and requeue the queue's head message in a
// tight cycle, and each requeue costs a quorum queue one delivery of its
// delivery limit (issue 27). A ledger with neither check is waited for
// one delay.
func (c *consumer) waitLedger(ctx context.Context, bo interface{ NextBackOff() time.Duration }) bool {
	check := ledgerCheck(c.handler.c.Ledger)
	for tries := 1; ; tries++ {
		d := bo.NextBackOff()
		if !c.sleep(ctx, d, nil) {
			return false
		}
		if check == nil {
			return true
		}
		pctx, cancel := context.WithTimeout(ctx, c.cfg.LedgerTimeout)
		err := check(pctx)
		cancel()
		if err == nil {
			c.log.Info("ledger takes writes again; reconnecting", "tries", tries)
			return true
		}
		c.log.Warn("ledger still does not take a write", "error", Redact(err.Error(), ""), "tries", tries)
	}
}

// ledgerCheck returns how to ask l whether it takes writes: its
// CheckWrite (ledger.WriteChecker), else its Ping (Pinger), else nil.
func ledgerCheck(l any) func(context.Context) error {
	if w, ok := l.(ledger.WriteChecker); ok {
		return w.CheckWrite
	}
	if p, ok := l.(Pinger); ok {
		return p.Ping
	}
	return nil
}
