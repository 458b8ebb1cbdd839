package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
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

// Paths inside the worker container (vendormock.StartWorker mounts the
// scenario's state folder at /out).
const (
	recordsFile = "records.jsonl"
	ledgerFile  = "ledger.db"
)

// RunnerOptions start a Runner.
type RunnerOptions struct {
	Profile          string // vendor profile dir (absolute or repo-relative)
	Images           vendormock.Images
	KeepaliveTimeout time.Duration // nginx keepalive_timeout of the stack; 0 = profile's
	WorkDir          string        // where stack files and each scenario's worker state go (created)
	Log              io.Writer     // progress lines; nil = discard
}

// Runner runs scenarios one after another on one stack (RabbitMQ, WireMock,
// nginx, Toxiproxy), each with its own queues (queues.DefaultTopology of
// "fault.<name>") and its own worker container.
type Runner struct {
	Stack   *vendormock.Stack
	opts    RunnerOptions
	log     io.Writer
	conn    *amqp.Connection
	broker  *toxiproxy.Proxy
	runID   string
	mu      sync.Mutex // guards log writes
	curNgx  NginxSpec  // nginx variant in effect
	started time.Time
}

// NewRunner starts the stack and a Toxiproxy proxy for the broker
// (BrokerProxy). Close removes everything. Errors: ErrNoWorkerImage,
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
		Images: o.Images, WorkDir: filepath.Join(o.WorkDir, "stack"), Log: prefixWriter{w: o.Log, prefix: "[stack] "},
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
	if r.conn, err = amqp.Dial(st.AMQPURL); err != nil {
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

// scenarioRun is the state of one fault scenario.
type scenarioRun struct {
	r        *Runner
	sc       *Scenario
	topo     queues.Topology
	dir      string // host folder mounted at /out
	prefix   string // refkey prefix
	pub      *publisher
	tail     *tail
	wk       *vendormock.Worker
	restarts int
	checks   []Check
	rng      *rand.Rand
}

// RunScenario runs one fault scenario (kind fault) and returns its
// Verdict. Faults it switched on are switched off again before it
// returns, whatever happened. The error is for what keeps the lab from
// judging (Docker, broker, WireMock errors); a wait that times out ends
// the steps early and fails the Verdict instead.
func (r *Runner) RunScenario(ctx context.Context, sc *Scenario) (v Verdict, err error) {
	if sc.Kind != KindFault {
		return Verdict{}, fmt.Errorf("run scenario %s: kind %s: use RunIdleRace", sc.Name, sc.Kind)
	}
	t0 := time.Now()
	s := &scenarioRun{r: r, sc: sc, prefix: fmt.Sprintf("f-%s-%s-", r.runID, sc.Name),
		rng: rand.New(rand.NewPCG(sc.Workload.Seed, 0x5eed))}
	s.topo = queues.DefaultTopology("fault." + sc.Name)
	s.topo.RetryDelay = sc.Client.RetryDelay.D()
	s.topo.MaxAttempts = sc.Client.MaxAttempts
	s.dir = filepath.Join(r.opts.WorkDir, "scenarios", sc.Name)
	_ = os.RemoveAll(s.dir)
	if err := os.MkdirAll(s.dir, 0o777); err != nil {
		return Verdict{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
	_ = os.Chmod(s.dir, 0o777) // the worker image may run as another user
	s.tail = newTail(filepath.Join(s.dir, recordsFile))
	r.logf("%s: %s (fault by %s)", sc.Name, sc.Description, sc.Tool)

	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if s.wk != nil {
			_ = s.wk.Stop(cctx, stopTimeout)
		}
		if cerr := r.restore(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("restore stack after %s: %w", sc.Name, cerr))
		}
	}()
	if err := s.setup(ctx); err != nil {
		return Verdict{}, fmt.Errorf("run scenario %s: set up: %w", sc.Name, err)
	}
	var stepErr error
	for i, st := range sc.Steps {
		if err := ctx.Err(); err != nil {
			return Verdict{}, err
		}
		if err := s.step(ctx, i, st); err != nil {
			if errors.Is(err, ErrWaitTimeout) {
				stepErr = fmt.Errorf("steps[%d]: %w", i, err)
				r.logf("%s: %v", sc.Name, stepErr)
				break
			}
			return Verdict{}, fmt.Errorf("run scenario %s: steps[%d]: %w", sc.Name, i, err)
		}
	}
	if d := sc.Expect.Settle.D(); d > 0 && stepErr == nil {
		r.logf("%s: settle %s before counting the journal", sc.Name, d)
		if err := sleep(ctx, d); err != nil {
			return Verdict{}, err
		}
	}
	// Stop the worker (SIGTERM: it finishes the message in flight) before
	// the reconciler reads its ledger and peeks the queues.
	if err := s.wk.Stop(ctx, stopTimeout); err != nil {
		return Verdict{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
	logs, _ := s.wk.Logs(context.WithoutCancel(ctx))
	_ = os.WriteFile(filepath.Join(s.dir, "worker.log"), []byte(logs), 0o644)
	v, err = s.judge(ctx, stepErr)
	if err != nil {
		return Verdict{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
	v.DurationS = time.Since(t0).Seconds()
	r.logf("%s: %s", sc.Name, v.Line())
	return v, nil
}

// setup brings the stack to the scenario's start state, declares and
// purges its queues, and starts its worker.
func (s *scenarioRun) setup(ctx context.Context) error {
	r, sc := s.r, s.sc
	if err := r.Stack.SetRTT(ctx, sc.Network.RTTMS); err != nil {
		return err
	}
	if err := r.reloadNginx(ctx, sc.Server.Nginx); err != nil {
		return err
	}
	if err := r.setServer(ctx, *sc.Server.DelayMS, sc.Server.Stubs); err != nil {
		return err
	}
	for _, t := range sc.Network.Toxics {
		if err := r.addToxic(t); err != nil {
			return err
		}
	}
	// A scenario of the same name may have run before on this broker.
	var err error
	if s.pub, err = freshPublisher(r.conn, s.topo); err != nil {
		return err
	}
	if err := s.startWorker(ctx); err != nil {
		return err
	}
	return nil
}

// restore switches every fault off: toxics other than the RTT's removed,
// both proxies enabled.
func (r *Runner) restore(ctx context.Context) error {
	var errs []error
	for _, p := range []*toxiproxy.Proxy{r.Stack.Proxy(), r.broker} {
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
	for _, p := range []*toxiproxy.Proxy{r.Stack.Proxy(), r.broker} {
		if p != nil {
			if err := p.Enable(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// reloadNginx applies n when it differs from the variant in effect.
func (r *Runner) reloadNginx(ctx context.Context, n NginxSpec) error {
	if n == r.curNgx {
		return nil
	}
	ka := n.KeepaliveTimeout.D()
	if ka == 0 {
		ka = r.defaultKeepalive()
	}
	if err := r.Stack.ReloadNginx(ctx, vendormock.NginxVariant{KeepaliveTimeout: ka, SendLocation: n.SendLocation}); err != nil {
		return err
	}
	r.curNgx = n
	return nil
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
	if name == BrokerProxy {
		return r.broker
	}
	return r.Stack.Proxy()
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

// workerArgs returns the notifier-worker flags of the scenario.
func (s *scenarioRun) workerArgs() []string {
	st, c := s.r.Stack, s.sc.Client
	args := []string{
		"-amqp-url", fmt.Sprintf("amqp://guest:guest@%s:%d/", vendormock.AliasToxiproxy, BrokerPort),
		"-queue", s.topo.Names.Main,
		"-retry-delay", s.topo.RetryDelay.String(),
		"-max-attempts", strconv.Itoa(s.topo.MaxAttempts),
		"-vendor-url", st.VendorURL,
		"-ca-file", vendormock.WorkerCAPath,
		"-client-id", st.ClientID,
		"-strategy", c.Strategy,
		"-records", vendormock.WorkerOutDir + "/" + recordsFile,
		"-ledger", vendormock.WorkerOutDir + "/" + ledgerFile,
		"-reconnect-max", "1s",
		"-summary-every", "1000",
	}
	if c.Strategy == vendorapi.PerRequestName {
		args = append(args, "-tls-max", "1.2")
	} else {
		idle := c.IdleConnTimeout.D()
		if idle == 0 {
			ka := s.sc.Server.Nginx.KeepaliveTimeout.D()
			if ka == 0 {
				ka = s.r.defaultKeepalive()
			}
			idle = ka - time.Duration(s.sc.Network.RTTMS)*time.Millisecond - time.Second
		}
		args = append(args, "-idle-conn-timeout", idle.String())
	}
	for flag, d := range map[string]Duration{"-response-timeout": c.ResponseTimeout, "-tls-handshake-timeout": c.TLSHandshakeTimeout, "-dial-timeout": c.DialTimeout} {
		if d > 0 {
			args = append(args, flag, d.D().String())
		}
	}
	if c.ClockStart != "" {
		args = append(args, "-clock-start", c.ClockStart)
	}
	return args
}

// startWorker starts the scenario's worker and waits until it consumes
// from the main queue.
func (s *scenarioRun) startWorker(ctx context.Context) error {
	name := "fault-" + s.sc.Name
	if s.restarts > 0 {
		name += "-" + strconv.Itoa(s.restarts+1)
	}
	wk, err := s.r.Stack.StartWorker(ctx, vendormock.WorkerOptions{
		Name:   name,
		Args:   s.workerArgs(),
		Env:    map[string]string{"GOMAXPROCS": "1", "VENDOR_CLIENT_SECRET": s.r.Stack.ClientSecret},
		CPUs:   workerCPUs,
		OutDir: s.dir,
	})
	if err != nil {
		return err
	}
	s.wk = wk
	return s.pub.waitConsumer(ctx, wk, 60*time.Second)
}

// step runs one step.
func (s *scenarioRun) step(ctx context.Context, i int, st Step) error {
	r := s.r
	switch {
	case st.Send != nil:
		return s.send(ctx, st.Send)
	case st.Wait != nil:
		return s.wait(ctx, *st.Wait)
	case st.CheckJournal != nil:
		n, err := s.journalCount(ctx)
		if err != nil {
			return err
		}
		c := Check{Step: i, What: "journal sends so far", Want: st.CheckJournal.String(), Got: n, OK: st.CheckJournal.Match(n)}
		s.checks = append(s.checks, c)
		r.logf("%s: steps[%d] check journal: %d (want %s) %s", s.sc.Name, i, n, c.Want, okWord(c.OK))
		return nil
	case st.ToxicAdd != nil:
		return r.addToxic(*st.ToxicAdd)
	case st.ToxicRemove != "":
		if err := r.Stack.Proxy().RemoveToxic(st.ToxicRemove); err != nil {
			if err2 := r.broker.RemoveToxic(st.ToxicRemove); err2 != nil {
				return fmt.Errorf("remove toxic %s: %w", st.ToxicRemove, err)
			}
		}
		r.logf("toxic %s removed", st.ToxicRemove)
		return nil
	case st.ProxyDisable != "":
		r.logf("proxy %s disabled", st.ProxyDisable)
		return r.proxy(st.ProxyDisable).Disable()
	case st.ProxyEnable != "":
		r.logf("proxy %s enabled", st.ProxyEnable)
		return r.proxy(st.ProxyEnable).Enable()
	case st.Nginx != nil:
		n := *st.Nginx
		if n.KeepaliveTimeout == 0 {
			n.KeepaliveTimeout = s.sc.Server.Nginx.KeepaliveTimeout
		}
		return r.reloadNginx(ctx, n)
	case st.ServerDelayMS != nil:
		return r.setServer(ctx, *st.ServerDelayMS, s.sc.Server.Stubs)
	case st.RotateToken:
		if err := r.Stack.RotateAccessToken(ctx); err != nil {
			return err
		}
		if len(s.sc.Server.Stubs) > 0 {
			return r.Stack.AddStubs(ctx, s.sc.Server.Stubs)
		}
		return nil
	case st.RestartWorker != nil:
		r.logf("%s: SIGTERM to the worker, then a new one on the same ledger", s.sc.Name)
		if err := s.wk.Stop(ctx, stopTimeout); err != nil {
			return err
		}
		if err := sleep(ctx, st.RestartWorker.After.D()); err != nil {
			return err
		}
		s.restarts++
		return s.startWorker(ctx)
	case st.Sleep != 0:
		return sleep(ctx, st.Sleep.D())
	}
	return fmt.Errorf("empty step")
}

// send publishes one send step's messages with its pacing.
func (s *scenarioRun) send(ctx context.Context, st *SendStep) error {
	total := st.Count + st.Invalid
	invalidAt := map[int]bool{}
	for j := range st.Invalid {
		invalidAt[(2*j+1)*total/(2*st.Invalid)] = true
	}
	cat := firstNonEmpty(st.Category, s.sc.Workload.Category)
	tmpl := firstNonEmpty(st.Template, s.sc.Workload.Template)
	if err := s.tail.poll(); err != nil {
		return err
	}
	base := len(s.tail.recs)
	wait := st.Wait == nil || *st.Wait
	burst := total
	if st.Pacing.Mode == "bursts" {
		burst = st.Pacing.Burst
	}
	perMsg := time.Duration(*s.sc.Server.DelayMS+6*s.sc.Network.RTTMS+300) * time.Millisecond
	for done := 0; done < total; {
		n := min(burst, total-done)
		for k := range n {
			idx := done + k
			var err error
			if invalidAt[idx] {
				err = s.pub.publishInvalid(ctx, s.prefix, idx)
			} else {
				err = s.pub.publishValid(ctx, s.prefix, message.Category(cat), tmpl)
			}
			if err != nil {
				return err
			}
			if iv := st.Pacing.Interval.D(); st.Pacing.Mode == "continuous" && iv > 0 && idx < total-1 {
				if err := sleep(ctx, iv); err != nil {
					return err
				}
			}
		}
		done += n
		if !wait {
			continue
		}
		if err := s.waitFor(ctx, waitCond{records: base + done}, 60*time.Second+time.Duration(n)*perMsg); err != nil {
			return err
		}
		if st.Pacing.Mode == "bursts" && done < total {
			pause := st.Pacing.PauseMin.D() + time.Duration(s.rng.Int64N(int64(st.Pacing.PauseMax.D()-st.Pacing.PauseMin.D())+1))
			last := s.tail.recs[len(s.tail.recs)-1].End
			if err := sleep(ctx, time.Until(last.Add(pause))); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *scenarioRun) wait(ctx context.Context, w WaitStep) error {
	t := w.Timeout.D()
	if t == 0 {
		t = DefaultWaitTimeout
	}
	return s.waitFor(ctx, waitCond{records: w.Records, outcomes: w.Outcomes, journal: w.Journal}, t)
}

type waitCond struct {
	records  int
	outcomes map[outcome.Outcome]int
	journal  int
}

// waitFor polls the records (and the journal when asked) until c holds.
func (s *scenarioRun) waitFor(ctx context.Context, c waitCond, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	state := ""
	for {
		if err := s.tail.poll(); err != nil {
			return err
		}
		ok := len(s.tail.recs) >= c.records
		counts := s.tail.counts()
		for k, n := range c.outcomes {
			ok = ok && counts[k] >= n
		}
		state = fmt.Sprintf("%d records %s", len(s.tail.recs), formatCounts(counts))
		if ok && c.journal > 0 {
			n, err := s.journalCount(ctx)
			if err != nil {
				return err
			}
			ok = n >= c.journal
			state += fmt.Sprintf(", journal %d", n)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%w after %s: want records>=%d outcomes>=%v journal>=%d; have %s", ErrWaitTimeout, timeout, c.records, c.outcomes, c.journal, state)
		case <-tick.C:
		}
	}
}

// journal returns the journal's POSTs to the send path of this scenario.
func (s *scenarioRun) journal(ctx context.Context) ([]vendormock.JournalEntry, error) {
	return journalFor(ctx, s.r.Stack, s.prefix)
}

func (s *scenarioRun) journalCount(ctx context.Context) (int, error) {
	j, err := s.journal(ctx)
	return len(j), err
}

// journalFor reads WireMock's journal and keeps POSTs to the send path
// whose refkey starts with prefix.
func journalFor(ctx context.Context, st *vendormock.Stack, prefix string) ([]vendormock.JournalEntry, error) {
	all, err := st.Journal(ctx)
	if err != nil {
		return nil, err
	}
	var out []vendormock.JournalEntry
	for _, e := range all {
		if e.Method == "POST" && e.Path == st.Profile.API.SendPath && strings.HasPrefix(e.RefKey, prefix) {
			out = append(out, e)
		}
	}
	return out, nil
}

// judge gathers what happened and compares it with the scenario's Expect.
func (s *scenarioRun) judge(ctx context.Context, stepErr error) (Verdict, error) {
	journal, err := s.journal(ctx)
	if err != nil {
		return Verdict{}, err
	}
	in, err := reconcile.Gather(ctx, reconcile.GatherOptions{
		Published:   s.pub.published,
		RecordsPath: s.tail.path,
		LedgerPath:  filepath.Join(s.dir, ledgerFile),
		AMQPURL:     s.r.Stack.AMQPURL,
		Main:        s.topo.Names.Main,
		SendPath:    s.r.Stack.Profile.API.SendPath,
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("reconcile: %w", err)
	}
	in.Journal = make([]reconcile.JournalEntry, len(journal))
	for i, j := range journal {
		in.Journal[i] = reconcile.JournalEntry{Method: j.Method, Path: j.Path, RefKey: j.RefKey, Status: j.Status, LoggedAt: j.LoggedAt}
	}
	rep := reconcile.Reconcile(in)
	return evaluate(s.sc, &rep, in.Records, journal, s.checks, stepErr), nil
}

// publisher publishes a scenario's messages with publisher confirms and
// keeps the published list for the reconciler.
type publisher struct {
	ch        *amqp.Channel
	topo      queues.Topology
	published []reconcile.Published
	n         int
	now       time.Time
}

// freshPublisher deletes topo's queues (a run of the same name may have
// left messages on this broker; a missing queue is fine) and returns a
// publisher that declares them anew (newPublisher).
func freshPublisher(conn *amqp.Connection, topo queues.Topology) (*publisher, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	for _, q := range topo.Names.All() {
		_, _ = ch.QueueDelete(q, false, false, false)
	}
	_ = ch.Close()
	return newPublisher(conn, topo)
}

func newPublisher(conn *amqp.Connection, topo queues.Topology) (*publisher, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	if err := topo.Declare(ch); err != nil {
		return nil, fmt.Errorf("declare topology: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("enable confirms: %w", err)
	}
	return &publisher{ch: ch, topo: topo, now: time.Now()}, nil
}

func (p *publisher) publishValid(ctx context.Context, prefix string, cat message.Category, tmpl string) error {
	p.n++
	key := fmt.Sprintf("%s%04d", prefix, p.n)
	n := message.Notification{
		RefKey: key, Category: cat, Recipient: fmt.Sprintf("+8210%08d", p.n),
		TemplateCode: tmpl, Text: "notifier-lab fault scenario " + key, CreatedAt: p.now.Truncate(time.Second),
	}
	body, err := n.Encode()
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return p.publish(ctx, body, reconcile.Published{RefKey: key, MessageID: key, Valid: true})
}

// invalidBodies are the malformed messages mixed into a run, in turn: not
// JSON (no refkey can be read), an unknown field, a national-format
// recipient. Each is dead-lettered with the reason message.Decode gives.
var invalidBodies = []func(key string, now time.Time) (body []byte, refkey string){
	func(key string, _ time.Time) ([]byte, string) {
		return []byte(`{"refkey": "` + key + `", "category": "info", "recipient": `), ""
	},
	func(key string, now time.Time) ([]byte, string) {
		return fmt.Appendf(nil, `{"refkey":%q,"category":"info","recipient":"+821000000000","template_code":"LAB_FAULT_01","text":"x","created_at":%q,"colour":"red"}`,
			key, now.UTC().Format(time.RFC3339)), key
	},
	func(key string, now time.Time) ([]byte, string) {
		return fmt.Appendf(nil, `{"refkey":%q,"category":"info","recipient":"010-0000-0000","template_code":"LAB_FAULT_01","text":"x","created_at":%q}`,
			key, now.UTC().Format(time.RFC3339)), key
	},
}

func (p *publisher) publishInvalid(ctx context.Context, prefix string, idx int) error {
	p.n++
	key := fmt.Sprintf("%s%04d", prefix, p.n)
	body, refkey := invalidBodies[idx%len(invalidBodies)](key, p.now)
	return p.publish(ctx, body, reconcile.Published{RefKey: refkey, MessageID: key, Valid: false})
}

func (p *publisher) publish(ctx context.Context, body []byte, rec reconcile.Published) error {
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, "", p.topo.Names.Main, false, false, queues.Persistent(amqp.Publishing{
		ContentType: "application/json", MessageId: rec.MessageID, Timestamp: time.Now(), Body: body,
	}))
	if err != nil {
		return fmt.Errorf("publish message: %w", err)
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		return fmt.Errorf("wait confirm: %w", err)
	}
	if !ok {
		return fmt.Errorf("publish message: broker nacked it")
	}
	rec.Seq = len(p.published) + 1
	rec.PublishedAt = time.Now()
	p.published = append(p.published, rec)
	return nil
}

// waitConsumer waits until the main queue has a consumer (the worker is
// up), or the worker exits, or timeout.
func (p *publisher) waitConsumer(ctx context.Context, wk *vendormock.Worker, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		q, err := p.ch.QueueDeclarePassive(p.topo.Names.Main, true, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("inspect %s: %w", p.topo.Names.Main, err)
		}
		if q.Consumers > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			logs, _ := wk.Logs(ctx)
			return fmt.Errorf("worker did not consume %s within %s; logs:\n%s", p.topo.Names.Main, timeout, lastLines(logs, 20))
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// tail reads a growing records file incrementally and keeps every
// record read so far.
type tail struct {
	path string
	t    *records.Tail
	recs []records.Record
}

func newTail(path string) *tail { return &tail{path: path, t: records.NewTail(path)} }

// poll reads the records appended since the last poll; a missing file is
// an empty one.
func (t *tail) poll() error {
	recs, err := t.t.Poll()
	t.recs = append(t.recs, recs...)
	return err
}

// counts returns the records by outcome.
func (t *tail) counts() map[outcome.Outcome]int {
	m := map[outcome.Outcome]int{}
	for _, r := range t.recs {
		m[r.Outcome]++
	}
	return m
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// prefixWriter prefixes every line written through it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if _, err := io.WriteString(p.w, p.prefix+l+"\n"); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
