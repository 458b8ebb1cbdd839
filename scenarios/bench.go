package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Sentinel errors of a bench run; a *RunError wraps them with where it
// happened.
var (
	// ErrSelfCheck: the probe through Toxiproxy came back faster than the
	// RTT (a latency toxic silently not applied must not produce numbers).
	ErrSelfCheck = errors.New("self-check failed")
	// ErrWorkerTimeout: the worker did not handle every message in time
	// (WorkerTimeout) or made no progress for StallTimeout.
	ErrWorkerTimeout = errors.New("worker timed out")
	// ErrWorkerExit: the worker exited non-zero or before handling every
	// message.
	ErrWorkerExit = errors.New("worker exited early")
	// ErrNoWorkerImage: LAB_IMAGE_WORKER is not set.
	ErrNoWorkerImage = errors.New("no worker image")
)

// RunError is the error of one (mode, RTT) run: which run, which step, and
// the tail of the worker's logs when the worker was involved.
type RunError struct {
	Mode       string
	RTTMS      int
	Step       string // "set rtt", "self-check", "publish", "start worker", "wait worker", "collect"
	WorkerLogs string // last lines of the worker's stdout/stderr, "" when none
	Err        error
}

// Error returns "run MODE at RTT ms: STEP: cause", then the worker log tail.
func (e *RunError) Error() string {
	s := fmt.Sprintf("run %s at %d ms: %s: %v", e.Mode, e.RTTMS, e.Step, e.Err)
	if e.WorkerLogs != "" {
		s += "\nworker logs (last lines):\n" + e.WorkerLogs
	}
	return s
}

// Unwrap returns the cause, often one of the sentinel errors above.
func (e *RunError) Unwrap() error { return e.Err }

// Timeouts of a bench run.
const (
	// StallTimeout: a worker that handles no message for this long has
	// failed.
	StallTimeout = 60 * time.Second
	// CleanupTimeout bounds stopping the worker and removing the stack,
	// also after Ctrl-C.
	CleanupTimeout = 60 * time.Second
	// workerLogLines is how much of the worker's log a RunError carries.
	workerLogLines = 40
)

// Paths inside the worker container (vendormock.StartWorker mounts OutDir
// at /out and the lab CA at /lab/ca.pem).
const (
	workerOut      = "/out"
	workerCAFile   = "/lab/ca.pem"
	recordsFile    = "records.jsonl"
	publishedFile  = "published.jsonl" // on the host only, for the reconciler
	ledgerFile     = "ledger.db"
	cpuProfileFile = "cpu.pprof"
	benchTemplate  = "LAB_BENCH_01"
)

// WorkerTimeout is how long a run of n messages may take from the worker's
// start to its exit: 60 s for the container to start, plus per message
// twice a pessimistic send (server delay + 6 RTT + 30 ms). A 1,050-message
// per-request run at 10 ms RTT takes about 55 s; this allows about 4.8
// min. A worker that stops making progress fails sooner (StallTimeout).
func WorkerTimeout(n, rttMS, serverDelayMS int) time.Duration {
	per := time.Duration(serverDelayMS+6*rttMS+30) * time.Millisecond
	return 60*time.Second + time.Duration(n)*2*per
}

