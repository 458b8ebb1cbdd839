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

// fakeCell is a matrix cell with the given rate and CPU, all SENT.
// The direct driver records its measured sends only.
func fakeCell(driver, scheme, mode string, conc int, reqPerS, cpu float64, conns int) results.MatrixCell {
	sent := 110
	if driver == results.DriverDirect {
		sent = 100
	}
	return results.MatrixCell{
		Scheme: scheme, Driver: driver, Mode: mode, Concurrency: conc, HTTPVersion: "1.1", PoolSize: conc,
		Count: 100, Warmup: 10, ReqPerS: reqPerS, CPUMSPerReq: cpu, Connections: conns,
		Outcomes: map[outcome.Outcome]int{outcome.Sent: sent}, Lost: -1, Duplicates: -1,
	}
}

// fakeMatrix is a full direct matrix whose ratios behave as study A's.
func fakeMatrix() []results.MatrixCell {
	var cs []results.MatrixCell
	fresh := map[string]float64{"http": 2000, "https": 800, "mtls": 500}
	cpu := map[string]float64{"http": 0.2, "https": 1.0, "mtls": 1.5}
	for _, s := range []string{"http", "https", "mtls"} {
		for _, n := range []int{1, 8, 32} {
			cs = append(cs,
				fakeCell(results.DriverDirect, s, vendorapi.PerRequestName, n, fresh[s], cpu[s], 110),
				fakeCell(results.DriverDirect, s, vendorapi.PooledName, n, 6000, 0.1, n))
		}
	}
	return cs
}

// TestMatrixChecks: the fake matrix passes; a matrix whose ratios do not
// rise is "NOT REPRODUCED" (a finding, no FAIL); a cell that lost a
// message and a pooled cell with more connections than its pool each fail
// (negative controls).
func TestMatrixChecks(t *testing.T) {
	tests := []struct {
		name     string
		mod      func(cs []results.MatrixCell)
		wantFail string
		study    bool // a study ordering: NOT REPRODUCED, never FAIL
	}{
		{"study-like matrix passes", func([]results.MatrixCell) {}, "", false},
		{"ratio does not rise", func(cs []results.MatrixCell) {
			for i := range cs {
				if cs[i].Scheme == "mtls" && cs[i].Mode == vendorapi.PerRequestName {
					cs[i].ReqPerS = 5000
				}
			}
		}, "rises http", true},
		{"fresh mtls cheaper than https", func(cs []results.MatrixCell) {
			for i := range cs {
				if cs[i].Scheme == "mtls" && cs[i].Mode == vendorapi.PerRequestName {
					cs[i].CPUMSPerReq = 0.5
				}
			}
		}, "fresh mtls", true},
		{"worker cell lost a message", func(cs []results.MatrixCell) {
			cs[0].Driver, cs[0].Lost, cs[0].Duplicates, cs[0].Outcomes[outcome.Sent] = results.DriverWorker, 1, 0, 110
		}, "1 lost", false},
		// An unmeasured worker cell (-1: no reconciler verdict) is not a
		// pass (issue 14's surviving mutant: -1 read as 0).
		{"worker cell not reconciled", func(cs []results.MatrixCell) {
			cs[0].Driver, cs[0].Outcomes[outcome.Sent] = results.DriverWorker, 110
		}, "not reconciled", false},
		{"pool of 2 that did not churn", func(cs []results.MatrixCell) {
			for i := range cs {
				if cs[i].Mode == vendorapi.PooledName && cs[i].Concurrency == 8 {
					cs[i].PoolSize, cs[i].Connections = 2, 8
				}
			}
		}, "churns connections: 8 accepted", false},
		{"h2 pooled on more than one connection", func(cs []results.MatrixCell) {
			for i := range cs {
				if cs[i].Mode == vendorapi.PooledName && cs[i].Scheme == "https" && cs[i].Concurrency == 8 {
					cs[i].HTTPVersion, cs[i].Protocols = "2", map[string]int{"HTTP/2.0": 110}
				}
			}
		}, "h2 pooled: 8 connection(s)", false},
		{"direct cell with a failed send", func(cs []results.MatrixCell) { cs[1].Outcomes[outcome.Sent] = 99 }, "SENT 99 of 100", false},
		{"pool churns", func(cs []results.MatrixCell) {
			for i := range cs {
				if cs[i].Mode == vendorapi.PooledName && cs[i].Concurrency == 8 {
					cs[i].Connections = 40
				}
			}
		}, "40 connections with a pool of 8", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fakeMatrix()
			tc.mod(cs)
			got := strings.Join(MatrixChecks(cs), "\n")
			if tc.wantFail == "" {
				if strings.Contains(got, "FAIL") {
					t.Errorf("checks failed:\n%s", got)
				}
				return
			}
			want := "FAIL: "
			if tc.study {
				want = "NOT REPRODUCED: "
			}
			line := ""
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(l, want) && strings.Contains(l, tc.wantFail) {
					line = l
				}
			}
			if line == "" {
				t.Errorf("checks %q, want a line %q naming %q", got, want, tc.wantFail)
			}
			if tc.study && strings.Contains(got, "FAIL") {
				t.Errorf("a study ordering not reproduced is a finding, not a FAIL:\n%s", got)
			}
		})
	}
}

