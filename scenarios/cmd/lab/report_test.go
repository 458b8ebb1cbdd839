package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// `lab report OUT` re-renders any committed results folder offline (issue
// 16: only the bench's folders could be re-rendered): a copy of each is
// rendered again, and the reports it must write are newer than before.
func TestReportRendersEveryKindOfFolder(t *testing.T) {
	for _, tt := range []struct{ src, report string }{
		{"../../../results", "summary.md"},
		{"../../../results/sweep", "summary.md"},
		{"../../../results/matrix", "matrix.md"},
		{"../../../results/audit/go-alimtalk", "audit.html"},
		{"../../../results/audit/example-dispatch-sms", "audit.md"}, // a black-box audit
		{"../../../results/audit", "clients.html"},                  // the third-party clients' comparison
		{"../../../results/client-defaults", "summary.md"},
	} {
		t.Run(tt.src, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			if err := os.CopyFS(dir, os.DirFS(tt.src)); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dir, tt.report)
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(target, old, old); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := exitCode(run(context.Background(), []string{"report", dir}, noEnv, &stdout), &stderr); code != 0 {
				t.Fatalf("report %s: exit %d, stderr %q", tt.src, code, stderr.String())
			}
			fi, err := os.Stat(target)
			if err != nil || !fi.ModTime().After(old) {
				t.Errorf("%s not rewritten (%v)", tt.report, err)
			}
		})
	}
}

// Two consecutive runs with different MODES into one OUT never mix in a
// report (issue 16): the first run (per-request) left its bench file, the
// second (pooled) wrote its own beside it; `lab report OUT` reports the
// second run only, names it in the summary's header, and says which file
// it left out.
func TestReportNeverMixesTwoRuns(t *testing.T) {
	dir := t.TempDir()
	if err := outdir.Claim(dir, "r0"); err != nil {
		t.Fatal(err)
	}
	first := results.Result{Mode: "per-request", RTTMS: 3, Count: 10, Warmup: 1, TLSMax: "1.2",
		Provenance: &results.Provenance{RunID: "20261201T100000Z-aaaaaaa", Date: "2026-12-01T10:00:00Z", Command: []string{"run", "MODES=per-request"}}}
	second := results.Result{Mode: "pooled", RTTMS: 3, Count: 10, Warmup: 1,
		Provenance: &results.Provenance{RunID: "20261201T110000Z-bbbbbbb", Date: "2026-12-01T11:00:00Z", Command: []string{"run", "MODES=pooled"}}}
	for _, r := range []results.Result{first, second} {
		if err := results.WriteResult(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"report", dir}, noEnv, &stdout), &stderr); code != 0 {
		t.Fatalf("report: exit %d, stderr %q", code, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	summary := string(md)
	if strings.Contains(summary, "| 3 ms | per-request") {
		t.Errorf("the second run's summary shows the first run's per-request row:\n%s", summary)
	}
	if !strings.Contains(summary, "| 3 ms | pooled") || !strings.Contains(summary, "Run 20261201T110000Z-bbbbbbb") {
		t.Errorf("the summary does not report the second run (pooled, run 20261201T110000Z-bbbbbbb):\n%s", summary)
	}
	if !strings.Contains(stdout.String(), results.ResultFile(first)) {
		t.Errorf("report did not say it left out %s: %q", results.ResultFile(first), stdout.String())
	}
}

// report rewrites summary.md and charts/ only in a folder the lab made: a
// folder of one's own that holds a bench file beside one's own summary.md
// and chart is refused, and nothing in it changes (found by a fresh-user
// trial: both were replaced). `report OUT=dir` reads as `report dir`.
func TestReportRefusesAFolderTheLabDidNotMake(t *testing.T) {
	dir := t.TempDir()
	r := results.Result{Mode: "pooled", RTTMS: 3, Count: 10, Warmup: 1,
		Provenance: &results.Provenance{RunID: "20261201T110000Z-bbbbbbb", Date: "2026-12-01T11:00:00Z"}}
	if err := results.WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
	mine := map[string]string{"summary.md": "# my notes\n", "charts/latency-p50.svg": "<svg/>"}
	for rel, c := range mine {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, arg := range []string{dir, "OUT=" + dir} {
		var stdout, stderr bytes.Buffer
		if code := exitCode(run(context.Background(), []string{"report", arg}, noEnv, &stdout), &stderr); code != 2 || !strings.Contains(stderr.String(), "no "+outdir.Marker) {
			t.Errorf("report %s: exit %d, stderr %q; want 2 naming the missing marker", arg, code, stderr.String())
		}
	}
	for rel, want := range mine {
		if got, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(got) != want {
			t.Errorf("%s is %q, %v; want it untouched", rel, got, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, outdir.Marker), []byte("a run's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"report", "OUT=" + dir}, noEnv, &stdout), &stderr); code != 0 {
		t.Errorf("report OUT=<marked folder>: exit %d, stderr %q; want 0", code, stderr.String())
	}
}

// `lab report` of a client-defaults folder rewrites its summary from
// client-defaults.json and leaves that file byte for byte as the run
// wrote it (a re-render once dropped a field the code no longer has).
func TestReportClientDefaultsKeepsItsData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dir, os.DirFS("../../../results/client-defaults")); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "client-defaults.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"report", dir}, noEnv, &stdout), &stderr); code != 0 {
		t.Fatalf("report: exit %d, stderr %q", code, stderr.String())
	}
	after, err := os.ReadFile(filepath.Join(dir, "client-defaults.json"))
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("client-defaults.json changed by the report (%v)", err)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "summary.md")); err != nil || !strings.Contains(string(md), "./run.sh report") {
		t.Errorf("summary.md has no re-render command (%v)", err)
	}
}
