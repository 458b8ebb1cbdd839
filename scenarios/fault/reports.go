package fault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// ReportsProxy is the Toxiproxy proxy carrying the mock vendor's report
// pushes to the scenario's worker (relay -> Toxiproxy -> the worker's ops
// port), so toxics can delay or cut reports like any other traffic.
const ReportsProxy = "reports"

// ReportsRunSpec is server.reports: the vendor's delivery reports for one
// scenario (docs/vendor-api.md#the-mock-vendors-reports). The pushes go
// through ReportsProxy.
type ReportsRunSpec struct {
	// DelayMS is how long after a send was accepted its report is pushed
	// (and, with Pull, can be pulled), ms (0..600000).
	DelayMS int `yaml:"delay_ms"`
	// DropEvery > 0 drops the push of every DropEvery-th report (1 = all);
	// 0 = none.
	DropEvery int `yaml:"drop_every"`
	// Copies pushes each report this many times (0..10; 0 = 1).
	Copies int `yaml:"copies"`
	// JitterMS adds a random delay in [0, JitterMS) to every push, so
	// reports arrive out of order (0..60000).
	JitterMS int `yaml:"jitter_ms"`
	// Interim also pushes an interim report (the profile's first
	// reports.unknown value) per send, jittered: it may follow the final.
	Interim bool `yaml:"interim"`
	// Forge pushes a forged "failed" report (wrong signature) before each
	// genuine one.
	Forge bool `yaml:"forge"`
	// Pull makes the mock vendor serve each report at the profile's pull
	// path, also those whose push was dropped.
	Pull bool `yaml:"pull"`
	// Horizon and Complete override the profile's reports.horizon and
	// reports.complete as the worker is given them (the vendor's promise
	// as the deployment configures it); zero/nil = the profile's.
	Horizon  Duration `yaml:"horizon"`
	Complete *bool    `yaml:"complete"`
}

// Report files and paths of a run with reports.
const (
	reportSecretName = "report-secret"      // in a temp folder outside the results
	reportSecretPath = "/lab/report-secret" // in the worker
	reportJournal    = vendormock.WorkerOutDir + "/reports.jsonl"
	reportJournalOut = "reports.jsonl" // the same file in the scenario's folder
	reportSweep      = 2 * time.Second // the worker's -report-sweep in a run
)

// settleSources are the keys of expect.settled_by.
var settleSources = []string{ledger.SourceReport, ledger.SourcePull, ledger.SourceHorizon, ledger.SourceOperator}

// checkReports validates server.reports and the expectations needing it.
func (sc *Scenario) checkReports(bad func(string, string, ...any)) {
	rs := sc.Server.Reports
	if rs == nil {
		for key, set := range map[string]bool{"reports_settled": sc.Expect.ReportsSettled != nil,
			"reports_forged": sc.Expect.ReportsForged != nil, "settled_by": sc.Expect.SettledBy != nil} {
			if set {
				bad("expect."+key, "needs server.reports")
			}
		}
		sc.checkReportsProxy(bad)
		return
	}
	rs.check("server.reports", bad)
	if sc.Expect.ReportsForged != nil && !rs.Forge {
		bad("expect.reports_forged", "needs server.reports.forge")
	}
	for k := range sc.Expect.SettledBy {
		if !slices.Contains(settleSources, k) {
			bad("expect.settled_by."+k, "want one of %v", settleSources)
		}
	}
	switch u := sc.Expect.UnknownLeft; {
	case u == nil:
		bad("expect.unknown_left", "server.reports: say how many UNKNOWN are left for an operator")
	case rs.Complete != nil && *rs.Complete && (u.Min != 0 || u.Max != 0):
		bad("expect.unknown_left", "%s: the worker is told the vendor's reports are complete: want 0", u)
	}
	if sc.Kind == KindIdleRace {
		bad("server.reports", "not for kind %s", KindIdleRace)
	}
	if sc.Workers != nil {
		bad("server.reports", "not with a workers section yet (the relay pushes to one worker)")
	}
	for i, st := range sc.Steps {
		if st.RestartWorker != nil {
			bad("steps["+strconv.Itoa(i)+"].restart_worker", "not with server.reports yet (the relay pushes to the first worker)")
		}
	}
	if len(sc.AppliesTo.Profiles) == 0 {
		bad("applies_to.profiles", "server.reports: name the profiles whose pushed reports the scenario relies on (alimtalk)")
	}
}

