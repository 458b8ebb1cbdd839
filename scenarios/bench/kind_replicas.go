package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// MessagesMetric is the worker's counter of handled messages by outcome
// (label "outcome"), one per record written (worker/metrics.go).
const MessagesMetric = "notifier_worker_messages_total"

// ErrMetricsMismatch is wrapped when a replica's /metrics disagree with
// its records file.
var ErrMetricsMismatch = errors.New("worker metrics disagree with the records")

// messagesByOutcome parses a Prometheus text exposition and returns
// MessagesMetric by outcome, zeros left out. Errors: the text does not
// parse, the metric is absent, a sample lacks the outcome label.
func messagesByOutcome(text string) (map[outcome.Outcome]int, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	fam, ok := fams[MessagesMetric]
	if !ok {
		return nil, fmt.Errorf("parse metrics: no %s", MessagesMetric)
	}
	out := map[outcome.Outcome]int{}
	for _, m := range fam.GetMetric() {
		o := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" {
				o = l.GetValue()
			}
		}
		if o == "" {
			return nil, fmt.Errorf("parse metrics: %s sample without an outcome label", MessagesMetric)
		}
		if v := int(m.GetCounter().GetValue()); v != 0 {
			out[outcome.Outcome(o)] += v
		}
	}
	return out, nil
}

// checkMetrics compares each replica's scraped metrics with its records.
func checkMetrics(reps []results.ReplicaMetrics) *results.MetricsCheck {
	c := &results.MetricsCheck{OK: true, Replicas: reps}
	var bad []string
	for _, r := range reps {
		switch {
		case r.Error != "":
			bad = append(bad, r.ID+": "+r.Error)
		case !maps.Equal(r.Metrics, r.Records):
			bad = append(bad, fmt.Sprintf("%s: metrics %s, records %s", r.ID, report.FormatCounts(r.Metrics), report.FormatCounts(r.Records)))
		}
	}
	if len(bad) > 0 {
		c.OK, c.Detail = false, strings.Join(bad, "; ")
	}
	return c
}

// replicasKind runs Config.Workers Go worker replicas, under single
// active consumer or all active (Config.Active), and checks every replica's /metrics against its records.
type replicasKind struct {
	b     *Bench
	check *results.MetricsCheck
}

func (k *replicasKind) run(ctx context.Context, p *point) error {
	b := k.b
	logf(b.w, "%s: self-check RTT %.1f ms; %d messages published; starting %d worker replicas (1 CPU each)", p.label, lab.MS(p.selfRTT), p.n, b.cfg.Workers)
	check, err := b.runReplicas(ctx, p.wcfg, p.dir, p.name, p.label, p.recordsPath, p.n, p.rtt)
	if err != nil {
		return p.fail("replicas", err)
	}
	k.check = check
	p.ledgerPath = "" // on the replicas' volumes or in PostgreSQL: not read
	return nil
}

func (k *replicasKind) readRecords(_ *point, _ []records.Record, err error) error { return err }

// complete records the replicas and their metrics check in r; a check
// that failed writes r (for inspection) and fails the point.
func (k *replicasKind) complete(p *point, r *results.Result, entries []vendormock.AccessEntry) error {
	b, mcheck := k.b, k.check
	r.Workers, r.Ledger, r.QueueType, r.MetricsCheck = b.cfg.Workers, b.cfg.Ledger, b.cfg.QueueType, mcheck
	r.BrokerNodes = b.cfg.BrokerNodes
	if b.cfg.Active == ActiveCompeting {
		r.Active = ActiveCompeting
	}
	if lim := b.stack.RateLimit; lim > 0 {
		act := b.cfg.ActiveWorkers()
		r.RateLimit = CheckRateLimit(entries, StackSendPath(b.stack), lim, act, b.sendInterval())
		rl := r.RateLimit
		logf(b.w, "%s: rate limit %d sends/s, %d active worker(s) paced at %.2f/s each (0 = not paced): vendor accepted %d at %.1f/s (%.1f%% of the limit; steady %.1f/s, %.1f%%), refused %d (429, %.2f%%)",
			p.label, lim, act, rl.WorkerShareSendsPerS, rl.Accepted, rl.AcceptedPerS, 100*rl.OfLimit, rl.SteadyPerS, 100*rl.SteadyOfLimit, rl.Refused, 100*rl.RefusedShare)
	}
	if !mcheck.OK {
		logf(b.w, "%s: ERROR: worker /metrics disagree with the records: %s", p.label, mcheck.Detail)
		if err := results.WriteResult(b.out, *r); err != nil {
			return err
		}
		return p.fail("metrics check", fmt.Errorf("%w: %s", ErrMetricsMismatch, mcheck.Detail))
	}
	logf(b.w, "%s: worker /metrics agree with the records (%d replicas)", p.label, len(mcheck.Replicas))
	return nil
}

