package fault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// The idle race with the vendor's delivery reports (idle_race.reports,
// docs/scenarios.md#the-idle-race-with-delivery-reports): each lane's
// worker gets the profile's reports (reportsWorkerConfig), a report relay
// of its own limited to the lane's refkey prefix pushes straight to the
// lane worker's published ops port (not through Toxiproxy: it publishes
// one reports port for one proxy, and the lanes run at once), and after
// its sends the lane waits for its UNKNOWN to settle before it is judged.

// settleQuiet is how long a lane's unknown, main and retry queues must stay
// empty, with no new record, before the lane counts as settled: two
// report sweeps (a drain follows each sweep) and a second for a re-send
// in flight.
const settleQuiet = 2*reportSweep + time.Second

// checkReports validates idle_race.reports and idle_race.unknown_left.
func (r *IdleRaceSpec) checkReports(a AppliesTo, bad func(string, string, ...any)) {
	rs := r.Reports
	if rs == nil {
		if r.UnknownLeft != nil {
			bad("idle_race.unknown_left", "needs idle_race.reports")
		}
		return
	}
	rs.check("idle_race.reports", bad)
	switch u := r.UnknownLeft; {
	case u == nil:
		bad("idle_race.unknown_left", "idle_race.reports: say how many UNKNOWN are left for an operator (all lanes)")
	case rs.Complete != nil && *rs.Complete && (u.Min != 0 || u.Max != 0):
		bad("idle_race.unknown_left", "%s: the worker is told the vendor's reports are complete: want 0", u)
	}
	if len(a.Profiles) == 0 {
		bad("applies_to.profiles", "idle_race.reports: name the profiles whose pushed reports the race relies on (alimtalk)")
	}
	if !slices.Equal(a.Workers, []string{"go"}) {
		bad("applies_to.workers", "idle_race.reports: [go] (the lab configures the Go worker's reports)")
	}
}

// reportsNote describes rs for the result ("" when off).
func reportsNote(rs *ReportsRunSpec) string {
	if rs == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("pushed %d ms after the send was accepted", rs.DelayMS)}
	if rs.Pull {
		parts = append(parts, "pull on")
	}
	if rs.Horizon > 0 {
		parts = append(parts, "horizon "+rs.Horizon.D().String())
	}
	if rs.Complete != nil {
		parts = append(parts, fmt.Sprintf("complete: %t", *rs.Complete))
	}
	return strings.Join(parts, ", ")
}

// reportsOn configures the lane's worker for reports (wcfg, o) and
// remembers the secret and its folder; no-op when reports are off.
func (l *lane) reportsOn(wcfg *worker.Config, o *vendormock.WorkerOptions) error {
	rs := l.spec.Reports
	if rs == nil {
		return nil
	}
	if l.r.contract() {
		return fmt.Errorf("lane %s: idle_race.reports: the Go worker only", l.name())
	}
	secret, dir, err := reportsWorkerConfig(l.r.Stack.Profile, rs, wcfg)
	if err != nil {
		return fmt.Errorf("lane %s: %w", l.name(), err)
	}
	spec, err := vendorapi.ParseReportSpec(wcfg.VendorReports)
	if err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("lane %s: %w", l.name(), err)
	}
	l.secret, l.secretDir, l.horizon = secret, dir, spec.HorizonDuration()
	o.Args, o.PublishOps = wcfg.Args(), true
	o.ReadOnly = map[string]string{filepath.Join(dir, reportSecretName): reportSecretPath}
	return nil
}

// startRelay starts the lane's report relay towards wk's ops port.
func (l *lane) startRelay(ctx context.Context, wk *vendormock.Worker) error {
	rs := l.spec.Reports
	if rs == nil {
		return nil
	}
	ops, err := wk.OpsURL(ctx)
	if err != nil {
		return fmt.Errorf("lane %s: %w", l.name(), err)
	}
	l.relay, err = l.r.Stack.StartReportRelay(vendormock.ReportRelayOptions{
		Target: ops + worker.ReportsPath, Secret: l.secret, RefKeyPrefix: l.prefix,
		Delay: time.Duration(rs.DelayMS) * time.Millisecond, DropEvery: rs.DropEvery,
		Copies: rs.Copies, Jitter: time.Duration(rs.JitterMS) * time.Millisecond, Interim: rs.Interim,
		Forge: rs.Forge, Pull: rs.Pull, Seed: l.seed,
	})
	if err != nil {
		return fmt.Errorf("lane %s: %w", l.name(), err)
	}
	return nil
}