// TestMatrixReport: the report holds study A's ratios beside ours, the
// full matrix, and the charts; the cells round-trip through their files.
func TestMatrixReport(t *testing.T) {
	dir := t.TempDir()
	for _, c := range fakeMatrix() {
		if err := results.WriteMatrixCell(dir, c); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := MatrixReport(dir, &out); err != nil {
		t.Fatalf("MatrixReport: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "matrix.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| https | 800.0 | 6000.0 | 7.50x | 7.65x |", // ours beside study A's at concurrency 1
		"| mtls | 15.00x | 13.64x |",                 // CPU ratio at concurrency 8 (study A: 2.468 s / 0.181 s)
		"## Full matrix, driver direct",
		"| http | study A | 0 | 8 | 39 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"matrix-req-per-s-direct.svg", "matrix-cpu-per-req-direct.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, "charts", f)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", f, err)
		}
	}
	if !strings.Contains(out.String(), "PASS") {
		t.Errorf("no check printed: %s", out.String())
	}
}

// TestMatrixWorkerStates: the report names where the worker cells' ledger
// and records lived, says "not recorded" for cells written before the field
// existed, and says nothing for a matrix without worker cells.
func TestMatrixWorkerStates(t *testing.T) {
	worker := fakeCell(results.DriverWorker, "https", vendorapi.PooledName, 1, 700, 0.5, 1)
	worker.WorkerState = "disk"
	if md := MatrixMarkdown(append(fakeMatrix(), worker)); !strings.Contains(md, "Worker cells: the ledger and records on disk (worker_state).") {
		t.Errorf("matrix.md does not say where the worker cells' state was:\n%s", md)
	}
	if md := MatrixMarkdown(fakeMatrix()); strings.Contains(md, "Worker cells:") {
		t.Errorf("a matrix without worker cells names their state")
	}
	old, tmpfs := worker, worker
	old.WorkerState, tmpfs.WorkerState = "", "tmpfs"
	for _, tc := range []struct {
		cells []results.MatrixCell
		want  string
	}{
		{[]results.MatrixCell{worker, worker}, "disk"},
		{[]results.MatrixCell{worker, old}, "disk and not recorded"},
		{[]results.MatrixCell{tmpfs, worker}, "disk and tmpfs"},
	} {
		if got := workerStates(tc.cells); got != tc.want {
			t.Errorf("workerStates = %q, want %q", got, tc.want)
		}
	}
}

// TestMatrixReportExtraModes: a matrix run with MODES beyond study A's two
// (shared-closing, per-request-resume) reports their cells in the full
// matrix, in the CPU-share table and in the charts' legend, by their own
// names after fresh and keepalive; a matrix of the two alone names none.
func TestMatrixReportExtraModes(t *testing.T) {
	cs := fakeMatrix()
	for _, n := range []int{1, 8} {
		cs = append(cs,
			fakeCell(results.DriverDirect, "https", vendorapi.SharedClosingName, n, 850, 0.9, 110),
			fakeCell(results.DriverDirect, "https", vendorapi.PerRequestResumeName, n, 1200, 0.6, 110),
			fakeCell(results.DriverWorker, "https", vendorapi.SharedClosingName, n, 700, 1.8, 110),
			fakeCell(results.DriverWorker, "https", vendorapi.PooledName, n, 900, 1.0, n))
	}
	for i := range cs {
		if cs[i].Driver == results.DriverWorker {
			cs[i].Lost, cs[i].Duplicates = 0, 0
		}
	}
	if got, want := strings.Join(matrixModes(cs), " "), "per-request per-request-resume pooled shared-closing"; got != want {
		t.Errorf("matrixModes = %q, want %q", got, want)
	}
	md := MatrixMarkdown(cs)
	for _, want := range []string{
		"keepalive = pooled; per-request-resume, shared-closing (not in study A) by its own name.",
		"| https | shared-closing | 1 | 850.0 |",
		"| https | shared-closing | 8 | 850.0 |",
		"| https | per-request-resume | 8 | 1200.0 |",
		"| https | fresh | 1 | 800.0 |",
		"| https | shared-closing | 50% | 50% |", // direct 0.9 / worker 1.8 ms CPU per send
	} {
		if !strings.Contains(md, want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "| https | keepalive | 1 | 6000.0 |") > strings.Index(md, "| https | shared-closing | 1 | 850.0 |") {
		t.Error("shared-closing listed before keepalive")
	}
	if strings.Contains(MatrixMarkdown(fakeMatrix()), "not in study A") {
		t.Error("a matrix of fresh and keepalive only names other strategies")
	}
	dir := t.TempDir()
	if err := writeMatrixCharts(dir, cs); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "matrix-req-per-s-direct.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">shared-closing<", ">per-request-resume<", "keepalive (pooled)"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("chart legend lacks %q", want)
		}
	}
}