// check validates the numbers of a reports block at field
// ("server.reports", "idle_race.reports").
func (rs *ReportsRunSpec) check(field string, bad func(string, string, ...any)) {
	if rs.DelayMS < 0 || rs.DelayMS > 600000 {
		bad(field+".delay_ms", "%d: want 0..600000", rs.DelayMS)
	}
	if rs.DropEvery < 0 {
		bad(field+".drop_every", "%d: want >= 0", rs.DropEvery)
	}
	if rs.Copies < 0 || rs.Copies > 10 {
		bad(field+".copies", "%d: want 0..10", rs.Copies)
	}
	if rs.JitterMS < 0 || rs.JitterMS > 60000 {
		bad(field+".jitter_ms", "%d: want 0..60000", rs.JitterMS)
	}
	if rs.Horizon < 0 {
		bad(field+".horizon", "%s: want > 0 (or unset: the profile's)", rs.Horizon.D())
	}
}

// checkReportsProxy: toxics and proxy steps on ReportsProxy need
// server.reports (without it nothing goes through the proxy).
func (sc *Scenario) checkReportsProxy(bad func(string, string, ...any)) {
	for i, t := range sc.Network.Toxics {
		if t.Proxy == ReportsProxy {
			bad(fmt.Sprintf("network.toxics[%d].proxy", i), "%q needs server.reports", ReportsProxy)
		}
	}
	for i, st := range sc.Steps {
		if (st.ToxicAdd != nil && st.ToxicAdd.Proxy == ReportsProxy) || st.ProxyDisable == ReportsProxy || st.ProxyEnable == ReportsProxy {
			bad(fmt.Sprintf("steps[%d]", i), "proxy %q needs server.reports", ReportsProxy)
		}
	}
}

// workerReports returns the profile's reports section as the worker is
// given it (VENDOR_REPORTS): rs.Horizon and rs.Complete override the
// profile's. Errors: the profile's JSON does not parse.
func workerReports(profileJSON string, rs *ReportsRunSpec) (string, error) {
	if rs.Horizon == 0 && rs.Complete == nil {
		return profileJSON, nil
	}
	var spec vendormock.ReportsSpec
	if err := json.Unmarshal([]byte(profileJSON), &spec); err != nil {
		return "", fmt.Errorf("server.reports: the profile's reports: %w", err)
	}
	if rs.Horizon > 0 {
		spec.Horizon = rs.Horizon.D().String()
	}
	if rs.Complete != nil {
		spec.Complete = *rs.Complete
	}
	b, err := json.Marshal(spec)
	return string(b), err
}

// reportsConfig adds the report settings to the worker's config when the
// scenario turns reports on: the profile's reports section (with the
// scenario's horizon and complete), a new random secret in a file outside
// the results (mounted read-only; never logged), the journal in the
// scenario's folder. It returns the host folder of the secret ("" when
// reports are off). Errors: the profile has no pushed reports, the file
// system's.
func (s *scenarioRun) reportsConfig(w *worker.Config) (secretDir string, err error) {
	rs := s.sc.Server.Reports
	if rs == nil {
		return "", nil
	}
	s.reportSecret, secretDir, err = reportsWorkerConfig(s.r.Stack.Profile, rs, w)
	return secretDir, err
}