// closeRelay stops the lane's relay, if any, and logs what it did.
func (l *lane) closeRelay() {
	if l.relay == nil {
		return
	}
	st := l.relay.Close()
	l.relay = nil
	l.r.logf("lane %s: reports: %d accepted sends, %d pushed (%v), %d dropped, %d pushed again, %d served for pull",
		l.name(), st.Accepted, st.Pushed, st.Verdicts, st.Dropped, st.Retries, st.Served)
}

// removeSecret removes the lane's report secret folder, if any.
func (l *lane) removeSecret() {
	if l.secretDir != "" {
		_ = os.RemoveAll(l.secretDir)
		l.secretDir = ""
	}
}

// settleLimit bounds a lane's wait for its UNKNOWN to settle: the report
// delay, the horizon, four sweeps, settleQuiet and 20 s of slack.
func settleLimit(rs *ReportsRunSpec, horizon time.Duration) time.Duration {
	return time.Duration(rs.DelayMS)*time.Millisecond + horizon + 4*reportSweep + settleQuiet + 20*time.Second
}

// waitSettled waits, after the lane's sends, until its unknown, main and
// retry queues hold no ready message and no new record came for settleQuiet in
// a row (each UNKNOWN waits as a copy in the unknown queue until a report,
// a pull or the horizon settled it and a drain moved it), at most
// settleLimit. Running out of time is no error: the judge then reads the
// ledger and the queues and counts what is left (IdleRaceRow.UnknownLeft).
// It watches the queues, not the ledger: the running worker holds its
// bbolt file's lock (reconcile.ReadLedger needs the worker stopped).
// Errors: the broker's, ctx's.
func (l *lane) waitSettled(ctx context.Context) error {
	limit := settleLimit(l.spec.Reports, l.horizon)
	start := time.Now()
	deadline, quietSince, lastRecs := start.Add(limit), time.Time{}, -1
	for {
		if err := l.recs.Poll(); err != nil {
			return err
		}
		waiting := 0
		for _, q := range []string{l.topo.Names.Unknown, l.topo.Names.Main, l.topo.Names.Retry} {
			n, err := l.depth(q)
			if err != nil {
				return fmt.Errorf("lane %s: %w", l.name(), err)
			}
			waiting += n
		}
		now := time.Now()
		switch {
		case waiting > 0 || l.recs.Len() != lastRecs:
			quietSince, lastRecs = time.Time{}, l.recs.Len()
		case quietSince.IsZero():
			quietSince = now
		case now.Sub(quietSince) >= settleQuiet:
			l.r.logf("lane %s: settled after %s, %s", l.name(), now.Sub(start).Round(time.Millisecond), formatCounts(l.recs.Counts()))
			return nil
		}
		if now.After(deadline) {
			l.r.logf("lane %s: %d still waiting after %s (the judge counts what is left)", l.name(), waiting, limit)
			return nil
		}
		if err := lab.Sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// depth returns the ready messages of queue q (a channel of its own: a
// passive declare of a missing queue closes it).
func (l *lane) depth(q string) (int, error) {
	ch, err := l.r.conn.Channel()
	if err != nil {
		return 0, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("inspect %s: %w", q, err)
	}
	return st.Messages, nil
}

// addSettle records m (measureSettle of the lane) in row.
func (row *IdleRaceRow) addSettle(m settleMeasures) {
	left := m.UnknownLeft
	row.UnknownLeft, row.SettledBy, row.TimeToSettle = &left, m.SettledBy, m.TimeToSettle
}

// settleCells are a row's settlement columns: "report a / pull b /
// horizon c" (and "/ operator d" when any), the UNKNOWN left, and the time
// to settle p50 / p99 in ms ("-" when no report or pull settled one).
func settleCells(r IdleRaceRow) []string {
	by := fmt.Sprintf("report %d / pull %d / horizon %d", r.SettledBy[ledger.SourceReport], r.SettledBy[ledger.SourcePull], r.SettledBy[ledger.SourceHorizon])
	if n := r.SettledBy[ledger.SourceOperator]; n > 0 {
		by += fmt.Sprintf(" / operator %d", n)
	}
	left := "-"
	if r.UnknownLeft != nil {
		left = fmt.Sprint(*r.UnknownLeft)
	}
	t := "-"
	if r.TimeToSettle != nil {
		t = fmt.Sprintf("%.0f / %.0f", r.TimeToSettle.P50MS, r.TimeToSettle.P99MS)
	}
	return []string{by, left, t}
}

// settleHead are the headers of settleCells.
var settleHead = []string{"settled by", "UNKNOWN left", "time to settle p50 / p99 ms"}

// reportsOnRows reports whether any row was measured with reports on.
func reportsOnRows(rows []IdleRaceRow) bool {
	return slices.ContainsFunc(rows, func(r IdleRaceRow) bool { return r.UnknownLeft != nil })
}