// Run runs the lab: it starts the vendor stack once, then for each RTT and
// each mode of cfg publishes WARMUP+COUNT notifications, runs the worker
// until it has handled them all, and writes OUT/bench-<mode>-<rtt>ms.json
// and OUT/nginx/access-<mode>-<rtt>ms.log; at the end it writes
// OUT/summary.md and OUT/charts/ and prints the summary to w. Progress goes
// to w (a bar on a terminal, lines otherwise).
//
// Images come from vendormock.ImagesFromEnv (LAB_IMAGE_*, written by the
// images script). The stack and the worker are removed on return, also
// when ctx is cancelled (Ctrl-C). The first failing run stops the lab with
// a *RunError; a per-send failure is not an error (it is data: outcomes,
// errors in the result).
func Run(ctx context.Context, cfg Config, w io.Writer) (err error) {
	vendormock.EnsureTestcontainersEnv()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		return fmt.Errorf("read images: %w", err)
	}
	if images.Worker == "" {
		return fmt.Errorf("read images: %w: LAB_IMAGE_WORKER is empty; build it with vendormock/images/ensure-images.sh (./run.sh does)", ErrNoWorkerImage)
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(out, "nginx"), 0o755); err != nil {
		return fmt.Errorf("create OUT: %w", err)
	}
	profile, err := resolveProfile(cfg.Profile)
	if err != nil {
		return err
	}
	runID := newRunID()
	workDir := filepath.Join(repoRoot(), ".lab", "runs", runID)
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return fmt.Errorf("create work dir: %w", err)
	}
	logf(w, "run %s: COUNT=%d WARMUP=%d RTTS=%v MODES=%v SERVER_DELAY_MS=%d PER_REQUEST_TLS=%s; images %s; work dir %s",
		runID, cfg.Count, cfg.Warmup, cfg.RTTs, cfg.Modes, cfg.ServerDelayMS, cfg.PerRequestTLS, images.Kind, workDir)

	logf(w, "starting the stack (RabbitMQ, WireMock, nginx, Toxiproxy)")
	stack, err := vendormock.Start(ctx, vendormock.Options{
		ProfileDir:       profile,
		ServerDelayMS:    cfg.ServerDelayMS,
		KeepaliveTimeout: cfg.KeepaliveTimeout,
		Images:           images,
		WorkDir:          filepath.Join(workDir, "stack"),
		Log:              prefixWriter{w: w, prefix: "[stack] "},
	})
	if err != nil {
		return fmt.Errorf("start stack: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
		defer cancel()
		if cerr := stack.Close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close stack: %w", cerr))
		}
	}()
	logf(w, "stack ready in %.1f s; nginx keepalive_timeout %s", stack.StartDuration.Seconds(), stack.KeepaliveTimeout)

	conn, err := amqp.Dial(stack.AMQPURL)
	if err != nil {
		return fmt.Errorf("connect to rabbitmq: %w", err)
	}
	defer conn.Close()

	b := &bench{cfg: cfg, w: w, out: out, workDir: workDir, runID: runID, stack: stack, amqp: conn,
		env: describeEnvironment(images)}
	if cfg.WorkerState == "tmpfs" {
		if b.stateDir, err = tmpfsDir(runID); err != nil {
			return err
		}
		defer os.RemoveAll(b.stateDir)
		logf(w, "worker ledger and records on tmpfs during each run (%s); WORKER_STATE=disk puts them on disk", b.stateDir)
	}
	var results []Result
	for _, rtt := range cfg.RTTs {
		for _, mode := range cfg.Modes {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := b.runOne(ctx, mode, rtt)
			if err != nil {
				return err
			}
			if err := WriteResult(out, r); err != nil {
				return err
			}
			logf(w, "%s at %d ms: %.1f sends/s, p50 %.1f ms, p99 %.1f ms, CPU %.2f ms/send, %d TCP connections, outcomes %s -> %s",
				mode, rtt, r.SendsPerS, r.LatencyMS.P50, r.LatencyMS.P99, r.CPUMSPerSend, r.TCPConnections,
				formatCounts(r.Outcomes), filepath.Join(cfg.Out, ResultFileName(mode, rtt)))
			results = append(results, r)
		}
	}
	logf(w, "records, ledgers and published lists of this run (for the reconcile command): %s", workDir)
	fmt.Fprintln(w)
	return WriteReport(out, results, w)
}

// bench is the state shared by the runs of one Run.
type bench struct {
	cfg     Config
	w       io.Writer
	out     string // absolute OUT
	workDir string
	// stateDir is the tmpfs folder for the worker's ledger and records
	// (WORKER_STATE=tmpfs), "" to keep them in workDir.
	stateDir string
	runID    string
	stack    *vendormock.Stack
	amqp     *amqp.Connection
	env      Environment
	// timeout and stall override WorkerTimeout and StallTimeout when > 0 (tests).
	timeout, stall time.Duration
}

