package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// twoRuns are two repeats of one TLS 1.2 run at 3 ms: per-request's
// residual is +0.4 then +1.4 ms (median +0.9: within), resumed's +1.5
// then +2.5 ms (median +2.0: named).
func twoRuns() []Run {
	run := func(extraFull, extraResumed float64) []results.Result {
		return []results.Result{
			modelRun("pooled", 3, 24.0, 0, 0, 0.50, 0.20, 0.10, 4.0),
			// model + parts 10.1 (TestModelRows); measured 10.5 + extra.
			modelRun("per-request", 3, 34.5+extraFull, 9.5, 0.2, 2.00, 0.60, 0.30, 4.0),
			// model + parts 5.3; measured 5.0 + extra.
			modelRun("per-request-resume", 3, 29.0+extraResumed, 4.0, 0.2, 1.30, 0.50, 0.30, 4.0),
		}
	}
	return []Run{{Folder: "tls1.2", Rs: run(0, 1.8)}, {Folder: "tls1.2-run2", Rs: run(1.0, 2.8)}}
}

// TestRunsRows: each (TLS, RTT, client) gathers one model row per run, in
// run order, and the median of the runs; the median residual decides
// whether it is explained, not one run's.
func TestRunsRows(t *testing.T) {
	rows := RunsRows(twoRuns())
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (per-request, per-request-resume): %+v", len(rows), rows)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	full, res := rows[0], rows[1]
	if full.Mode != "per-request" || len(full.Rows) != 2 || full.Folders[1] != "tls1.2-run2" {
		t.Fatalf("first row %+v; want per-request from both runs in order", full)
	}
	if !near(full.Rows[0].ResidualMS, 0.4) || !near(full.Rows[1].ResidualMS, 1.4) || !near(full.MedianResidual, 0.9) || !full.Within {
		t.Errorf("per-request residuals %v, %v, median %v (within %v); want +0.4, +1.4, median +0.9 within",
			full.Rows[0].ResidualMS, full.Rows[1].ResidualMS, full.MedianResidual, full.Within)
	}
	if !near(full.MedianMeasured, 11.0) || !near(full.MedianSum, 10.1) {
		t.Errorf("per-request medians measured %v, sum %v; want 11.0 and 10.1", full.MedianMeasured, full.MedianSum)
	}
	if !near(res.MedianResidual, 2.0) || res.Within {
		t.Errorf("resumed median residual %v within %v; want +2.0, not within", res.MedianResidual, res.Within)
	}
	if got := medianFloat([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3 1 2 = %v", got)
	}
	if !math.IsNaN(medianFloat(nil)) || !math.IsNaN(medianFloat([]float64{1, math.NaN()})) {
		t.Error("median of nothing or of a NaN is not NaN")
	}
}

// TestRunsReport: the report writes the summary with each run's figures
// beside the median, names the median beyond 1 ms (with each run's own
// reason), leaves the row within 1 ms unnamed, and draws the chart.
func TestRunsReport(t *testing.T) {
	dir := t.TempDir()
	for _, run := range twoRuns() {
		sub := filepath.Join(dir, run.Folder)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, r := range run.Rs {
			if err := results.WriteResult(sub, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	if err := RunsReport(dir, &out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, RunsSummary))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| [tls1.2](tls1.2/summary.md) |", "| [tls1.2-run2](tls1.2-run2/summary.md) |",
		"| 1.2 | 3 ms | per-request | 6.0 | 10.5 / 11.5 | 10.1 / 10.1 | +0.4 / +1.4 | 11.0 | 10.1 | +0.9 |",
		"| 1.2 | 3 ms | per-request-resume | 3.0 | 6.8 / 7.8 | 5.3 / 5.3 | +1.5 / +2.5 | 7.3 | 5.3 | **+2.0** |",
		"- TLS 1.2, 3 ms, per-request-resume: median residual +2.0 ms. tls1.2: 1.5 ms unexplained",
		"| 1.2 | 3 ms | per-request | 34.5 / 35.5 | 24.0 / 24.0 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "- TLS 1.2, 3 ms, per-request:") {
		t.Errorf("the row within 1 ms by its median was named:\n%s", md)
	}
	if fi, err := os.Stat(filepath.Join(dir, "charts", RunsChart)); err != nil || fi.Size() == 0 {
		t.Errorf("chart: %v", err)
	}
	if _, err := ReadRuns(t.TempDir()); err == nil {
		t.Error("a folder without runs was read")
	}
}
