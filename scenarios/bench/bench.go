package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
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
	// WorkerLogLines is how much of the worker's log a RunError carries.
	WorkerLogLines = 40
)

// Paths inside the worker container (vendormock.StartWorker mounts OutDir
// at /out and the lab CA at /lab/ca.pem).
const (
	PublishedFile  = "published.jsonl" // on the host only, for the reconciler
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
// OUT/summary.md, OUT/charts/ and OUT/verdict.json (delivery and
// cfg.Thresholds, Judge) and prints the summary to w. A lost or
// duplicated message (ErrDelivery) or a crossed threshold (ErrThreshold)
// is an error after every file is written. Progress goes
// to w (a bar on a terminal, lines otherwise).
//
// Images come from vendormock.ImagesFromEnv (LAB_IMAGE_*, written by the
// images script). The stack and the worker are removed on return, also
// when ctx is cancelled (Ctrl-C). The first failing run stops the lab with
// a *RunError; a per-send failure is not an error (it is data: outcomes,
// errors in the result).
func Run(ctx context.Context, cfg Config, w io.Writer) (err error) {
	images := cfg.Images
	if err := images.Validate(); err != nil {
		return fmt.Errorf("read images: %w", err)
	}
	if images.Worker == "" {
		return fmt.Errorf("read images: %w: LAB_IMAGE_WORKER is empty; build it with vendormock/images/ensure-images.sh (./run.sh does)", ErrNoWorkerImage)
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	runID := NewRunID()
	if err := outdir.Claim(out, runID); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "nginx"), 0o755); err != nil {
		return fmt.Errorf("create OUT: %w", err)
	}
	profile, err := ResolveProfile(cfg.Profile)
	if err != nil {
		return err
	}
	sel, err := vendormock.WorkerImage(cfg.Worker, cfg.Images.Var)
	if err != nil {
		return fmt.Errorf("select worker: %w", err)
	}
	workDir := filepath.Join(lab.RepoRoot(), ".lab", "runs", runID)
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return fmt.Errorf("create work dir: %w", err)
	}
	// One id names the run (the provenance's, below); the work dir's name
	// is only where the records and ledgers wait for the reconcile command.
	logf(w, "settings: COUNT=%d WARMUP=%d RTTS=%v MODES=%v SERVER_DELAY_MS=%d PER_REQUEST_TLS=%s TCP_HANDSHAKE=%s %s; images %s; work dir %s",
		cfg.Count, cfg.Warmup, cfg.RTTs, cfg.Modes, cfg.ServerDelayMS, cfg.PerRequestTLS, cfg.TCPHandshake, cfg.Transport(), images.Kind, workDir)
	if p := cfg.Provenance; p != nil {
		logf(w, "run id %s (results/runs/ name and provenance), commit %s (%s)", p.RunID, p.ShortCommit(), cmp.Or(p.CommitSource, "unknown"))
	}
	if cfg.Replicated() {
		logf(w, "WORKERS=%d LEDGER=%s QUEUE_TYPE=%s BROKER_NODES=%d ACTIVE=%s RATE_LIMIT=%d: each run on worker replicas, %d active", cfg.Workers, cfg.Ledger, cfg.QueueType, max(cfg.BrokerNodes, 1), cmp.Or(cfg.Active, DefaultActive), cfg.RateLimit, cfg.ActiveWorkers())
	}

	logf(w, "starting the stack (RabbitMQ, WireMock, nginx, Toxiproxy)")
	stack, err := vendormock.Start(ctx, cfg.stackOptions(profile, images, filepath.Join(workDir, "stack"), w))
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

	stateDir, cleanState, err := PrepareStateDir(cfg, runID)
	if err != nil {
		return err
	}
	defer cleanState()
	if stateDir != "" {
		logf(w, "worker ledger and records on tmpfs during each run (%s); WORKER_STATE=disk puts them on disk", stateDir)
	}
	b := NewBench(PointOptions{Config: cfg, Worker: sel, Log: w, Out: out, WorkDir: workDir, StateDir: stateDir, RunID: runID, Stack: stack, AMQP: conn,
		Env: DescribeEnvironment(images, cfg.HostNote)})
	var rs []results.Result
	prevRTT := -1
	for _, rtt := range cfg.RTTs {
		for _, mode := range cfg.RunModes() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if prevRTT >= 0 {
				// Let the previous point's connections finish closing
				// through the toxics before they change (LinkSettle).
				if err := lab.Sleep(ctx, LinkSettle(prevRTT)); err != nil {
					return err
				}
			}
			prevRTT = rtt
			// Each point's sends are capped so it takes about PointBudget
			// (a sweep up to 380 ms stays within minutes); the result
			// records what was asked when capped.
			count, warmup, err := netmodel.PointCounts(cfg.Count, cfg.Warmup, mode, rtt, cfg.ServerDelayMS, cfg.PerRequestTLS, cfg.TCPHandshake)
			if err != nil {
				return err
			}
			pb := *b
			pb.cfg.Count, pb.cfg.Warmup = count, warmup
			if count != cfg.Count || warmup != cfg.Warmup {
				logf(w, "%s at %d ms: COUNT %d and WARMUP %d capped to %d and %d (about %s per point)", mode, rtt, cfg.Count, cfg.Warmup, count, warmup, netmodel.PointBudget)
			}
			r, err := pb.RunPoint(ctx, mode, rtt)
			if err != nil {
				return err
			}
			if count != cfg.Count || warmup != cfg.Warmup {
				r.CountRequested, r.WarmupRequested = cfg.Count, cfg.Warmup
			}
			if err := results.WriteResult(out, r); err != nil {
				return err
			}
			logf(w, "%s at %d ms: %.1f sends/s, p50 %.1f ms, p99 %.1f ms, CPU %.2f ms/send, %d TCP connections, outcomes %s -> %s",
				mode, rtt, r.SendsPerS, r.LatencyMS.P50, r.LatencyMS.P99, r.CPUMSPerSend, r.TCPConnections,
				report.FormatCounts(r.Outcomes), filepath.Join(cfg.Out, results.ResultFile(r)))
			rs = append(rs, r)
		}
	}
	logf(w, "records, ledgers and published lists of this run (for the reconcile command): %s", workDir)
	fmt.Fprintln(w)
	if err := report.NoteOthers(out, rs, w); err != nil {
		return err
	}
	results.SortResults(rs)
	v := results.NewVerdict(Judge(rs, cfg.Thresholds), cfg.Provenance)
	if err := results.WriteVerdict(out, v); err != nil {
		return err
	}
	if err := report.WriteReport(out, rs, w, report.WithBulk(cfg.Bulk), report.WithVerdict(&v)); err != nil {
		return err
	}
	// Delivery first, thresholds last: the last line names a threshold
	// when one was crossed.
	return errors.Join(DeliveryError(w, DeliveryFailures(cfg.Out, rs)), ThresholdError(w, cfg.Out, v))
}