// waiter is the part of *vendormock.Worker that waitWorker uses.
type waiter interface {
	Wait(ctx context.Context) (int, error)
}

var _ waiter = (*vendormock.Worker)(nil)

// runOne measures one mode at one RTT.
func (b *bench) runOne(ctx context.Context, mode string, rtt int) (_ Result, err error) {
	label := fmt.Sprintf("%s %d ms", mode, rtt)
	fail := func(step string, err error) error { return &RunError{Mode: mode, RTTMS: rtt, Step: step, Err: err} }

	if err := b.stack.SetRTT(ctx, rtt); err != nil {
		return Result{}, fail("set rtt", err)
	}
	selfRTT, err := b.stack.SelfCheck(ctx, rtt)
	if err != nil {
		return Result{}, fail("self-check", fmt.Errorf("%w: %w", ErrSelfCheck, err))
	}
	if err := b.stack.ResetJournal(ctx); err != nil {
		return Result{}, fail("reset journal", err)
	}
	logOffset, err := b.stack.AccessLogSize()
	if err != nil {
		return Result{}, fail("read access log", err)
	}

	runName := fmt.Sprintf("%s-%dms", mode, rtt)
	runDir := filepath.Join(b.workDir, runName)
	if b.stateDir != "" {
		// The worker's ledger and records live on tmpfs during the run and
		// are copied next to the other run files afterwards (WORKER_STATE).
		runDir = filepath.Join(b.stateDir, runName)
		defer func() {
			if cerr := moveDir(runDir, filepath.Join(b.workDir, runName)); cerr != nil {
				err = errors.Join(err, fmt.Errorf("keep worker state: %w", cerr))
			}
		}()
	}
	if err := os.MkdirAll(runDir, 0o777); err != nil {
		return Result{}, fail("publish", err)
	}
	// The worker image may run as another user: let it write records and ledger.
	if err := os.Chmod(runDir, 0o777); err != nil {
		return Result{}, fail("publish", err)
	}
	topo := queues.DefaultTopology(queues.DefaultMain)
	n := b.cfg.Warmup + b.cfg.Count + b.cfg.Malformed
	published, err := b.publish(ctx, topo, mode, rtt, filepath.Join(runDir, publishedFile))
	if err != nil {
		return Result{}, fail("publish", err)
	}
	args, idle, err := b.workerArgs(topo, mode, rtt, n)
	if err != nil {
		return Result{}, fail("start worker", err)
	}
	logf(b.w, "%s: self-check RTT %.1f ms; %d messages published; starting the worker (1 CPU)", label, ms(selfRTT), n)
	wk, err := b.stack.StartWorker(ctx, vendormock.WorkerOptions{
		Name:   fmt.Sprintf("%s-%dms", mode, rtt),
		Args:   args,
		Env:    map[string]string{"GOMAXPROCS": "1", "VENDOR_CLIENT_SECRET": b.stack.ClientSecret},
		CPUs:   1,
		OutDir: runDir,
	})
	if err != nil {
		return Result{}, fail("start worker", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
		defer cancel()
		if serr := wk.Stop(cctx, 10*time.Second); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop worker: %w", serr))
		}
	}()

	recordsPath := filepath.Join(runDir, recordsFile)
	if err := b.waitWorker(ctx, wk, recordsPath, label, n, rtt); err != nil {
		re := fail("wait worker", err)
		if ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			logs, lerr := wk.Logs(cctx)
			cancel()
			if lerr == nil {
				re.(*RunError).WorkerLogs = lastLines(logs, workerLogLines)
			}
		}
		return Result{}, re
	}

	if b.cfg.CPUProfile == "on" {
		if err := copyFile(filepath.Join(runDir, cpuProfileFile), filepath.Join(b.out, "pprof", "worker-"+runName+".pprof")); err != nil {
			return Result{}, fail("collect", fmt.Errorf("keep cpu profile: %w", err))
		}
	}
	recs, err := records.ReadFile(recordsPath)
	if err != nil {
		return Result{}, fail("collect", err)
	}
	m := NewMetrics(published)
	for _, r := range recs {
		m.Add(r)
	}
	m.Close()
	journal, err := b.stack.Journal(ctx)
	if err != nil {
		return Result{}, fail("collect", err)
	}
	journalSends, repeated := CountJournalSends(journal)
	verdict, err := b.reconcileRun(ctx, topo, recordsPath, filepath.Join(runDir, ledgerFile), published, journal)
	if err != nil {
		return Result{}, fail("reconcile", err)
	}
	if !verdict.OK {
		logf(b.w, "%s: WARNING: reconcile %s: %d lost, %d duplicates, %d violations", label, verdict.Verdict(),
			verdict.Lost, verdict.Duplicates, len(verdict.Violations))
	}
	entries, raw, err := b.stack.ReadAccessLog(logOffset)
	if err != nil {
		return Result{}, fail("collect", err)
	}
	logName := AccessLogFileName(mode, rtt)
	if err := os.WriteFile(filepath.Join(b.out, logName), raw, 0o644); err != nil {
		return Result{}, fail("collect", fmt.Errorf("write access log: %w", err))
	}
	cs := CountConnections(entries)
	if repeated > 0 {
		logf(b.w, "%s: WARNING: %d refkeys reached the vendor more than once (see the journal)", label, repeated)
	}
	if m.Outcomes[outcome.Sent] != n {
		logf(b.w, "%s: WARNING: not every message was SENT: %s; first errors: %q", label, formatCounts(m.Outcomes), m.Errors)
	}

	r := Result{
		Mode: mode, RTTMS: rtt, Count: b.cfg.Count, Warmup: b.cfg.Warmup, ServerDelayMS: b.cfg.ServerDelayMS,
		KeepaliveTimeoutS: b.stack.KeepaliveTimeout.Seconds(),
		SendsPerS:         m.SendsPerS, LatencyMS: m.Latency, PhaseP50MS: m.Phases, CPUMSPerSend: m.CPUMSPerSend,
		ClientCPUMSPerSend: m.ClientCPUMSPerSend, WorkerState: b.cfg.WorkerState, Malformed: b.cfg.Malformed,
		WallS: m.WallS, ClientReused: m.ClientReused, Measured: m.Measured, Outcomes: m.Outcomes, Errors: m.Errors,
		TCPConnections: cs.TCPConnections, TLSVersions: cs.TLSVersions, SendRequests: cs.SendRequests,
		JournalCount: journalSends,
		StackStartS:  b.stack.StartDuration.Seconds(), SelfCheckRTTMS: ms(selfRTT), AccessLog: logName,
		Environment: b.env,
		Reconcile:   verdict,
	}
	if mode == vendorapi.PerRequestName {
		r.TLSMax = b.cfg.PerRequestTLS
	} else {
		r.IdleConnTimeoutS = idle.Seconds()
	}
	r.Environment.Date = time.Now().UTC().Format(time.RFC3339)
	return r, nil
}

