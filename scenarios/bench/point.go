package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Bench runs points (one client strategy at one RTT) on a started stack:
// Run makes one for a lab run, the matrix one per worker cell.
type Bench struct {
	cfg     Config
	sel     vendormock.WorkerSelection // the worker under test (WORKER)
	w       io.Writer
	prog    io.Writer // progress lines (PointOptions.Progress)
	out     string    // absolute OUT
	workDir string
	// stateDir is the tmpfs folder for the worker's ledger and records
	// (WORKER_STATE=tmpfs), "" to keep them in workDir.
	stateDir string
	runID    string
	stack    *vendormock.Stack
	amqp     *amqp.Connection
	env      results.Environment
	// tr is the run's transport as the stack runs it (NewBench): the
	// profile may turn https into mtls (a vendor that requires client
	// certificates).
	tr results.Transport
}

// PointOptions are what the points of a Bench share. Out and WorkDir are
// absolute folders; Stack and AMQP are started and stay open while the
// points run.
type PointOptions struct {
	Config Config
	// Worker is the worker under test (vendormock.WorkerImage of
	// Config.Worker); the zero value is the Go worker.
	Worker vendormock.WorkerSelection
	Log    io.Writer // progress and log lines
	// Progress is where the worker run's progress lines go ("pooled 10 ms:
	// 525/1050 handled (50%) in 12.0 s", or a bar on a terminal); nil =
	// Log. The scale benchmark discards the bench's log but shows this.
	Progress io.Writer
	Out      string // where results, access logs and profiles go
	WorkDir  string // where each point's worker files go (PointDir)
	// StateDir is where each point's worker ledger and records live while
	// it runs, copied into WorkDir afterwards: StateDir's folder under
	// /dev/shm for WORKER_STATE=tmpfs; "" = in WorkDir itself (on disk).
	// The result's WorkerState says which it was.
	StateDir string
	RunID    string // NewRunID: the refkeys' prefix
	Stack    *vendormock.Stack
	AMQP     *amqp.Connection
	Env      results.Environment // the Environment of every result
}

// workerState is where the points' worker state really lived: "tmpfs"
// with a StateDir, else "disk" (whatever WORKER_STATE asked).
func (b *Bench) workerState() string {
	if b.stateDir != "" {
		return StateTmpfs
	}
	return StateDisk
}

// NewBench returns a Bench for points run with o.
func NewBench(o PointOptions) *Bench {
	tr := o.Config.Transport()
	if o.Stack != nil && o.Stack.Scheme != "" {
		tr.Scheme = o.Stack.Scheme
	}
	prog := o.Progress
	if prog == nil {
		prog = o.Log
	}
	return &Bench{cfg: o.Config, sel: o.Worker, w: o.Log, prog: prog, out: o.Out, workDir: o.WorkDir, runID: o.RunID,
		stack: o.Stack, amqp: o.AMQP, env: o.Env, tr: tr, stateDir: o.StateDir}
}

// PointName is a point's name in folders and worker names: "<mode>-<rtt>ms".
func PointName(mode string, rttMS int) string { return fmt.Sprintf("%s-%dms", mode, rttMS) }

// point is one (mode, RTT) run: its names, folders and what the worker
// kinds share.
type point struct {
	mode, name, label string
	rtt               int
	dir               string // the worker's /out (on tmpfs with WORKER_STATE=tmpfs)
	topo              queues.Topology
	n                 int // messages published
	// feed publishes the measured messages at their gaps while the
	// worker runs (paced ARRIVALS; nil = all published before);
	// published is then what it published.
	feed             *feed
	published        []reconcile.Published
	wcfg             worker.Config // the Go worker's config (workerConfig; its command line is its Args)
	idle             time.Duration
	selfRTT, selfNew time.Duration
	// recordsPath and ledgerPath are what the reconciler reads; a kind
	// clears one it cannot read.
	recordsPath, ledgerPath string
	// workerCPU samples the worker container's cgroup CPU while it runs
	// (set by the kinds that run one worker container; nil otherwise).
	workerCPU *WorkerCPU
}