// reportsWorkerConfig is reportsConfig for one worker of any kind (a
// scenario's, an idle-race lane's): it sets w's VendorReports (profile p's
// section with rs's horizon and complete), ReportSecretFile,
// ReportJournal and ReportSweep, and writes a new random secret (hex, 64
// characters) to reportSecretName in a new temporary folder outside the
// results. It returns the secret and that folder (the caller mounts the
// file and removes the folder). Errors: p has no pushed reports, the
// profile's JSON, the file system's (the folder is then removed).
func reportsWorkerConfig(p *vendormock.Profile, rs *ReportsRunSpec, w *worker.Config) (secret []byte, dir string, err error) {
	if p == nil || p.Reports == nil || p.Reports.Push == nil {
		name := "(none)"
		if p != nil {
			name = p.Name
		}
		return nil, "", fmt.Errorf("reports: profile %s declares no pushed reports", name)
	}
	spec, err := workerReports(p.ReportsJSON, rs)
	if err != nil {
		return nil, "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	if dir, err = os.MkdirTemp("", "notifier-lab-report-"); err != nil {
		return nil, "", err
	}
	secret = []byte(hex.EncodeToString(raw))
	// The worker image may run as another user: readable, not writable.
	err = os.Chmod(dir, 0o755)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, reportSecretName), secret, 0o644)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", err
	}
	w.VendorReports, w.ReportSecretFile, w.ReportJournal, w.ReportSweep = spec, reportSecretPath, reportJournal, reportSweep
	return secret, dir, nil
}

// addReportsProxy (re)creates ReportsProxy towards the scenario's first
// worker's ops port, before the scenario's toxics are added. No-op
// without server.reports.
func (s *scenarioRun) addReportsProxy(ctx context.Context) error {
	if s.sc.Server.Reports == nil {
		return nil
	}
	up := net.JoinHostPort(vendormock.WorkerAlias(s.workerName()), strconv.Itoa(vendormock.WorkerOpsPort))
	p, err := s.r.Stack.AddProxy(ctx, ReportsProxy, vendormock.ReportsProxyPort, up, 0)
	if err != nil {
		return err
	}
	s.r.reports = p
	return nil
}

// startReportRelay starts the mock vendor's report pushes to the worker,
// through ReportsProxy.
func (s *scenarioRun) startReportRelay(_ context.Context) error {
	rs := s.sc.Server.Reports
	if rs == nil {
		return nil
	}
	var err error
	s.relay, err = s.r.Stack.StartReportRelay(vendormock.ReportRelayOptions{
		Target: "http://" + s.r.Stack.ReportsAddrHost + worker.ReportsPath, Secret: s.reportSecret, RefKeyPrefix: s.prefix,
		Delay: time.Duration(rs.DelayMS) * time.Millisecond, DropEvery: rs.DropEvery,
		Copies: rs.Copies, Jitter: time.Duration(rs.JitterMS) * time.Millisecond, Interim: rs.Interim,
		Forge: rs.Forge, Pull: rs.Pull, Seed: s.sc.Workload.Seed,
	})
	return err
}

// stopReportRelay stops the relay, removes the secret and records
// expect.reports_settled and expect.reports_forged.
func (s *scenarioRun) stopReportRelay() {
	if s.secretDir != "" {
		_ = os.RemoveAll(s.secretDir)
		s.secretDir = ""
	}
	if s.relay == nil {
		return
	}
	st := s.relay.Close()
	s.relayOffered = s.relay.Offered()
	s.relay = nil
	s.relayStats = &st
	s.r.logf("%s: reports: %d accepted sends, %d pushed (%v), %d dropped, %d pushed again, %d forged refused (%d accepted), %d served for pull; slowest offer %.0f ms after its send",
		s.sc.Name, st.Accepted, st.Pushed, st.Verdicts, st.Dropped, st.Retries, st.Forged, st.ForgedAccepted, st.Served, st.SlowestOfferMS)
	check := func(what string, want *Count, got int) {
		if want == nil {
			return
		}
		c := Check{Step: len(s.sc.Steps), What: what, Want: want.String(), Got: got, OK: want.Match(got)}
		s.checks = append(s.checks, c)
		s.r.logf("%s: %s: %d (want %s) %s", s.sc.Name, what, got, c.Want, okWord(c.OK))
	}
	check("reports the worker settled an UNKNOWN with", s.sc.Expect.ReportsSettled, st.Verdicts["settled"])
	check("forged reports the worker refused", s.sc.Expect.ReportsForged, st.Forged)
	zero := Count{}
	check("forged reports the worker did not refuse", &zero, st.ForgedAccepted)
}