// workerArgs returns the notifier-worker flags for one run (flag names of
// worker/cmd/notifier-worker) and the pooled client's idle timeout.
func (b *bench) workerArgs(topo queues.Topology, mode string, rtt, n int) ([]string, time.Duration, error) {
	args := []string{
		"-amqp-url", b.stack.AMQPURLNetwork,
		"-queue", topo.Names.Main,
		"-retry-delay", topo.RetryDelay.String(),
		"-max-attempts", strconv.Itoa(topo.MaxAttempts),
		"-vendor-url", b.stack.VendorURL,
		"-ca-file", workerCAFile,
		"-client-id", b.stack.ClientID,
		"-strategy", mode,
		"-records", workerOut + "/" + recordsFile,
		"-ledger", workerOut + "/" + ledgerFile,
		"-max-messages", strconv.Itoa(n),
	}
	if b.cfg.CPUProfile == "on" {
		args = append(args, "-cpu-profile", workerOut+"/"+cpuProfileFile)
	}
	var idle time.Duration
	switch mode {
	case vendorapi.PerRequestName:
		args = append(args, "-tls-max", b.cfg.PerRequestTLS)
	case vendorapi.PooledName:
		idle = IdleConnTimeout(b.stack.KeepaliveTimeout, rtt)
		if idle <= 0 {
			return nil, 0, fmt.Errorf("pooled idle timeout: keepalive_timeout %s is too short for RTT %d ms", b.stack.KeepaliveTimeout, rtt)
		}
		args = append(args, "-idle-conn-timeout", idle.String())
	}
	return args, idle, nil
}

