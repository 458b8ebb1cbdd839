package scenarios

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
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

// runReplicas runs one bench run on b.cfg.Workers replicas: they consume
// the published queue under single active consumer until n records exist
// across their files; then each replica's /metrics is scraped, the
// replicas are stopped (SIGTERM) and removed, and their records are merged
// into recordsPath (lab.RecordSet.Merged) for the run's metrics and the
// reconciler. Errors: the replicas' (start, stall, timeout), the merge's.
func (b *bench) runReplicas(ctx context.Context, args []string, runDir, runName, label, recordsPath string, n, rtt int) (_ *results.MetricsCheck, err error) {
	ws, err := b.stack.StartReplicas(ctx, vendormock.ReplicaOptions{
		Name: runName, Count: b.cfg.Workers, Ledger: b.cfg.Ledger, QueueType: b.cfg.QueueType,
		PostgresImage: lab.PostgresImage(),
		Args:          lab.StripFlags(args, "records", "ledger", "max-messages", "cpu-profile"),
		Env:           map[string]string{"GOMAXPROCS": "1"},
		CPUs:          1, OutDir: runDir,
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
	if err := b.waitRecords(ctx, set, label, n, rtt); err != nil {
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
	logf(b.w, "%s: %d replicas (%s ledger, %s queues); records per replica: %s", label, b.cfg.Workers, b.cfg.Ledger, b.cfg.QueueType, strings.Join(handledBy, ", "))
	return checkMetrics(reps), nil
}

// waitRecords polls set until it holds n records, with the progress line;
// it errors after StallTimeout without a new record or WorkerTimeout.
func (b *bench) waitRecords(ctx context.Context, set *lab.RecordSet, label string, n, rtt int) error {
	prog := NewProgress(b.w, label, n)
	defer prog.Finish()
	timeout, stall := WorkerTimeout(n, rtt, b.cfg.ServerDelayMS), StallTimeout
	if b.timeout > 0 {
		timeout = b.timeout
	}
	if b.stall > 0 {
		stall = b.stall
	}
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
