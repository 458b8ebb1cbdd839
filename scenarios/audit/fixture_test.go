package audit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// fixtureDir is an audit folder's result files (no report, no charts):
// node-agent-nokeepalive beside the Go worker's pooled runs, three faults,
// two scenarios not applicable, the idle race.
const fixtureDir = "../../testdata/audit/node-agent-nokeepalive-alimtalk"

// fixtureDate is the date the golden report carries.
const fixtureDate = "2026-12-01T04:00:00Z"

// buildFixture copies the fixture into a temporary folder, draws its
// charts as the bench and the idle race do, and returns the folder and
// the report built from it.
func buildFixture(t *testing.T) (string, Report) {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixture files: %v (%d)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteCharts(filepath.Join(dir, "charts"), rs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "charts", RaceName+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Load(dir, "node-agent-nokeepalive", "alimtalk", 75)
	if err != nil {
		t.Fatal(err)
	}
	if err := fault.WriteIdleRaceChart(f, *in.Race); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep, err := NewReport(dir, in, fixtureDate)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, rep); err != nil {
		t.Fatal(err)
	}
	return dir, rep
}
