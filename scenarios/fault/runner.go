package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Sentinel errors of a run. A failed expectation is not an error: it is a
// Verdict with Pass false.
var (
	// ErrNoWorkerImage: Images.Worker is empty.
	ErrNoWorkerImage = errors.New("no worker image: set LAB_IMAGE_WORKER (vendormock/images/ensure-images.sh builds it)")
	// ErrWaitTimeout: a send or wait step did not see what it waited for in
	// time; the scenario fails (its Verdict says so) and the run goes on.
	ErrWaitTimeout = errors.New("wait timed out")
)

// Defaults of a runner.
const (
	// DefaultWaitTimeout bounds a wait step without its own timeout.
	DefaultWaitTimeout = 60 * time.Second
	// BrokerPort is the Toxiproxy port of BrokerProxy (forwards to
	// rabbitmq:5672).
	BrokerPort = 5672
	// pollEvery is how often records and the journal are polled.
	pollEvery = 20 * time.Millisecond
	// workerCPUs is each worker container's CPU limit.
	workerCPUs = 1
	// stopTimeout is how long a worker may take to finish its message after
	// SIGTERM before it is killed.
	stopTimeout = 20 * time.Second
)

// RunnerOptions start a Runner.
type RunnerOptions struct {
	Profile          string // vendor profile dir (absolute or repo-relative)
	Images           vendormock.Images
	Session          string        // vendormock.Options.Session
	KeepaliveTimeout time.Duration // nginx keepalive_timeout of the stack; 0 = profile's
	WorkDir          string        // where stack files and each scenario's worker state go (created)
	Log              io.Writer     // progress lines; nil = discard
	// Worker is the worker under test; zero = the Go worker. Any other
	// is started with the contract's environment (contractEnv).
	Worker vendormock.WorkerSelection
	// BrokerNodes is the stack's RabbitMQ nodes (vendormock.Options
	// BrokerNodes): 0 or 1 one node, 3 a cluster for the scenarios whose
	// broker_nodes is 3 (Run starts one runner per value).
	BrokerNodes int
	// Out is the results folder: each scenario's worker log is kept in
	// Out/WorkerLogsDir ("" = not kept outside WorkDir).
	Out string
}

// Runner runs scenarios one after another on one stack (RabbitMQ, WireMock,
// nginx, Toxiproxy), each with its own queues (queues.DefaultTopology of
// "fault.<name>") and its own worker container.
type Runner struct {
	Stack  *vendormock.Stack
	opts   RunnerOptions
	log    io.Writer
	conn   *amqp.Connection
	broker *toxiproxy.Proxy
	ledger *toxiproxy.Proxy // LedgerProxy
	// reports is ReportsProxy, created by a scenario with server.reports.
	reports *toxiproxy.Proxy
	runID   string
	mu      sync.Mutex // guards log writes
	curNgx  NginxSpec  // nginx variant in effect
	curH2   bool       // nginx offers h2 (client.http_version 2)
	// connNode is the 0-based broker node conn is on (dialBroker).
	connNode int
	started  time.Time
}

// NewRunner starts the stack, a Toxiproxy proxy for the broker
// (BrokerProxy) and one for the replicas' PostgreSQL ledger (LedgerProxy,
// forwarding to postgres:5432 once a scenario starts PostgreSQL). Close removes everything. Errors: ErrNoWorkerImage,
// vendormock.Start's errors.
func NewRunner(ctx context.Context, o RunnerOptions) (*Runner, error) {
	if o.Images.Worker == "" {
		return nil, ErrNoWorkerImage
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("create work dir: %w", err)
	}
	r := &Runner{opts: o, log: o.Log, runID: fmt.Sprintf("%04x", rand.IntN(0x10000)), started: time.Now()}
	st, err := vendormock.Start(ctx, vendormock.Options{
		ProfileDir: o.Profile, ServerDelayMS: -1, KeepaliveTimeout: o.KeepaliveTimeout,
		Images: o.Images, Session: o.Session, WorkDir: filepath.Join(o.WorkDir, "stack"), Log: lab.PrefixWriter{W: o.Log, Prefix: "[stack] "},
		BrokerNodes: o.BrokerNodes,
	})
	if err != nil {
		return nil, fmt.Errorf("start stack: %w", err)
	}
	r.Stack = st
	fail := func(err error) (*Runner, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return nil, errors.Join(err, r.Close(cctx))
	}
	if r.broker, err = st.AddProxy(ctx, BrokerProxy, BrokerPort, vendormock.AliasRabbitMQ+":5672", 0); err != nil {
		return fail(err)
	}
	if r.ledger, err = st.AddProxy(ctx, LedgerProxy, LedgerPort, vendormock.AliasPostgres+":5432", 0); err != nil {
		return fail(err)
	}
	if r.conn, err = r.dialBroker(); err != nil {
		return fail(fmt.Errorf("connect to rabbitmq: %w", err))
	}
	return r, nil
}

