package fault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// scenarioRun is the state of one fault scenario.
type scenarioRun struct {
	r         *Runner
	sc        *Scenario
	topo      queues.Topology
	dir       string // host folder mounted at /out
	prefix    string // refkey prefix
	pub       *sender
	recs      *lab.RecordSet
	wk        *vendormock.Worker  // one worker (no workers section)
	ws        *vendormock.Workers // replicas (workers section)
	down      map[string]bool     // replicas killed or stopped by a step
	savedLogs map[string]bool     // containers whose log is saved
	restarts  int
	checks    []Check
	rng       *rand.Rand
	undo      undoList // faults to put back when the scenario ends (nemesis.go)
	// started is when the replicas' containers were running (their
	// processes, and clocks, started before): waitClock's anchor.
	started time.Time
	// Delivery reports (reports.go): the secret, its host folder, the relay.
	reportSecret []byte
	secretDir    string
	relay        *vendormock.ReportRelay
	relayStats   *vendormock.ReportRelayStats // when the relay stopped
	relayOffered map[string]vendormock.Offer  // when the relay first offered each report (Offered)
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
	s := &scenarioRun{r: r, sc: sc, prefix: refKeyPrefix(sc, r.runID),
		rng: rand.New(rand.NewPCG(sc.Workload.Seed, 0x5eed))}
	s.topo = queues.DefaultTopology("fault." + sc.Name)
	s.topo.RetryDelay = sc.Client.RetryDelay.D()
	s.topo.MaxAttempts = sc.Client.MaxAttempts
	s.dir = filepath.Join(r.opts.WorkDir, "scenarios", sc.Name)
	_ = os.RemoveAll(s.dir)
	if err := lab.StateDir(s.dir); err != nil {
		return Verdict{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
	s.recs = lab.NewRecordSet()
	s.down, s.savedLogs = map[string]bool{}, map[string]bool{}
	if sc.Workers == nil {
		s.recs.Add(filepath.Join(s.dir, lab.RecordsFile))
	}
	r.logf("%s: %s (fault by %s)", sc.Name, sc.Description, sc.Tool)

	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		// Thaw and reconnect first: a frozen worker cannot be stopped.
		if uerr := s.undoAll(cctx); uerr != nil {
			err = errors.Join(err, fmt.Errorf("undo the faults of %s: %w", sc.Name, uerr))
		}
		s.stopReportRelay()
		if s.wk != nil {
			_ = s.wk.Stop(cctx, stopTimeout)
		}
		if s.ws != nil {
			if cerr := s.ws.Close(cctx); cerr != nil {
				err = errors.Join(err, fmt.Errorf("remove replicas of %s: %w", sc.Name, cerr))
			}
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
		if err := lab.Sleep(ctx, d); err != nil {
			return Verdict{}, err
		}
	}
	if sc.Expect.NoCrash {
		s.checkNoCrash(ctx)
	}
	// Put back what the steps left paused or partitioned, then stop the
	// workers (SIGTERM: each finishes the message in flight) before the
	// reconciler reads the ledger and peeks the queues.
	if err := s.undoAll(ctx); err != nil {
		return Verdict{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
	if err := s.stopWorkers(ctx); err != nil {
		return Verdict{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
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
	if err := s.startStreamReset(ctx); err != nil {
		return err
	}
	if err := r.Stack.SetRTT(ctx, sc.Network.RTTMS); err != nil {
		return err
	}
	if err := r.reloadNginx(ctx, sc.Server.Nginx, sc.Client.HTTPVersion == "2"); err != nil {
		return err
	}
	if err := r.setServer(ctx, *sc.Server.DelayMS, sc.Server.Stubs); err != nil {
		return err
	}
	if err := s.addReportsProxy(ctx); err != nil {
		return err
	}
	for _, t := range sc.Network.Toxics {
		if err := r.addToxic(t); err != nil {
			return err
		}
	}
	// A scenario of the same name may have run before on this broker.
	// Replicas declare their queues themselves (their arguments differ).
	reset := lab.Delete
	if sc.Workers != nil {
		reset = lab.DeleteOnly
	}
	var err error
	if s.pub, err = newSender(r.conn, s.topo, reset); err != nil {
		return err
	}
	if sc.Workers != nil {
		if err := s.placeQueues(ctx); err != nil {
			return err
		}
		return s.startReplicas(ctx)
	}
	return s.startWorker(ctx)
}

// stopWorkers stops the worker or every running replica (SIGTERM) and
// saves their logs in the scenario's folder.
func (s *scenarioRun) stopWorkers(ctx context.Context) error {
	if s.ws != nil {
		return s.stopReplicas(ctx)
	}
	s.stopReportRelay()
	// Logs first: Stop removes the container and its log with it (the
	// worker.log of every scenario was empty before).
	logs, _ := s.wk.Logs(context.WithoutCancel(ctx))
	err := s.wk.Stop(ctx, stopTimeout)
	if more, lerr := s.wk.Logs(context.WithoutCancel(ctx)); lerr == nil && len(more) > len(logs) {
		logs = more // the shutdown's lines, when the container was still there
	}
	_ = os.WriteFile(filepath.Join(s.dir, "worker.log"), []byte(logs), 0o644)
	s.r.keepWorkerLog(s.sc.Name, logs)
	return err
}

// workerConfig returns the worker's config of the scenario (its command
// line is its Args). Errors: a client.clock_start that is not RFC 3339
// (Validate reports it first).
func (s *scenarioRun) workerConfig() (worker.Config, error) {
	st, c := s.r.Stack, s.sc.Client
	// The worker reaches the broker through Toxiproxy (BrokerProxy).
	amqpURL := fmt.Sprintf("amqp://guest:guest@%s:%d/", vendormock.AliasToxiproxy, BrokerPort)
	if s.sc.BrokerNodes > 1 {
		// On a cluster every node's address, directly (the worker moves
		// to the next when its node goes).
		amqpURL = st.AMQPURLsNetwork
	}
	w := lab.WorkerConfig(worker.Config{}, st, amqpURL, s.topo, c.Strategy)
	if s.sc.Workers != nil && s.sc.Workers.DeadLetter == DeadLetterAtMostOnce {
		w.DeadLetterAtMostOnce = true
	}
	w.ReconnectMax, w.SummaryEvery, w.Concurrency = time.Second, 1000, max(c.Concurrency, 1)
	if c.Strategy == vendorapi.PerRequestName {
		w.TLSMax = "1.2"
	} else {
		idle := c.IdleConnTimeout.D()
		if idle == 0 {
			ka := s.sc.Server.Nginx.KeepaliveTimeout.D()
			if ka == 0 {
				ka = s.r.defaultKeepalive()
			}
			idle = netmodel.IdleConnTimeout(ka, s.sc.Network.RTTMS)
		}
		w.IdleConnTimeout = idle
	}
	// Zero (or, never valid, negative) leaves the worker's default.
	w.ResponseTimeout, w.TLSHandshakeTimeout, w.DialTimeout = max(c.ResponseTimeout.D(), 0), max(c.TLSHandshakeTimeout.D(), 0), max(c.DialTimeout.D(), 0)
	if c.ClockStart != "" {
		t, err := time.Parse(time.RFC3339, c.ClockStart)
		if err != nil {
			return worker.Config{}, fmt.Errorf("client.clock_start %q: %w", c.ClockStart, err)
		}
		w.ClockStart = t
	}
	if c.HTTPVersion != "" {
		w.HTTPVersion = c.HTTPVersion
	}
	w.UnsafeAllowTransportReplay = c.UnsafeAllowTransportReplay
	w.SendInterval = max(c.SendInterval.D(), 0)
	return w, nil
}

// startWorker starts the scenario's worker and waits until it consumes
// from the main queue.
func (s *scenarioRun) startWorker(ctx context.Context) error {
	name := s.workerName()
	wcfg, err := s.workerConfig()
	if err != nil {
		return err
	}
	o := vendormock.WorkerOptions{
		Name:   name,
		Args:   wcfg.Args(),
		Env:    lab.WorkerEnv(s.r.Stack),
		CPUs:   workerCPUs,
		OutDir: s.dir,
		Grace:  worker.ShutdownGrace(wcfg),
	}
	if s.restarts == 0 {
		dir, err := s.reportsConfig(&wcfg)
		if err != nil {
			return err
		}
		if dir != "" {
			s.secretDir = dir
			o.Args, o.PublishOps = wcfg.Args(), true
			o.ReadOnly = map[string]string{filepath.Join(dir, reportSecretName): reportSecretPath}
		}
	}
	if s.r.contract() {
		env, err := s.contractEnv()
		if err != nil {
			return err
		}
		o.Args, o.Env, o.Image, o.Grace = nil, env, s.r.opts.Worker.Image, lab.ContractGrace()
	}
	wk, err := s.r.Stack.StartWorker(ctx, o)
	if err != nil {
		return err
	}
	s.wk = wk
	if err := s.pub.waitConsumer(ctx, wk); err != nil {
		return err
	}
	if s.restarts == 0 {
		return s.startReportRelay(ctx)
	}
	return nil
}

// workerName is the name of the scenario's current worker (its alias is
// vendormock.WorkerAlias of it).
func (s *scenarioRun) workerName() string {
	name := "fault-" + s.sc.Name
	if s.restarts > 0 {
		name += "-" + strconv.Itoa(s.restarts+1)
	}
	return name
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
		if err := r.removeToxic(st.ToxicRemove); err != nil {
			return err
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
		return r.reloadNginx(ctx, n, s.sc.Client.HTTPVersion == "2")
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
		if err := lab.Sleep(ctx, st.RestartWorker.After.D()); err != nil {
			return err
		}
		s.restarts++
		return s.startWorker(ctx)
	case st.Sleep != 0:
		return lab.Sleep(ctx, st.Sleep.D())
	case st.RestartBroker != nil:
		return s.restartBroker(ctx, st.RestartBroker)
	}
	if ok, err := s.nemesisStep(ctx, i, st); ok {
		return err
	}
	if ok, err := s.nodeStep(ctx, st); ok {
		return err
	}
	if ok, err := s.replicaStep(ctx, st); ok {
		return err
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
	if err := s.recs.Poll(); err != nil {
		return err
	}
	base := s.recs.Len()
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
			switch {
			case invalidAt[idx]:
				err = s.pub.invalid(ctx, s.prefix, idx)
			case st.SameRefKey:
				err = s.pub.reuse(ctx, message.Category(cat), tmpl)
			default:
				err = s.pub.valid(ctx, s.prefix, message.Category(cat), tmpl)
			}
			if err != nil {
				return err
			}
			if iv := st.Pacing.Interval.D(); st.Pacing.Mode == "continuous" && iv > 0 && idx < total-1 {
				if err := lab.Sleep(ctx, iv); err != nil {
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
			last, _ := s.recs.Last() // waitFor saw at least base+done records
			if err := lab.Sleep(ctx, time.Until(last.End.Add(pause))); err != nil {
				return err
			}
		}
	}
	return nil
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

// refKeyPrefix is the refkey prefix of sc's messages in run runID; the
// journal and the reconciler take a scenario's sends by it. The name ends
// with '.', which no scenario name holds, so the journal of "broker-cut"
// never takes in "broker-cut-c8"'s refkeys.
func refKeyPrefix(sc *Scenario, runID string) string {
	return fmt.Sprintf("%sf-%s-%s.", sc.Workload.RefKeyPrefix, runID, sc.Name)
}
