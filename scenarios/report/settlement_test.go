package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// plantedBench writes bench files with a settlement, as the bench writes
// them, into a folder: pooled at 10 ms produced 3 UNKNOWN with reports
// off (all 3 left); per-request at 10 ms ran with reports on (2 settled
// by report, 1 by the horizon, none left); replicas at 150 ms read no
// ledger (1 left in the queue).
func plantedBench(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, r := range []results.Result{
		{Mode: vendorapi.PooledName, RTTMS: 10, Count: 100, Outcomes: map[outcome.Outcome]int{outcome.Sent: 97, outcome.Unknown: 3},
			Settlement: &results.Settlement{LedgerRead: true, UnknownLeft: 3}},
		{Mode: vendorapi.PerRequestName, RTTMS: 10, Count: 100, Outcomes: map[outcome.Outcome]int{outcome.Sent: 97, outcome.Unknown: 3},
			Settlement: &results.Settlement{Reports: true, LedgerRead: true, SettledBy: map[string]int{"report": 2, "horizon": 1},
				TimeToSettle: &results.SettleTimes{N: 2, P50MS: 1100, P99MS: 1900}}},
		{Mode: vendorapi.PooledName, RTTMS: 150, Count: 100, Workers: 2, Outcomes: map[outcome.Outcome]int{outcome.Sent: 99, outcome.Unknown: 1},
			Settlement: &results.Settlement{UnknownLeft: 1}},
	} {
		if err := results.WriteResult(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func renderSummary(t *testing.T, dir string) string {
	t.Helper()
	rs, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := NewMarkdownReporter(rs)(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSettlementSection: the summary states per bench point the UNKNOWN
// produced, settled by what, left for an operator and the time to settle,
// and says once that reports were off.
func TestSettlementSection(t *testing.T) {
	md := renderSummary(t, plantedBench(t))
	for _, want := range []string{
		"## UNKNOWN and its settlement",
		"Vendor delivery reports off",
		"| 10 ms | pooled | 3 | reports off | 3 | - |",
		"| 10 ms | per-request | 3 | report 2 / pull 0 / horizon 1 | 0 | 1100 / 1900 |",
		"| 150 ms | pooled | 1 | reports off, ledger not read | 1 | - |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md[strings.Index(md, "## Details"):])
		}
	}
	if n := strings.Count(md, "Vendor delivery reports off"); n != 1 {
		t.Errorf("the reports-off note appears %d times, want once", n)
	}
}

// TestSettlementSectionOldFiles: bench files without a settlement (the
// fixture, written before it existed) render no such section, and one
// file with it among old ones shows "-" for the others.
func TestSettlementSectionOldFiles(t *testing.T) {
	if md := renderSummary(t, fixtureDir); strings.Contains(md, "settlement") {
		t.Errorf("old files render a settlement section")
	}
	dir := plantedBench(t)
	old, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range old {
		if strings.HasPrefix(e.Name(), "bench-") && strings.HasSuffix(e.Name(), ".json") && !strings.Contains(e.Name(), "-10ms") && !strings.Contains(e.Name(), "-150ms") {
			b, err := os.ReadFile(filepath.Join(fixtureDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	md := renderSummary(t, dir)
	if !strings.Contains(md, " | - | - | - |") {
		t.Errorf("an old file among new ones lacks its \"-\" cells:\n%s", md[strings.Index(md, "## UNKNOWN"):])
	}
}