// runReplicas runs one bench run on b.cfg.Workers replicas: they consume
// the published queue (Config.Active) until n records exist across their
// files and n of them are settled (waitSettled); then each replica's /metrics is scraped, the
// replicas are stopped (SIGTERM) and removed, and their records are merged
// into recordsPath (lab.RecordSet.Merged) for the run's metrics and the
// reconciler. Errors: the replicas' (start, stall, timeout), the merge's.
func (b *Bench) runReplicas(ctx context.Context, wcfg worker.Config, runDir, runName, label, recordsPath string, n, rtt int) (_ *results.MetricsCheck, err error) {
	// Each active worker paces at its share of the vendor's limit.
	wcfg.SendInterval = b.sendInterval()
	ws, err := b.stack.StartReplicas(ctx, vendormock.ReplicaOptions{
		Name: runName, Count: b.cfg.Workers, Ledger: b.cfg.Ledger, QueueType: b.cfg.QueueType,
		NoSingleActiveConsumer: b.cfg.Active == ActiveCompeting,
		PostgresImage:          b.cfg.Images.Postgres,
		Args:                   lab.ReplicaArgs(wcfg),
		Grace:                  worker.ShutdownGrace(wcfg),
		Env:                    map[string]string{"GOMAXPROCS": "1"},
		CPUs:                   1, OutDir: runDir,
	})
	if ws != nil {
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
			defer cancel()
			if cerr := ws.Close(cctx); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	set := lab.NewRecordSet()
	for _, r := range ws.Replicas() {
		set.Add(r.RecordsPath())
	}
	lim := rateLimits(b.limits(n, rtt), n, b.stack.RateLimit)
	if err := waitRecords(ctx, b.prog, set, label, n, lim); err != nil {
		return nil, err
	}
	if err := waitSettled(ctx, b.w, set, label, n, lim); err != nil {
		return nil, err
	}
	var reps []results.ReplicaMetrics
	for _, r := range ws.Replicas() {
		rm := results.ReplicaMetrics{ID: r.ID, Records: map[outcome.Outcome]int{}}
		if f := set.File(r.RecordsPath()); f != nil {
			rm.Records = f.Counts()
			rm.Handled = f.Len()
		}
		text, err := r.Metrics(ctx)
		if err == nil {
			rm.Metrics, err = messagesByOutcome(text)
		}
		if err != nil {
			rm.Error = err.Error()
		}
		reps = append(reps, rm)
	}
	for _, r := range ws.Replicas() {
		if err := r.Stop(ctx); err != nil {
			return nil, err
		}
		if b.cfg.CPUProfile == "on" {
			// Written by the replica when SIGTERM ended it.
			dst := filepath.Join(b.out, "pprof", "worker-"+runName+"-"+r.ID+".pprof")
			if err := copyFile(filepath.Join(runDir, lab.ReplicaProfile(r.ID)), dst); err != nil {
				return nil, fmt.Errorf("keep cpu profile of %s: %w", r.ID, err)
			}
		}
	}
	// Records a replica wrote while stopping count too.
	if err := set.Poll(); err != nil {
		return nil, err
	}
	w, err := records.Open(recordsPath)
	if err != nil {
		return nil, err
	}
	for _, rec := range set.Merged() {
		if err := w.Write(rec); err != nil {
			_ = w.Close()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("write merged records: %w", err)
	}
	var handledBy []string
	for _, r := range reps {
		handledBy = append(handledBy, fmt.Sprintf("%s %d", r.ID, r.Handled))
	}
	logf(b.w, "%s: %d replicas (%s ledger, %s queues, %d active); records per replica: %s", label, b.cfg.Workers, b.cfg.Ledger, b.cfg.QueueType, b.cfg.ActiveWorkers(), strings.Join(handledBy, ", "))
	return checkMetrics(reps), nil
}

// waitRecords polls set until it holds n records, with the progress line
// (to w); it errors after lim.stall without a new record or lim.timeout.
func waitRecords(ctx context.Context, w io.Writer, set *lab.RecordSet, label string, n int, lim waitLimits) error {
	prog := NewProgress(w, label, n)
	defer prog.Finish()
	timeout, stall := lim.timeout, lim.stall
	deadline := time.Now().Add(timeout)
	handled, lastChange := 0, time.Now()
	for handled < n {
		if err := lab.Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
		if err := set.Poll(); err != nil {
			return err
		}
		if done := set.Len(); done != handled {
			handled, lastChange = done, time.Now()
			prog.Set(done)
		}
		switch {
		case handled >= n:
		case time.Since(lastChange) > stall:
			return fmt.Errorf("%w: no message handled for %s (%d of %d)", ErrWorkerTimeout, stall, handled, n)
		case time.Now().After(deadline):
			return fmt.Errorf("%w: %d of %d messages handled in %s", ErrWorkerTimeout, handled, n, timeout)
		}
	}
	return nil
}