// LinkSettle is how long the bench waits between two points before it
// changes the proxy's toxics: two RTTs of the previous point (a close
// crosses the latency toxics both ways) and a second. Toxiproxy's server
// (v2.5.0 to v2.12.0, the newest) panics with an index out of range in
// ToxicLink.AddToxic when toxics are replaced while a connection is still
// closing through them, which a sweep hit at 380 ms
// (docs/environment.md#addtoxic-panic).
func LinkSettle(prevRTTMS int) time.Duration {
	return 2*time.Duration(prevRTTMS)*time.Millisecond + time.Second
}

// NewRunID returns a short unique id for refkeys and the work dir:
// "20261130T030405-1a2b" (UTC time and 16 random bits).
func NewRunID() string {
	return fmt.Sprintf("%s-%04x", time.Now().UTC().Format("20060102T150405"), rand.IntN(0x10000))
}

// outcomeWarning returns "" when a run ended as it should: its valid
// messages (WARMUP+COUNT) all SENT and its malformed ones (MALFORMED) all
// INVALID. Otherwise it says which of the two failed, with every count.
func outcomeWarning(outcomes map[outcome.Outcome]int, valid, malformed int) string {
	var bad []string
	if outcomes[outcome.Sent] != valid {
		bad = append(bad, fmt.Sprintf("not every valid message was SENT (%d of %d)", outcomes[outcome.Sent], valid))
	}
	if outcomes[outcome.Invalid] != malformed {
		bad = append(bad, fmt.Sprintf("not every malformed message was INVALID (%d of %d)", outcomes[outcome.Invalid], malformed))
	}
	if len(bad) == 0 {
		return ""
	}
	return strings.Join(bad, "; ") + ": " + report.FormatCounts(outcomes)
}