// publish declares the topology, purges every queue, and publishes WARMUP
// warm-up then COUNT measured notifications, persistent, with publisher
// confirms; it returns once the broker confirmed them all and the main
// queue holds exactly that many. What was published is returned and written
// to publishedPath (reconcile.WritePublished lines) for the reconciler.
func (b *bench) publish(ctx context.Context, topo queues.Topology, mode string, rtt int, publishedPath string) ([]reconcile.Published, error) {
	ch, err := b.amqp.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	if err := topo.Declare(ch); err != nil {
		return nil, fmt.Errorf("declare topology: %w", err)
	}
	for _, q := range topo.Names.All() {
		if _, err := ch.QueuePurge(q, false); err != nil {
			return nil, fmt.Errorf("purge %s: %w", q, err)
		}
	}
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("enable confirms: %w", err)
	}
	var (
		pending   []*amqp.DeferredConfirmation
		published []reconcile.Published
	)
	now := time.Now()
	send := func(id string, body []byte, p reconcile.Published) error {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", topo.Names.Main, false, false, queues.Persistent(amqp.Publishing{
			ContentType: "application/json",
			MessageId:   id,
			Timestamp:   now,
			Body:        body,
		}))
		if err != nil {
			return fmt.Errorf("publish message: %w", err)
		}
		pending = append(pending, dc)
		p.Seq, p.MessageID, p.PublishedAt = len(published)+1, id, now
		published = append(published, p)
		return nil
	}
	// MALFORMED messages are spread evenly among the measured ones.
	malformedAfter := func(measured int) int { // malformed messages due once `measured` measured ones went out
		return measured * b.cfg.Malformed / b.cfg.Count
	}
	malformed := 0
	for i := range b.cfg.Warmup + b.cfg.Count {
		warm := i < b.cfg.Warmup
		idx := i + 1
		if !warm {
			idx = i - b.cfg.Warmup + 1
		}
		key := RefKey(b.runID, mode, rtt, warm, idx)
		body, err := benchMessage(key, i, now)
		if err != nil {
			return nil, err
		}
		if err := send(key, body, reconcile.Published{RefKey: key, Valid: true, Warmup: warm}); err != nil {
			return nil, err
		}
		for !warm && malformed < malformedAfter(idx) {
			malformed++
			id, body, refkey := malformedMessage(b.runID, mode, rtt, malformed, now)
			if err := send(id, body, reconcile.Published{RefKey: refkey, Valid: false}); err != nil {
				return nil, err
			}
		}
	}
	for _, dc := range pending {
		ok, err := dc.WaitContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("wait confirm: %w", err)
		}
		if !ok {
			return nil, fmt.Errorf("publish message: broker nacked delivery tag %d", dc.DeliveryTag)
		}
	}
	q, err := ch.QueueDeclarePassive(topo.Names.Main, true, false, false, false, nil)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", topo.Names.Main, err)
	}
	if want := b.cfg.Warmup + b.cfg.Count + b.cfg.Malformed; q.Messages != want {
		return nil, fmt.Errorf("queue %s holds %d messages after publishing %d", topo.Names.Main, q.Messages, want)
	}
	if err := writePublished(publishedPath, published); err != nil {
		return nil, err
	}
	return published, nil
}

// writePublished writes ps to path, one reconcile.WritePublished line each.
func writePublished(path string, ps []reconcile.Published) error {
	var buf bytes.Buffer
	for _, p := range ps {
		if err := reconcile.WritePublished(&buf, p); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write published: %w", err)
	}
	return nil
}

