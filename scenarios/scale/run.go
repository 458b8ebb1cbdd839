package scale

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

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/matrix"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// SampleInterval is how often the sampler reads the containers' cgroups.
const SampleInterval = time.Second

// Run runs every point of cfg.Plan on one stack (one point at a time)
// and writes OUT/point-<name>.json per point, then OUT/summary.md and
// OUT/charts/ (WriteReport). Before each point the vendor's think time
// is set (WireMock's stubs registered again); while it runs a Sampler
// reads every container's CPU and the workers' RSS. A progress line per
// point gives its figures and an ETA. The first failing point stops the
// run with its error (a *bench.RunError); a point that lost or duplicated
// a message, or did not send everything, is bench.ErrDelivery after
// every file is written. The stack is removed on return, also when ctx
// is cancelled.
func Run(ctx context.Context, cfg Config, w io.Writer) (err error) {
	images := cfg.Images
	if err := images.Validate(); err != nil {
		return fmt.Errorf("read images: %w", err)
	}
	if images.Worker == "" {
		return fmt.Errorf("read images: %w: LAB_IMAGE_WORKER is empty", bench.ErrNoWorkerImage)
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	runID := bench.NewRunID()
	if err := outdir.Claim(out, runID); err != nil {
		return err
	}
	profile, err := bench.ResolveProfile(cfg.Profile)
	if err != nil {
		return err
	}
	workDir := filepath.Join(lab.RepoRoot(), ".lab", "runs", "scale-"+runID)
	plan := cfg.Plan()
	report.Logf(w, "scale %s: %d points (concurrency %v, workers %v, think %d ms, case series %s, memory run %d s), RTT %d ms, HTTP_VERSION=%s, RATE_LIMIT=%d, UPSTREAM_POOL=%s; about %s; work dir %s",
		runID, len(plan), cfg.Concurrencies, cfg.WorkerCounts, cfg.ServerDelayMS, caseLabel(cfg.CaseDelayMS), cfg.SoakS,
		cfg.RTTMS(), cfg.HTTPVersion, cfg.RateLimit, UpstreamPoolLabel(cfg.UpstreamPool), cfg.Estimate().Round(time.Minute), workDir)
	stack, err := vendormock.Start(ctx, vendormock.Options{
		ProfileDir: profile, ServerDelayMS: cfg.ServerDelayMS, KeepaliveTimeout: cfg.KeepaliveTimeout,
		Scheme: vendormock.Scheme(cfg.Scheme), HTTPVersion: cfg.HTTPVersion, Images: images, Session: cfg.Session,
		WorkDir: filepath.Join(workDir, "stack"), Log: lab.PrefixWriter{W: io.Discard}, RateLimit: cfg.RateLimit,
		// Hundreds of thousands of sends on one stack: WireMock keeps no
		// journal, nginx's access log is the vendor's record.
		NoRequestJournal: true,
		// An upstream pool as large as WireMock's thread pool (UPSTREAM_POOL).
		UpstreamKeepalive: cfg.UpstreamPool,
	})
	if err != nil {
		return fmt.Errorf("start stack: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bench.CleanupTimeout)
		defer cancel()
		if cerr := stack.Close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close stack: %w", cerr))
		}
	}()
	report.Logf(w, "stack ready in %.1f s", stack.StartDuration.Seconds())
	if err := stack.SetRTT(ctx, cfg.RTTMS()); err != nil {
		return fmt.Errorf("set rtt: %w", err)
	}
	conn, err := amqp.Dial(stack.AMQPURL)
	if err != nil {
		return fmt.Errorf("connect to rabbitmq: %w", err)
	}
	defer conn.Close()
	stateDir, cleanState, err := bench.PrepareStateDir(cfg.Config.Config, runID)
	if err != nil {
		return err
	}
	defer cleanState()
	r := &runner{cfg: cfg, w: w, out: out, workDir: workDir, stateDir: stateDir, stack: stack, conn: conn, env: bench.DescribeEnvironment(images, cfg.HostNote)}
	start := time.Now()
	var points []Point
	for i, spec := range plan {
		if err := ctx.Err(); err != nil {
			return err
		}
		report.Logf(w, "point %d/%d %s: %d sends after %d warm-up", i+1, len(plan), spec.Name(), spec.Count, cfg.Warmup)
		p, err := r.point(ctx, spec)
		if err != nil {
			return err
		}
		if err := WritePoint(out, p); err != nil {
			return err
		}
		points = append(points, p)
		el := time.Since(start)
		eta := time.Duration(float64(el) / float64(i+1) * float64(len(plan)-i-1))
		report.Logf(w, "point %d/%d %-28s %8.1f sends/s  p50 %7.1f  p99 %7.1f ms  CPU %.3f ms/send  bottleneck: %s; %s; elapsed %s, ETA %s",
			i+1, len(plan), spec.Name(), p.SendsPerS, p.LatencyMS.P50, p.LatencyMS.P99, p.CPUMSPerSend, p.Bottleneck, p.Check(),
			el.Round(time.Second), eta.Round(time.Second))
	}
	if err := WriteReport(out, points, w); err != nil {
		return err
	}
	var bad []string
	for _, p := range points {
		if chk := p.Check(); chk != "ok" {
			bad = append(bad, fmt.Sprintf("%s: %s (%s)", p.Name, chk, filepath.Join(cfg.Out, PointFile(p.Name))))
		}
		// The memory check judges a memory run long enough for it.
		if p.Series == SeriesSoak && time.Duration(cfg.SoakS)*time.Second >= RSSMinDuration {
			if p.RSS == nil {
				bad = append(bad, fmt.Sprintf("%s: memory: no RSS sample (%s)", p.Name, strings.Join(p.SampleErrors, "; ")))
			} else if chk := p.RSS.Check(); chk != "ok" {
				bad = append(bad, fmt.Sprintf("%s: memory: %s", p.Name, chk))
			}
		}
	}
	return bench.DeliveryError(w, bad)
}

// UpstreamPoolLabel is UPSTREAM_POOL's value as the lab prints it:
// "profile" or the number.
func UpstreamPoolLabel(n int) string {
	if n == UpstreamPoolProfile {
		return "profile"
	}
	return fmt.Sprint(n)
}

func caseLabel(ms int) string {
	if ms == CaseOff {
		return "off"
	}
	return fmt.Sprintf("%d ms", ms)
}

// runner is the state the points of one stack share.
type runner struct {
	cfg     Config
	w       io.Writer
	out     string // OUT, absolute
	workDir string
	// stateDir is bench.PointOptions.StateDir (WORKER_STATE).
	stateDir string
	stack    *vendormock.Stack
	conn     *amqp.Connection
	env      results.Environment
}

// point runs one point with the sampler around it.
func (r *runner) point(ctx context.Context, spec Spec) (Point, error) {
	if r.stack.ServerDelayMS != spec.DelayMS {
		// WireMock's stubs carry the think time: register them again.
		r.stack.ServerDelayMS = spec.DelayMS
		if err := r.stack.ResetStubs(ctx); err != nil {
			return Point{}, fmt.Errorf("point %s: set think time: %w", spec.Name(), err)
		}
	}
	p := Point{
		Name: spec.Name(), Series: spec.Series, Driver: spec.Driver, Workers: spec.Workers, Concurrency: spec.Concurrency, Repeat: spec.Repeat,
		ServerDelayMS: spec.DelayMS, RTTMS: r.cfg.RTTMS(), HTTPVersion: r.cfg.HTTPVersion, Count: spec.Count, Warmup: r.cfg.Warmup,
		Lost: -1, Duplicates: -1, Environment: r.env, Provenance: r.cfg.Provenance,
		UpstreamKeepalive: r.stack.Profile.Nginx.UpstreamKeepalive,
	}
	s := NewSampler(r.stack, SampleInterval)
	nginxID, idErr := r.stack.ServiceContainerID(vendormock.AliasNginx)
	var opens0 TCPOpens
	if idErr == nil {
		opens0, idErr = containerTCPOpens(ctx, nginxID)
	}
	s.Start(ctx)
	var err error
	if spec.Driver == results.DriverDirect {
		err = r.direct(ctx, spec, &p)
	} else {
		err = r.worker(ctx, spec, &p)
	}
	series := s.Stop(context.WithoutCancel(ctx))
	if err != nil {
		return Point{}, err
	}
	p.SampleErrors = series.Errors
	if idErr == nil {
		var opens1 TCPOpens
		if opens1, idErr = containerTCPOpens(ctx, nginxID); idErr == nil {
			n := opens1.Active - opens0.Active
			p.UpstreamOpens = &n
		}
	}
	if idErr != nil {
		p.SampleErrors = append(p.SampleErrors, fmt.Sprintf("nginx upstream connections: %v", idErr))
	}
	if from, to, ok := series.Window(); ok {
		p.WindowS = round3(to.Sub(from).Seconds())
		p.Containers = series.CPU(from, to)
		p.HostBusyCores = round3(series.HostBusy(from, to) * float64(p.Environment.CPUs))
		p.Bottleneck = Bottleneck(p.Containers, p.Environment.CPUs, p.HostBusyCores)
		p.RSS = series.RSS(from, to, SampleInterval)
	}
	p.Environment.Date = time.Now().UTC().Format(time.RFC3339)
	return p, nil
}

// pointDir is the point's folder in the work dir (records, access logs).
func (r *runner) pointDir(spec Spec) (string, error) {
	dir := filepath.Join(r.workDir, spec.Name())
	if err := os.MkdirAll(filepath.Join(dir, "nginx"), 0o755); err != nil {
		return "", fmt.Errorf("create point dir: %w", err)
	}
	return dir, nil
}

// worker runs spec on spec.Workers replicas (Config.WorkerLedger): the
// bench's point.
func (r *runner) worker(ctx context.Context, spec Spec, p *Point) error {
	dir, err := r.pointDir(spec)
	if err != nil {
		return err
	}
	bcfg := r.cfg.Config.Config
	bcfg.Modes, bcfg.RTTs, bcfg.Out = []string{vendorapi.PooledName}, []int{r.cfg.RTTMS()}, dir
	bcfg.Workers, bcfg.Concurrency, bcfg.ServerDelayMS, bcfg.Count = spec.Workers, spec.Concurrency, spec.DelayMS, spec.Count
	bcfg.Ledger, bcfg.Active = r.cfg.WorkerLedger()
	// The bench's own lines stay out of the scale's log; its progress
	// lines ("pooled 10 ms: 23568/235683 handled (10%) in 61.0 s") come
	// through with the point's name, so a long point is not silent.
	b := bench.NewBench(bench.PointOptions{Config: bcfg, Log: lab.PrefixWriter{W: io.Discard}, Out: dir, WorkDir: dir, StateDir: r.stateDir,
		Progress: lab.PrefixWriter{W: r.w, Prefix: "[lab] " + spec.Name() + ": "},
		RunID:    bench.NewRunID(), Stack: r.stack, AMQP: r.conn, Env: r.env})
	res, err := b.RunPoint(ctx, vendorapi.PooledName, r.cfg.RTTMS())
	if err != nil {
		return err
	}
	p.Ledger, p.WorkerState = bcfg.Ledger, res.WorkerState
	p.SendsPerS, p.WallS = res.SendsPerS, res.WallS
	p.LatencyMS = Latency{P50: res.LatencyMS.P50, P99: res.LatencyMS.P99}
	p.CPUMSPerSend, p.ClientCPUMSPerSend, p.Outcomes = res.CPUMSPerSend, res.ClientCPUMSPerSend, res.Outcomes
	if res.Reconcile != nil {
		p.Lost, p.Duplicates = res.Reconcile.Lost, res.Reconcile.Duplicates
	}
	p.RateLimit = res.RateLimit
	if r.cfg.CPUProfile == "on" {
		split, err := r.keepProfiles(dir, spec)
		if err != nil {
			return fmt.Errorf("point %s: %w", spec.Name(), err)
		}
		p.CPUSplit = &split
	}
	return nil
}

// keepProfiles copies the point's replica profiles (the bench's
// dir/pprof/) to OUT/pprof/<point>-<mode>-<rtt>ms-<replica>.pprof and splits them (SplitProfiles) over the
// messages the replicas handled (measured and warm-up).
func (r *runner) keepProfiles(dir string, spec Spec) (CPUSplit, error) {
	found, err := filepath.Glob(filepath.Join(dir, "pprof", "*.pprof"))
	if err != nil || len(found) == 0 {
		return CPUSplit{}, fmt.Errorf("keep cpu profiles: none in %s (%v)", filepath.Join(dir, "pprof"), err)
	}
	var names []string
	for _, f := range found {
		// The bench names it after its mode and RTT: the point's name
		// keeps the points' profiles apart.
		name := filepath.Join("pprof", spec.Name()+"-"+strings.TrimPrefix(filepath.Base(f), "worker-"))
		data, err := os.ReadFile(f)
		if err == nil {
			err = os.MkdirAll(filepath.Join(r.out, "pprof"), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(r.out, name), data, 0o644)
		}
		if err != nil {
			return CPUSplit{}, fmt.Errorf("keep cpu profile %s: %w", f, err)
		}
		names = append(names, name)
	}
	return SplitProfiles(found, names, spec.Count+r.cfg.Warmup)
}

// direct runs spec with the bare client (the matrix's direct driver).
func (r *runner) direct(ctx context.Context, spec Spec, p *Point) error {
	mcfg := r.cfg.Config
	mcfg.Count, mcfg.ServerDelayMS, mcfg.RTTs = spec.Count, spec.DelayMS, []int{r.cfg.RTTMS()}
	// Each point its own folder: the cell's name repeats across series.
	c, err := matrix.DirectCell(ctx, mcfg, r.stack, filepath.Join(r.workDir, spec.Name()), r.env, vendorapi.PooledName, spec.Concurrency)
	if err != nil {
		return err
	}
	p.SendsPerS, p.WallS = c.ReqPerS, c.WallS
	p.LatencyMS = Latency{P50: c.LatencyMS.P50, P99: c.LatencyMS.P99}
	p.CPUMSPerSend, p.ClientCPUMSPerSend, p.Outcomes = c.CPUMSPerReq, c.ClientCPUMSPerReq, c.Outcomes
	return nil
}
