package fault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// ReportsRunSpec is server.reports: the vendor's delivery reports for one
// scenario (docs/vendor-api.md#the-mock-vendors-reports).
type ReportsRunSpec struct {
	// DelayMS is how long after a send was accepted its report is pushed,
	// ms (0..600000).
	DelayMS int `yaml:"delay_ms"`
	// DropEvery > 0 drops every DropEvery-th report (a vendor that loses
	// some); 0 = none.
	DropEvery int `yaml:"drop_every"`
}

// Report files and paths of a run with reports.
const (
	reportSecretName = "report-secret"      // in a temp folder outside the results
	reportSecretPath = "/lab/report-secret" // in the worker
	reportJournal    = vendormock.WorkerOutDir + "/reports.jsonl"
	reportSweep      = 2 * time.Second // the worker's -report-sweep in a run
)

// checkReports validates server.reports and expect.reports_settled.
func (sc *Scenario) checkReports(bad func(string, string, ...any)) {
	rs := sc.Server.Reports
	if rs == nil {
		if sc.Expect.ReportsSettled != nil {
			bad("expect.reports_settled", "needs server.reports")
		}
		return
	}
	if rs.DelayMS < 0 || rs.DelayMS > 600000 {
		bad("server.reports.delay_ms", "%d: want 0..600000", rs.DelayMS)
	}
	if rs.DropEvery < 0 {
		bad("server.reports.drop_every", "%d: want >= 0", rs.DropEvery)
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

// reportsConfig adds the report settings to the worker's config when the
// scenario turns reports on: the profile's reports section, a new random
// secret in a file outside the results (mounted read-only; never logged),
// the journal in the scenario's folder. It returns the host folder of the
// secret ("" when reports are off). Errors: the profile has no pushed
// reports, the file system's.
func (s *scenarioRun) reportsConfig(w *worker.Config) (secretDir string, err error) {
	if s.sc.Server.Reports == nil {
		return "", nil
	}
	p := s.r.Stack.Profile
	if p == nil || p.Reports == nil || p.Reports.Push == nil {
		return "", fmt.Errorf("server.reports: profile %s declares no pushed reports", s.r.Stack.Profile.Name)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "notifier-lab-report-")
	if err != nil {
		return "", err
	}
	// The worker image may run as another user: readable, not writable.
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, reportSecretName), []byte(hex.EncodeToString(secret)), 0o644); err != nil {
		return "", err
	}
	s.reportSecret = []byte(hex.EncodeToString(secret))
	w.VendorReports, w.ReportSecretFile, w.ReportJournal, w.ReportSweep = p.ReportsJSON, reportSecretPath, reportJournal, reportSweep
	return dir, nil
}

// startReportRelay starts the mock vendor's report pushes to the worker.
func (s *scenarioRun) startReportRelay(ctx context.Context) error {
	rs := s.sc.Server.Reports
	if rs == nil {
		return nil
	}
	ops, err := s.wk.OpsURL(ctx)
	if err != nil {
		return err
	}
	s.relay, err = s.r.Stack.StartReportRelay(vendormock.ReportRelayOptions{
		Target: ops + worker.ReportsPath, Secret: s.reportSecret, RefKeyPrefix: s.prefix,
		Delay: time.Duration(rs.DelayMS) * time.Millisecond, DropEvery: rs.DropEvery,
	})
	return err
}

// stopReportRelay stops the relay, removes the secret and records
// expect.reports_settled.
func (s *scenarioRun) stopReportRelay() {
	if s.secretDir != "" {
		_ = os.RemoveAll(s.secretDir)
		s.secretDir = ""
	}
	if s.relay == nil {
		return
	}
	st := s.relay.Close()
	s.relay = nil
	s.r.logf("%s: reports: %d accepted sends, %d pushed (%v), %d dropped, %d pushed again",
		s.sc.Name, st.Accepted, st.Pushed, st.Verdicts, st.Dropped, st.Retries)
	if want := s.sc.Expect.ReportsSettled; want != nil {
		got := st.Verdicts["settled"]
		c := Check{Step: len(s.sc.Steps), What: "reports the worker settled an UNKNOWN with", Want: want.String(), Got: got, OK: want.Match(got)}
		s.checks = append(s.checks, c)
		s.r.logf("%s: %d reports settled (want %s) %s", s.sc.Name, got, c.Want, okWord(c.OK))
	}
}