// benchMessage returns the JSON body of the i-th (0-based) message of a
// run: category info, so the send window never holds it, and a synthetic
// recipient ("+8210" and 8 digits from i, not a real subscriber's number;
// never logged).
func benchMessage(refKey string, i int, now time.Time) ([]byte, error) {
	n := message.Notification{
		RefKey:       refKey,
		Category:     message.Info,
		Recipient:    fmt.Sprintf("+8210%08d", i%100000000),
		TemplateCode: benchTemplate,
		Text:         "notifier-lab bench message " + refKey,
		CreatedAt:    now.Truncate(time.Second),
	}
	body, err := n.Encode()
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return body, nil
}

// malformedKinds are the faults malformedMessage cycles through: each makes
// message.Decode return an *InvalidError, none may ever be sent.
var malformedKinds = []string{"not-json", "no-refkey", "bad-recipient", "bad-category", "trailing-data", "empty"}

// malformedMessage returns the message id, body and refkey ("" when the body
// has none) of the i-th (1-based) malformed message of a run. The published
// list marks it invalid, so Metrics never counts it as warm-up or measured.
func malformedMessage(runID, mode string, rtt, i int, now time.Time) (id string, body []byte, refkey string) {
	id = fmt.Sprintf("%s-%s-%dms-x%04d", runID, mode, rtt, i)
	kind := malformedKinds[(i-1)%len(malformedKinds)]
	valid := func(mutate func(map[string]any)) []byte {
		m := map[string]any{"refkey": id, "category": "info", "recipient": "+821000000000",
			"template_code": benchTemplate, "text": "malformed " + kind, "created_at": now.UTC().Format(time.RFC3339)}
		mutate(m)
		b, _ := json.Marshal(m)
		return b
	}
	switch kind {
	case "not-json":
		return id, []byte("this is not json " + id), ""
	case "no-refkey":
		return id, valid(func(m map[string]any) { delete(m, "refkey") }), ""
	case "bad-recipient":
		return id, valid(func(m map[string]any) { m["recipient"] = "not-a-phone" }), id
	case "bad-category":
		return id, valid(func(m map[string]any) { m["category"] = "spam" }), id
	case "trailing-data":
		return id, append(valid(func(map[string]any) {}), []byte(` {"again": true}`)...), id
	default: // empty
		return id, nil, ""
	}
}

// waitWorker tails the records file for progress until the worker exits,
// and errors when it exits non-zero or early, stalls for StallTimeout, or
// outlives WorkerTimeout.
func (b *bench) waitWorker(ctx context.Context, wk waiter, recordsPath, label string, n, rtt int) error {
	type exit struct {
		code int
		err  error
	}
	exited := make(chan exit, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		code, err := wk.Wait(wctx)
		exited <- exit{code, err}
	}()

	prog := NewProgress(b.w, label, n)
	defer prog.Finish()
	counter := records.NewTail(recordsPath)
	timeout, stall := WorkerTimeout(n, rtt, b.cfg.ServerDelayMS), StallTimeout
	if b.timeout > 0 {
		timeout = b.timeout
	}
	if b.stall > 0 {
		stall = b.stall
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	handled, lastChange := 0, time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-exited:
			if _, err := counter.Poll(); err == nil {
				handled = counter.Lines()
				prog.Set(handled)
			}
			switch {
			case e.err != nil:
				return fmt.Errorf("wait for worker: %w", e.err)
			case e.code != 0:
				return fmt.Errorf("%w: exit code %d after %d of %d messages", ErrWorkerExit, e.code, handled, n)
			case handled < n:
				return fmt.Errorf("%w: exit code 0 after %d of %d messages", ErrWorkerExit, handled, n)
			}
			return nil
		case <-deadline.C:
			return fmt.Errorf("%w: %d of %d messages handled in %s", ErrWorkerTimeout, handled, n, timeout)
		case <-tick.C:
			if _, err := counter.Poll(); err != nil {
				return err
			}
			done := counter.Lines()
			if done != handled {
				handled, lastChange = done, time.Now()
				prog.Set(done)
			} else if time.Since(lastChange) > stall {
				return fmt.Errorf("%w: no message handled for %s (%d of %d)", ErrWorkerTimeout, stall, handled, n)
			}
		}
	}
}