// fail wraps err as the *RunError of step.
func (p *point) fail(step string, err error) *RunError {
	return &RunError{Mode: p.mode, RTTMS: p.rtt, Step: step, Err: err}
}

// workerKind runs the worker under test of a point: one Go worker
// (kind_single.go), Go worker replicas (kind_replicas.go) or a contract
// worker (kind_contract.go).
type workerKind interface {
	// run starts the worker(s) on the point's published messages, waits
	// until they handled them (or gave up) and stops them. Errors are
	// *RunError.
	run(ctx context.Context, p *point) error
	// readRecords decides what a records file that could not be read
	// (err) means: the point fails, or (a contract worker) it is data.
	readRecords(p *point, recs []records.Record, err error) error
	// complete adds the kind's figures and checks to r; an error fails
	// the point after r was written.
	complete(p *point, r *results.Result, entries []vendormock.AccessEntry) error
}

// kindFor returns the worker kind of a point of mode.
func (b *Bench) kindFor(mode string) workerKind {
	switch {
	case mode == WorkerMode(b.cfg.Worker) && b.cfg.ContractWorker():
		return &contractKind{b: b}
	case b.cfg.Replicated():
		return &replicasKind{b: b}
	}
	return &singleKind{b: b}
}

// RunPoint measures one mode at one RTT on the Bench's stack: network
// and self-check, publish, the worker kind's run, then the records, the
// vendor's record (WireMock's journal, or nginx's log slice on a stack
// without one), the reconciler's verdict and nginx's log slice
// (OUT/nginx/access-<mode>-<rtt>ms[transport].log) as one Result. It
// does not write the result file (Run does). Errors: *RunError.
func (b *Bench) RunPoint(ctx context.Context, mode string, rtt int) (_ results.Result, err error) {
	p := &point{mode: mode, rtt: rtt, name: PointName(mode, rtt), label: fmt.Sprintf("%s %d ms", mode, rtt)}
	if err := b.setNetwork(ctx, rtt); err != nil {
		return results.Result{}, p.fail("set rtt", err)
	}
	if p.selfRTT, p.selfNew, err = b.selfCheck(ctx, rtt); err != nil {
		return results.Result{}, p.fail("self-check", err)
	}
	probeMS, err := b.probeP50MS(ctx, netmodel.ProbeCount)
	if err != nil {
		return results.Result{}, p.fail("self-check", fmt.Errorf("probe round trips: %w", err))
	}
	if err := b.stack.ResetJournal(ctx); err != nil {
		return results.Result{}, p.fail("reset journal", err)
	}
	logOffset, err := b.stack.AccessLogSize()
	if err != nil {
		return results.Result{}, p.fail("read access log", err)
	}
	p.dir = filepath.Join(b.workDir, p.name)
	if b.stateDir != "" {
		// The worker's ledger and records live on tmpfs during the run and
		// are copied next to the other run files afterwards (WORKER_STATE).
		p.dir = filepath.Join(b.stateDir, p.name)
		defer func() {
			if cerr := moveDir(p.dir, filepath.Join(b.workDir, p.name)); cerr != nil {
				err = errors.Join(err, fmt.Errorf("keep worker state: %w", cerr))
			}
		}()
	}
	if err := lab.StateDir(p.dir); err != nil {
		return results.Result{}, p.fail("publish", err)
	}
	p.topo = queues.DefaultTopology(queues.DefaultMain)
	if b.cfg.QueueType != "" {
		p.topo.Type = queues.QueueType(b.cfg.QueueType) // declared as the replicas declare them
	}
	// Competing consumers declare the main queue without single active
	// consumer; a different argument would refuse them (PRECONDITION_FAILED).
	p.topo.SingleActiveConsumer = b.cfg.Active != ActiveCompeting
	p.n = b.cfg.Warmup + b.cfg.Count + b.cfg.Malformed
	published, fd, err := b.publish(ctx, p.topo, mode, rtt, filepath.Join(p.dir, PublishedFile))
	if err != nil {
		return results.Result{}, p.fail("publish", err)
	}
	p.feed = fd
	if fd != nil {
		defer fd.pub.Close() // feed.run closes it too; this covers a worker that never started
	}
	if p.wcfg, p.idle, err = b.workerConfig(p.topo, mode, rtt, p.n); err != nil {
		return results.Result{}, p.fail("start worker", err)
	}
	p.recordsPath, p.ledgerPath = filepath.Join(p.dir, lab.RecordsFile), filepath.Join(p.dir, lab.LedgerFile)
	kind := b.kindFor(mode)
	if _, single := kind.(*singleKind); p.feed != nil && !single {
		p.feed.pub.Close()
		return results.Result{}, p.fail("start worker", fmt.Errorf("paced ARRIVALS run one Go worker only"))
	}
	cpu0 := b.readServerCPU()
	if err := kind.run(ctx, p); err != nil {
		return results.Result{}, err
	}
	cpu1 := b.readServerCPU()
	if cpu1.err != nil || cpu0.err != nil {
		logf(b.w, "%s: nginx and Toxiproxy CPU not measured: %v", p.label, errors.Join(cpu0.err, cpu1.err))
	}
	if p.feed != nil {
		published = p.published
	}

	if _, single := kind.(*singleKind); single && b.cfg.CPUProfile == "on" {
		if err := copyFile(filepath.Join(p.dir, cpuProfileFile), filepath.Join(b.out, "pprof", "worker-"+p.name+".pprof")); err != nil {
			return results.Result{}, p.fail("collect", fmt.Errorf("keep cpu profile: %w", err))
		}
	}
	recs, err := records.ReadFile(p.recordsPath)
	if err := kind.readRecords(p, recs, err); err != nil {
		return results.Result{}, p.fail("collect", err)
	}
	m := NewMetrics(published)
	for _, r := range recs {
		m.Add(r)
	}
	m.Close()
	entries, raw, err := b.stack.ReadAccessLog(logOffset)
	if err != nil {
		return results.Result{}, p.fail("collect", err)
	}
	journal, err := b.vendorRecord(ctx, entries)
	if err != nil {
		return results.Result{}, p.fail("collect", err)
	}
	journalSends, repeated := CountJournalSendsTo(journal, StackSendPath(b.stack))
	verdict, settlement, err := b.reconcileRun(ctx, p.topo, p.recordsPath, p.ledgerPath, published, journal, p.wcfg.VendorReports != "")
	if err != nil {
		return results.Result{}, p.fail("reconcile", err)
	}
	if !verdict.OK {
		logf(b.w, "%s: FAIL: reconcile %s: %d lost, %d duplicates, %d violations", p.label, verdict.Verdict(),
			verdict.Lost, verdict.Duplicates, len(verdict.Violations))
	}
	logName := strings.TrimSuffix(results.AccessLogFileName(mode, rtt), ".log") + b.tr.FileSuffix(mode) + ".log"
	if err := os.WriteFile(filepath.Join(b.out, logName), raw, 0o644); err != nil {
		return results.Result{}, p.fail("collect", fmt.Errorf("write access log: %w", err))
	}
	cs := CountConnectionsTo(entries, StackSendPath(b.stack))
	if repeated > 0 {
		logf(b.w, "%s: FAIL: %d refkeys reached the vendor more than once (see the journal)", p.label, repeated)
	}
	if warn := outcomeWarning(m.Outcomes, b.cfg.Warmup+b.cfg.Count, b.cfg.Malformed); warn != "" {
		logf(b.w, "%s: WARNING: %s; first errors: %q", p.label, warn, m.Errors)
	}

	r := results.Result{
		Mode: mode, RTTMS: rtt, Count: b.cfg.Count, Warmup: b.cfg.Warmup, ServerDelayMS: b.cfg.ServerDelayMS,
		KeepaliveTimeoutS: b.stack.KeepaliveTimeout.Seconds(),
		SendsPerS:         m.SendsPerS, LatencyMS: m.Latency, PhaseP50MS: m.Phases, PhaseP99MS: m.PhasesP99, LatencyCDF: m.CDF,
		CPUMSPerSend: m.CPUMSPerSend, TCPHandshake: b.cfg.TCPHandshake, SelfCheckNewConnMS: lab.MS(p.selfNew),
		ClientCPUMSPerSend: m.ClientCPUMSPerSend, WorkerState: b.workerState(), Malformed: b.cfg.Malformed,
		WallS: m.WallS, ClientReused: m.ClientReused, Measured: m.Measured, Outcomes: m.Outcomes, Errors: m.Errors,
		TCPConnections: cs.TCPConnections, TLSVersions: cs.TLSVersions, SendRequests: cs.SendRequests,
		JournalCount: journalSends,
		StackStartS:  b.stack.StartDuration.Seconds(), SelfCheckRTTMS: lab.MS(p.selfRTT), AccessLog: logName,
		Environment: b.env,
		Reconcile:   verdict,
		Settlement:  settlement,
		Provenance:  b.cfg.Provenance,
	}
	r.NginxCPUMSPerSend, r.ProxyCPUMSPerSend = perSendMS(cpu0, cpu1, cs.SendRequests)
	r.WorkerCgroupCPUMSPerSend = -1
	if p.workerCPU != nil {
		samples, werr := p.workerCPU.Finish()
		if werr != nil {
			logf(b.w, "%s: worker container CPU not measured: %v", p.label, werr)
		}
		r.WorkerCgroupCPUMSPerSend = CgroupCPUPerSend(samples, entries, StackSendPath(b.stack), b.cfg.Warmup)
	}
	r.TLSSessionsResumed, r.ClientResumed = cs.SessionsResumed, m.ClientResumed
	r.ProbeRTTP50MS, r.UpstreamMSMean = probeMS, cs.UpstreamMeanMS
	if b.cfg.TLSResumption == "on" {
		r.TLSResumption = "on"
	}
	if b.stack.Profile != nil {
		r.Profile = b.stack.Profile.Name
	}
	if mode == vendorapi.PerRequestName || mode == vendorapi.SharedClosingName || mode == vendorapi.PerRequestResumeName {
		r.TLSMax = b.cfg.PerRequestTLS
	} else {
		r.IdleConnTimeoutS = p.idle.Seconds()
	}
	if b.cfg.Arrivals.Paced() {
		r.Gaps = b.gapStudy(recs, published, p)
	}
	r.SetTransport(b.tr, mode, CountProtocols(entries))
	r.Environment.Date = time.Now().UTC().Format(time.RFC3339)
	r.Worker = vendormock.WorkerGo
	if err := kind.complete(p, &r, entries); err != nil {
		return results.Result{}, err
	}
	return r, nil
}

// vendorRecord is what reached the vendor during the point, oldest
// first: WireMock's journal, or, on a stack that keeps none
// (vendormock.Options.NoRequestJournal), nginx's access log slice of the
// point (vendormock.AccessJournal).
func (b *Bench) vendorRecord(ctx context.Context, entries []vendormock.AccessEntry) ([]vendormock.JournalEntry, error) {
	if b.stack.NoRequestJournal {
		return vendormock.AccessJournal(entries), nil
	}
	return b.stack.Journal(ctx)
}

// logf writes one "[lab] ..." line to w (report.Logf).
func logf(w io.Writer, format string, args ...any) { report.Logf(w, format, args...) }