// Close removes the workers, the stack and the network.
func (r *Runner) Close(ctx context.Context) error {
	var errs []error
	if r.conn != nil {
		_ = r.conn.Close()
	}
	if r.Stack != nil {
		errs = append(errs, r.Stack.Close(ctx))
	}
	return errors.Join(errs...)
}

func (r *Runner) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.log, "[fault] "+format+"\n", args...)
}

// restore switches every fault off: toxics other than the RTT's removed,
// every proxy enabled.
func (r *Runner) restore(ctx context.Context) error {
	var errs []error
	for _, p := range []*toxiproxy.Proxy{r.Stack.Proxy(), r.broker, r.ledger, r.reports} {
		if p == nil {
			continue
		}
		ts, err := p.Toxics()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range ts {
			if t.Name != vendormock.ToxicLatencyDown && t.Name != vendormock.ToxicLatencyUp {
				if err := p.RemoveToxic(t.Name); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if !p.Enabled {
			if err := p.Enable(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// Enable checks the cached state: enable unconditionally to be sure.
	for _, p := range []*toxiproxy.Proxy{r.Stack.Proxy(), r.broker, r.ledger, r.reports} {
		if p != nil {
			if err := p.Enable(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// reloadNginx applies n (and h2 offered or not) when it differs from the
// variant in effect.
func (r *Runner) reloadNginx(ctx context.Context, n NginxSpec, h2 bool) error {
	if n == r.curNgx && h2 == r.curH2 {
		return nil
	}
	ka := n.KeepaliveTimeout.D()
	if ka == 0 {
		ka = r.defaultKeepalive()
	}
	if err := r.Stack.ReloadNginx(ctx, vendormock.NginxVariant{KeepaliveTimeout: ka, SendLocation: n.SendLocation, HTTP2: h2, RateLimit: n.RateLimit, KeepaliveHint: n.KeepaliveHint}); err != nil {
		return err
	}
	r.curNgx, r.curH2 = n, h2
	return nil
}

// reloadNginxNow reloads nginx with the variant in effect (nginx resolves
// its upstream's name again).
func (r *Runner) reloadNginxNow(ctx context.Context) error {
	n := r.curNgx
	ka := n.KeepaliveTimeout.D()
	if ka == 0 {
		ka = r.defaultKeepalive()
	}
	return r.Stack.ReloadNginx(ctx, vendormock.NginxVariant{KeepaliveTimeout: ka, SendLocation: n.SendLocation, HTTP2: r.curH2, RateLimit: n.RateLimit, KeepaliveHint: n.KeepaliveHint})
}

// defaultKeepalive is the stack's keepalive_timeout at start.
func (r *Runner) defaultKeepalive() time.Duration {
	if r.opts.KeepaliveTimeout > 0 {
		return r.opts.KeepaliveTimeout
	}
	return r.Stack.Profile.Nginx.KeepaliveTimeout
}

// setServer sets WireMock's server delay and registers the profile's stubs
// plus extra ones (nothing else).
func (r *Runner) setServer(ctx context.Context, delayMS int, extra []vendormock.StubSpec) error {
	r.Stack.ServerDelayMS = delayMS
	if err := r.Stack.ResetStubs(ctx); err != nil {
		return err
	}
	if len(extra) > 0 {
		return r.Stack.AddStubs(ctx, extra)
	}
	return nil
}

func (r *Runner) proxy(name string) *toxiproxy.Proxy {
	switch name {
	case BrokerProxy:
		return r.broker
	case LedgerProxy:
		return r.ledger
	case ReportsProxy:
		return r.reports
	}
	return r.Stack.Proxy()
}

// removeToxic removes the toxic name from whichever proxy has it.
func (r *Runner) removeToxic(name string) error {
	var first error
	for _, p := range []*toxiproxy.Proxy{r.Stack.Proxy(), r.broker, r.ledger, r.reports} {
		if p == nil {
			continue
		}
		err := p.RemoveToxic(name)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return fmt.Errorf("remove toxic %s: %w", name, first)
}

func (r *Runner) addToxic(t ToxicSpec) error {
	tox := 1.0
	if t.Toxicity != nil {
		tox = *t.Toxicity
	}
	attrs := toxiproxy.Attributes{}
	for k, v := range t.Attributes {
		attrs[k] = v
	}
	if _, err := r.proxy(t.Proxy).AddToxic(t.Name, t.Type, t.Stream, float32(tox), attrs); err != nil {
		return fmt.Errorf("add toxic %s (%s %s): %w", t.Name, t.Type, t.Stream, err)
	}
	r.logf("toxic %s added: %s %s on %s %v", t.Name, t.Type, t.Stream, t.Proxy, t.Attributes)
	return nil
}