// resolveProfile finds the profile directory: as given when it exists,
// else relative to the module root (the nearest parent with go.mod), so
// tests running in scenarios/ find the default profile too.
// repoRoot returns the nearest folder at or above the working directory
// that holds go.mod (the repository root; run.sh runs from there), else the
// working directory.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

func resolveProfile(p string) (string, error) {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Abs(p)
	}
	if !filepath.IsAbs(p) {
		if dir, err := os.Getwd(); err == nil {
			for ; ; dir = filepath.Dir(dir) {
				if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
					cand := filepath.Join(dir, p)
					if st, err := os.Stat(cand); err == nil && st.IsDir() {
						return cand, nil
					}
					break
				}
				if filepath.Dir(dir) == dir {
					break
				}
			}
		}
	}
	return "", fmt.Errorf("find profile: %s is not a directory (PROFILE is relative to the repository root)", p)
}

// newRunID returns a short unique id for refkeys and the work dir:
// "20261130T030405-1a2b" (UTC time and 16 random bits).
func newRunID() string {
	return fmt.Sprintf("%s-%04x", time.Now().UTC().Format("20060102T150405"), rand.IntN(0x10000))
}

// describeEnvironment collects the Environment of a run (Date is set per result).
func describeEnvironment(im vendormock.Images) Environment {
	kernel := strings.TrimSpace(readFile("/proc/sys/kernel/osrelease"))
	var note []string
	if v := osRelease(); v != "" {
		note = append(note, v)
	}
	if v := cpuModel(); v != "" {
		note = append(note, v)
	}
	if v := memTotal(); v != "" {
		note = append(note, v)
	}
	if v := os.Getenv("LAB_HOST_NOTE"); v != "" {
		note = append(note, v)
	}
	return Environment{
		GoVersion: runtime.Version(),
		CPUs:      runtime.NumCPU(),
		Images: ImagesInfo{Kind: im.Kind, RabbitMQ: im.RabbitMQ, Nginx: im.Nginx, WireMock: im.WireMock,
			Toxiproxy: im.Toxiproxy, Worker: im.Worker},
		Kernel:   kernel,
		HostNote: strings.Join(note, ", "),
	}
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(b)
}

func osRelease() string {
	for _, l := range strings.Split(readFile("/etc/os-release"), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func cpuModel() string {
	for _, l := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memTotal() string {
	for _, l := range strings.Split(readFile("/proc/meminfo"), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return fmt.Sprintf("%.0f GiB RAM", kb/(1<<20))
			}
		}
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logf writes one "[lab] ..." line to w.
func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "[lab] "+format+"\n", args...)
}

// prefixWriter prefixes every line written through it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	s := strings.TrimRight(string(b), "\n")
	for _, l := range strings.Split(s, "\n") {
		if _, err := io.WriteString(p.w, p.prefix+l+"\n"); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// tmpfsDir creates the tmpfs folder for the worker's state of one lab run
// under /dev/shm. Errors: /dev/shm is missing or not a tmpfs (say
// WORKER_STATE=disk then).
func tmpfsDir(runID string) (string, error) {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic {
		return "", fmt.Errorf("WORKER_STATE=tmpfs needs a tmpfs at /dev/shm (not found here): use WORKER_STATE=disk")
	}
	dir := filepath.Join("/dev/shm", "notifier-lab", runID)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", fmt.Errorf("create tmpfs state dir: %w", err)
	}
	return dir, nil
}

// moveDir copies the regular files of src into dst (created) and removes
// src: the worker's state, from tmpfs to the run's folder on disk.
func moveDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return os.RemoveAll(src)
}

// copyFile copies src to dst, creating dst's folder.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}
