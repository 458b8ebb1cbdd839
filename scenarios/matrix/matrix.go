package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Defaults of the matrix (docs/studies.md, study A: 800 requests plus 50
// warm-up per case, loopback, concurrency 1, 8 and 32).
const (
	DefaultCount  = 800
	DefaultWarmup = 50
	// DefaultOut is the committed matrix's folder: OUT=results/matrix
	// refreshes it; the lab command gives a run without OUT a folder of
	// its own (outdir.RunsDir/<run id>).
	DefaultOut = "results/matrix"
)

// Config is one run of the published matrix: every scheme x driver x
// mode x concurrency, at one RTT. It carries the bench's Config, not a
// copy of its fields: COUNT, WARMUP, MODES, SERVER_DELAY_MS,
// PER_REQUEST_TLS, HTTP_VERSION, POOL_SIZE, KEEPALIVE_TIMEOUT, PROFILE,
// OUT, the images, the host note and the Go worker's knobs (WorkerKnobs)
// reach every cell as they are; RTTs holds the matrix's one RTT (ms, 0 =
// loopback as study A); each worker cell sets Scheme, Concurrency, Modes
// and Out of its own copy.
type Config struct {
	bench.Config
	Schemes       []vendormock.Scheme // http, https, mtls
	Concurrencies []int               // sends in flight, e.g. 1, 8, 32
	Drivers       []string            // DriverDirect, DriverWorker
}

// RTTMS is the matrix's RTT, ms: RTTs' first (and only) value, 0 when
// RTTs is empty.
func (c Config) RTTMS() int {
	if len(c.RTTs) == 0 {
		return 0
	}
	return c.RTTs[0]
}

// DefaultConfig is study A's matrix at loopback: 3 schemes x 2
// strategies x concurrency 1/8/32, both drivers, no server delay, the
// per-request client at Go's default TLS 1.3; the rest is the bench's
// defaults.
func DefaultConfig() Config {
	b := bench.DefaultConfig()
	b.Count, b.Warmup, b.RTTs = DefaultCount, DefaultWarmup, []int{0}
	b.ServerDelayMS, b.PerRequestTLS, b.HTTPVersion, b.Out = 0, "1.3", "1.1", DefaultOut
	return Config{
		Config:        b,
		Schemes:       slices.Clone(vendormock.Schemes),
		Concurrencies: []int{1, 8, 32},
		Drivers:       []string{results.DriverDirect, results.DriverWorker},
	}
}

// matrixCellSpec names one cell.
type matrixCellSpec struct {
	scheme      vendormock.Scheme
	driver      string
	mode        string
	concurrency int
}

func (c matrixCellSpec) name() string {
	return results.MatrixCellName(c.driver, string(c.scheme), c.mode, c.concurrency)
}

// plan lists the cells in run order: scheme (one stack each), driver,
// mode, concurrency.
func (cfg Config) plan() []matrixCellSpec {
	var cells []matrixCellSpec
	for _, s := range cfg.Schemes {
		for _, d := range cfg.Drivers {
			for _, m := range cfg.Modes {
				for _, c := range cfg.Concurrencies {
					cells = append(cells, matrixCellSpec{s, d, m, c})
				}
			}
		}
	}
	return cells
}

// Run runs every cell of cfg and writes OUT/cell-*.json, then
// OUT/matrix.md and OUT/charts/ (WriteMatrixReport). One stack per scheme;
// each cell starts a worker container with 1 CPU. A progress line per cell
// gives its figures, the time so far and an ETA. The first failing cell
// stops the run with a *RunError; containers are removed on return.
func Run(ctx context.Context, cfg Config, w io.Writer) error {
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
	workDir := filepath.Join(lab.RepoRoot(), ".lab", "runs", "matrix-"+runID)
	cells := cfg.plan()
	report.Logf(w, "matrix %s: %d cells (schemes %v, drivers %v, modes %v, concurrency %v), RTT %d ms, COUNT=%d WARMUP=%d SERVER_DELAY_MS=%d HTTP_VERSION=%s; work dir %s",
		runID, len(cells), cfg.Schemes, cfg.Drivers, cfg.Modes, cfg.Concurrencies, cfg.RTTMS(), cfg.Count, cfg.Warmup,
		cfg.ServerDelayMS, cfg.HTTPVersion, workDir)
	env := bench.DescribeEnvironment(images, cfg.HostNote)
	start := time.Now()
	var measured []results.MatrixCell
	done := 0
	for _, scheme := range cfg.Schemes {
		err := func() (err error) {
			stack, err := vendormock.Start(ctx, vendormock.Options{
				ProfileDir: profile, ServerDelayMS: cfg.ServerDelayMS, KeepaliveTimeout: cfg.KeepaliveTimeout,
				Scheme: scheme, HTTPVersion: cfg.HTTPVersion, Images: images, Session: cfg.Session,
				NoUpstreamKeepalive: cfg.UpstreamKeepalive == "off",
				WorkDir:             filepath.Join(workDir, "stack-"+string(scheme)),
				Log:                 lab.PrefixWriter{W: io.Discard},
			})
			if err != nil {
				return fmt.Errorf("start stack (%s): %w", scheme, err)
			}
			defer func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bench.CleanupTimeout)
				defer cancel()
				if cerr := stack.Close(cctx); cerr != nil {
					err = errors.Join(err, fmt.Errorf("close stack: %w", cerr))
				}
			}()
			report.Logf(w, "%s stack ready in %.1f s", scheme, stack.StartDuration.Seconds())
			if err := stack.SetRTT(ctx, cfg.RTTMS()); err != nil {
				return fmt.Errorf("set rtt: %w", err)
			}
			m := &matrixRun{cfg: cfg, w: w, workDir: workDir, outDir: out, stack: stack, env: env}
			for _, spec := range cells {
				if spec.scheme != scheme {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				cell, err := m.runCell(ctx, spec)
				if err != nil {
					return err
				}
				if err := results.WriteMatrixCell(out, cell); err != nil {
					return err
				}
				measured = append(measured, cell)
				done++
				el := time.Since(start)
				eta := time.Duration(float64(el) / float64(done) * float64(len(cells)-done))
				report.Logf(w, "cell %d/%d %-34s %8.1f req/s  p50 %6.2f  p99 %6.2f  p99.9 %6.2f ms  CPU %.3f ms/req  %4d conns  %s; elapsed %s, ETA %s",
					done, len(cells), spec.name(), cell.ReqPerS, cell.LatencyMS.P50, cell.LatencyMS.P99, cell.LatencyMS.P999,
					cell.CPUMSPerReq, cell.Connections, cell.Check(), el.Round(time.Second), eta.Round(time.Second))
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	report.Logf(w, "matrix done in %s", time.Since(start).Round(time.Second))
	if err := report.WriteMatrixReport(out, measured, w); err != nil {
		return err
	}
	var bad []string
	for _, c := range measured {
		if chk := c.Check(); chk != "ok" {
			bad = append(bad, fmt.Sprintf("%s: %s (%s)", c.Name(), chk, filepath.Join(cfg.Out, results.MatrixCellFileName(c))))
		}
	}
	return bench.DeliveryError(w, bad)
}

// matrixRun is the state of the cells of one stack.
type matrixRun struct {
	cfg     Config
	w       io.Writer
	workDir string
	outDir  string // OUT, absolute
	stack   *vendormock.Stack
	env     results.Environment
}

// runCell runs one cell with its driver, then adds the server side's
// evidence (finishServer).
func (m *matrixRun) runCell(ctx context.Context, spec matrixCellSpec) (results.MatrixCell, error) {
	watch, err := m.watchServer(ctx)
	if err != nil {
		return results.MatrixCell{}, err
	}
	run := m.runWorker
	if spec.driver == results.DriverDirect {
		run = m.runDirect
	}
	c, err := run(ctx, spec)
	if err != nil {
		return c, err
	}
	return c, m.finishServer(ctx, watch, &c)
}

// transport is the cell's transport.
func (m *matrixRun) transport(spec matrixCellSpec) results.Transport {
	return results.Transport{Scheme: spec.scheme, Concurrency: spec.concurrency, HTTPVersion: m.cfg.HTTPVersion, PoolSize: m.cfg.PoolSize}
}

// newCell fills the fields every cell shares.
func (m *matrixRun) newCell(spec matrixCellSpec) results.MatrixCell {
	c := results.MatrixCell{
		Scheme: string(spec.scheme), Driver: spec.driver, Mode: spec.mode, Concurrency: spec.concurrency,
		HTTPVersion: m.cfg.HTTPVersion, PoolSize: m.transport(spec).PoolFor(spec.mode), RTTMS: m.cfg.RTTMS(), Count: m.cfg.Count,
		Warmup: m.cfg.Warmup, ServerDelayMS: m.cfg.ServerDelayMS, Environment: m.env,
		Lost: -1, Duplicates: -1, Provenance: m.cfg.Provenance,
	}
	if spec.mode == vendorapi.PerRequestName {
		c.TLSMax = m.cfg.PerRequestTLS
	}
	c.Environment.Date = time.Now().UTC().Format(time.RFC3339)
	return c
}

// runWorker runs the bench's path (publish, whole worker, reconcile) at
// the cell's concurrency.
func (m *matrixRun) runWorker(ctx context.Context, spec matrixCellSpec) (results.MatrixCell, error) {
	cellDir := filepath.Join(m.workDir, spec.name())
	if err := os.MkdirAll(filepath.Join(cellDir, "nginx"), 0o755); err != nil {
		return results.MatrixCell{}, fmt.Errorf("create cell dir: %w", err)
	}
	conn, err := amqp.Dial(m.stack.AMQPURL)
	if err != nil {
		return results.MatrixCell{}, fmt.Errorf("connect to rabbitmq: %w", err)
	}
	defer conn.Close()
	bcfg := m.cfg.Config
	bcfg.Modes, bcfg.RTTs, bcfg.Out = []string{spec.mode}, []int{m.cfg.RTTMS()}, cellDir
	bcfg.Scheme, bcfg.Concurrency = string(spec.scheme), spec.concurrency
	b := bench.NewBench(bench.PointOptions{Config: bcfg, Log: lab.PrefixWriter{W: io.Discard}, Out: cellDir, WorkDir: cellDir,
		RunID: bench.NewRunID(), Stack: m.stack, AMQP: conn, Env: m.env})
	r, err := b.RunPoint(ctx, spec.mode, m.cfg.RTTMS())
	if err != nil {
		return results.MatrixCell{}, err
	}
	runDir := filepath.Join(cellDir, bench.PointName(spec.mode, m.cfg.RTTMS()))
	c := m.newCell(spec)
	cellFromResult(&c, r)
	if err := addRecords(&c, filepath.Join(runDir, lab.RecordsFile), filepath.Join(runDir, bench.PublishedFile)); err != nil {
		return results.MatrixCell{}, err
	}
	c.Protocols = r.Protocols
	return c, nil
}
