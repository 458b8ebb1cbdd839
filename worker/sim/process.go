package sim

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/reports"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// process is one life of the worker process: the real consume loop
// (worker.SimLoop: session loop, serve, Handler over timedLedger, the
// ledger wait) on its own goroutines, the vendor client, and the report
// Resolver and Sweeper, wired as worker.Run wires them, against the
// models. A crash kills it (dead: every model refuses its calls) and the
// next one starts with an empty token cache and a new session.
type process struct {
	// rep is the replica this process is a life of.
	rep     int
	client  *vendorapi.Client
	sweeper *reports.Sweeper
	push    http.Handler
	// publisher is its publish path (every session's); ledger its
	// Handler's ledger (through timedLedger).
	publisher procPublisher
	ledger    *procLedger
	// sess is the session the loop dialled last (nil before the first).
	sess *Session
	// The scheduler's side of the loop (loop.go): the worker's goroutines
	// signal where they wait; state is the last signal.
	signals chan signal
	state   signal
	cancel  context.CancelFunc
	thaw    chan struct{}
	dead    atomic.Bool
	now     func() time.Time // the simulated clock
	// current is the delivery in hand, as the trace names it; handing
	// the one the scheduler hands serve now.
	current, handing string
	// conc is serve's concurrency (Config.Concurrency); held its handlers
	// not run yet, timers its ack batcher's (turns.go).
	conc     int
	held     []heldHandler
	timers   []*simTimer
	timerSeq int
	// failures counts the Handler's Begin and Finish that a ledger fault
	// failed since the loop last stopped for a broken ledger; failOutage
	// is the outage (Ledger.Outage) of the last one (0: none), stopOutage
	// the one the loop last stopped in.
	failures               int
	failOutage, stopOutage int
}

// simStrategy hands the vendor client an *http.Client whose transport is
// the vendor model (vendorapi.Strategy).
type simStrategy struct{ hc *http.Client }

func (s simStrategy) Name() string                          { return "sim" }
func (s simStrategy) Client() (*http.Client, func(), error) { return s.hc, func() {}, nil }
func (s simStrategy) Close() error                          { return nil }

// handlerTimeout is the worker's LedgerTimeout and PublishTimeout in
// real time (the Handler's ledger and publish calls, the ledger wait's
// check): far beyond any step, so no real timer decides anything (the
// fault layer models the ledger's deadline by the simulated clock).
const handlerTimeout = time.Hour

// minAge is the report resolver's MinAge: the worker's ShutdownGrace at
// its defaults (the worst-case send time).
var minAge = worker.ShutdownGrace(worker.Config{})

// newProcess starts a worker process: its loop runs on its own
// goroutines until it waits for its first delivery (start).
func (w *world) newProcess(rep int) (*process, error) {
	w.lives++
	p := &process{rep: rep, signals: make(chan signal), thaw: make(chan struct{}), now: w.clock.Now,
		conc: max(w.s.Config.Concurrency, 1)}
	p.publisher = procPublisher{p: p, w: w, pub: w.broker.Publisher("handler"), returnIsRouted: w.opt.Plant.ReturnIsRouted}
	l := w.ledgerOf(rep)
	p.ledger = &procLedger{p: p, l: l}
	client := vendorapi.NewClient("https://vendor.sim", vendorapi.Credentials{ClientID: "sim", ClientSecret: "sim-secret"},
		simStrategy{hc: &http.Client{Transport: procTransport{p: p, v: w.vendor}}}, vendorapi.WithClock(w.clock.Now))
	var sender worker.Sender = client
	if w.opt.Plant.ReplaySends {
		sender = replaySender{client}
	}
	p.client = client
	if w.s.Config.Reports() {
		spec, err := vendorapi.ParseReportSpec(w.vendor.ReportSpec())
		if err != nil {
			return nil, fmt.Errorf("start process: %w", err)
		}
		res := &reports.Resolver{Store: l, Spec: spec, MinAge: minAge}
		p.sweeper = &reports.Sweeper{Resolver: res}
		if spec.Pull != nil {
			p.sweeper.Puller = reports.ClientPuller{Client: client, Spec: spec}
		}
		if spec.Push != nil {
			p.push = res.Handler(w.vendor.Secret, w.clock.Now)
		}
	}
	cfg := worker.Config{
		Queue:          w.topo.Names.Main,
		Concurrency:    p.conc,
		MaxAttempts:    w.s.Config.MaxAttempts,
		PublishTimeout: handlerTimeout,
		LedgerTimeout:  handlerTimeout,
		WorkerID:       "sim",
		Logger:         slog.New(&logSink{w: w, p: p}),
		// Competing consumers: the lab's negative control allows them on
		// bbolt (Plant.NoSingleActiveConsumer with LedgerPerReplica).
		DisableSingleActiveConsumer: w.s.Config.Competing,
		CompetingLocalLedgerOK:      w.s.Config.Competing && w.s.Config.Bolt,
	}
	if rep > 0 {
		cfg.WorkerID = fmt.Sprintf("sim-%d", rep)
	}
	if w.topo.Type == queues.Quorum {
		// The worker declares the same queues as the broker model: its
		// Handler then knows the delivery limit (a delivery budget
		// renewed, worker.MaxDeliveryRenewals).
		cfg.QueueType, cfg.DeliveryLimit = string(queues.Quorum), w.topo.DeliveryLimit
	}
	loop := worker.SimLoop{Config: cfg, Sender: sender, Ledger: p.ledger, Window: window.Default(), Clock: w.clock,
		Dialer: dialer{w: w, p: p}, Now: w.clock.Now, Sleep: p.sleep, Jitter: newRand(w.s.Seed, 100+w.lives).Float64,
		Idle: p.idle, Go: p.spawn, AfterFunc: p.afterFunc}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		err := loop.Run(ctx)
		p.signals <- signal{kind: sigExited, err: err}
	}()
	return p, nil
}

// pushReport is the vendor's POST of one report to the worker's report
// endpoint (in memory), which replica 0 serves (a load balancer's first
// choice); it returns the status (503 while the process has no
// endpoint).
func (w *world) pushReport(body []byte, sig string) int {
	p := w.procs[0]
	if p == nil || p.push == nil {
		return http.StatusServiceUnavailable
	}
	req := httptest.NewRequest(http.MethodPost, worker.ReportsPath, bytes.NewReader(body))
	req.Header.Set("X-Signature", sig)
	rec := httptest.NewRecorder()
	p.push.ServeHTTP(rec, req)
	w.note("report push %s -> %d %s", body, rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
	if bytes.Contains(rec.Body.Bytes(), []byte(`"settled"`)) {
		w.outcomes["settled by push"]++
	}
	return rec.Code
}

// replaySender is a planted defect (Plant.ReplaySends): a transport that
// sends again when the first answer was UNKNOWN, as Go's transport may
// replay a POST that carries an idempotency key.
type replaySender struct{ inner worker.Sender }

func (r replaySender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	res, err := r.inner.Send(ctx, n)
	if vendorapi.ClassOf(err) == outcome.Unknown {
		return r.inner.Send(ctx, n)
	}
	return res, err
}

func (r replaySender) Close() error { return r.inner.Close() }
