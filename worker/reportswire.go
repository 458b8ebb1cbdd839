package worker

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/reports"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// DefaultReportSweep is how often the worker sweeps UNKNOWN entries for
// delivery reports (30 s).
const DefaultReportSweep = 30 * time.Second

// ReportsPath is where the ops server receives pushed delivery reports
// (POST; docs/deployment.md#delivery-reports).
const ReportsPath = "/reports"

// validateReports checks the delivery-report settings: VendorReports
// parses, a pushing vendor has a secret file and an ops address to push
// to, the sweep interval is positive. It reads no file.
func (c Config) validateReports() error {
	spec, err := vendorapi.ParseReportSpec(c.VendorReports)
	if err != nil {
		return fmt.Errorf("vendor reports: %w", err)
	}
	var probs []string
	if spec.Push != nil && c.ReportSecretFile == "" {
		probs = append(probs, "the vendor pushes reports: give -report-secret-file (REPORT_SECRET_FILE)")
	}
	if spec.Push != nil && c.OpsAddr == "" {
		probs = append(probs, "the vendor pushes reports to "+ReportsPath+" on -ops-addr: it must not be off")
	}
	if c.ReportSweep <= 0 {
		probs = append(probs, fmt.Sprintf("report sweep %s: want > 0", c.ReportSweep))
	}
	if len(probs) > 0 {
		return fmt.Errorf("vendor reports: %s", strings.Join(probs, "; "))
	}
	return nil
}

// startReports starts the delivery-report resolver of cfg (package
// worker/reports) on store: a sweep every cfg.ReportSweep, and the handler
// of pushed reports (nil when the vendor pushes none) for the ops server.
// With no VendorReports it starts nothing. stop ends the sweep and closes
// the journal. Errors: the spec does not parse, the secret file cannot be
// read or is empty, the journal cannot be opened, the metrics cannot be
// registered.
//
// clock is the worker's clock (Config.ClockStart may shift it): the
// ledger's entries are stamped by it, so the sweep's horizon and minimum
// age and the push handler read it too, never the host's wall clock
// beside it.
func startReports(ctx context.Context, cfg Config, store ledger.Store, client *vendorapi.Client, clock window.Clock, m *Metrics, log *slog.Logger) (push http.Handler, stop func(), err error) {
	spec, err := vendorapi.ParseReportSpec(cfg.VendorReports)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: vendor reports: %w", ErrConfig, err)
	}
	if !spec.Enabled() {
		return nil, func() {}, nil
	}
	var secret []byte
	if spec.Push != nil {
		raw, err := os.ReadFile(cfg.ReportSecretFile)
		if err != nil {
			return nil, nil, fmt.Errorf("read report secret file: %w", err)
		}
		if secret = []byte(strings.TrimRight(string(raw), "\r\n")); len(secret) == 0 {
			return nil, nil, fmt.Errorf("%w: report secret file %s is empty", ErrConfig, cfg.ReportSecretFile)
		}
	}
	rm, err := reports.NewMetrics(m.Registry)
	if err != nil {
		return nil, nil, fmt.Errorf("register report metrics: %w", err)
	}
	res := &reports.Resolver{Store: store, Spec: spec, MinAge: ShutdownGrace(cfg), Log: log.With("component", "reports"), Metrics: rm}
	closeJournal := func() {}
	if cfg.ReportJournal != "" {
		j, err := reports.OpenJournal(cfg.ReportJournal)
		if err != nil {
			return nil, nil, err
		}
		res.Journal, closeJournal = j, func() { _ = j.Close() }
	}
	drain := &unknownDrain{cfg: cfg, store: store, log: res.Log}
	drain.dirty.Store(true) // copies of settlements made before a restart
	res.Copies = drain
	sw := &reports.Sweeper{Resolver: res}
	if spec.Pull != nil {
		sw.Puller = reports.ClientPuller{Client: client, Spec: spec}
	}
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { sweepEvery(sctx, sw, drain, cfg.ReportSweep, clock, res.Log) })
	if spec.Push != nil {
		push = res.Handler(secret, clock.Now)
	}
	log.Info("delivery reports on", "push", spec.Push != nil, "pull", spec.Pull != nil,
		"horizon", spec.Horizon, "complete", spec.Complete, "sweep", cfg.ReportSweep.String())
	return push, func() { cancel(); wg.Wait(); closeJournal() }, nil
}

// sweepEvery sweeps every d until ctx is done, logging each sweep that
// found something, then drains the unknown queue of the copies settled.
func sweepEvery(ctx context.Context, sw *reports.Sweeper, drain *unknownDrain, d time.Duration, clock window.Clock, log *slog.Logger) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := sw.Sweep(ctx, clock.Now())
		if err != nil && ctx.Err() == nil {
			log.Warn("report sweep stopped early; the next one starts over", "error", err.Error())
		}
		if st.Unknown+st.Attempting > 0 {
			log.Info("report sweep", "unknown", st.Unknown, "attempting", st.Attempting, "pulled", st.Pulled, "settled", st.Settled,
				"not_found", st.NotFound, "not_sent", st.NotSent, "past_horizon", st.PastHorizon, "pull_errors", st.PullErrors)
		}
		drain.Drain(ctx)
	}
}

// withReports serves push on POST ReportsPath and everything else with ops.
func withReports(ops, push http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", ops)
	mux.Handle("POST "+ReportsPath, push)
	return mux
}
