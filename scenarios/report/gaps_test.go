package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// gapResult is a pooled run whose sends reuse below a 30 s idle timeout
// and open a new connection above it, or (shaped false) always reuse.
func gapResult(shaped bool) results.Result {
	var sends []results.GapSend
	for i := range 100 {
		gap := float64(i)
		reused := gap < 30 || !shaped
		ms := 25 + gap/10
		if reused {
			ms = 10 + gap/100
		}
		sends = append(sends, results.GapSend{GapS: gap, MS: ms, Reused: reused})
	}
	return results.Result{Mode: "pooled", RTTMS: 3, Gaps: results.NewGapStudy("poisson:40s", 40, 30, 75, sends)}
}

func TestGapSection(t *testing.T) {
	md := gapSection([]results.Result{gapResult(true)})
	for _, want := range []string{
		"## Traffic with gaps", "TIME_SCALE=40", "28.2 ms", "21.4 ms", "11.0 ms",
		"| 22.5-30 s | 0.75-1 | 7 | 7 | 100% |", "| 30-37.5 s | 1-1.25 | 8 | 0 | 0% |",
		"pass: the overall median", "pass: the reuse share falls",
		"charts/gaps-pooled-3ms.svg",
		// Beside the case: reused median 10.1 (gap 14 of 0..29), new 31.4
		// (gap 64 of 30..99), overall 29.9 (the 50th of 100).
		"- reused sends: 10.1 ms against production's 11.0 ms (-0.9 ms)",
		"- a new connection costs 21.3 ms here", "against 17.2 ms in production before the fix (28.2 - 11.0",
		"sits 0.93 of the way from the reused median to the new one (production: 0.60", "reuse share, 30% here",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("gap section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "FAIL:") {
		t.Errorf("a shaped run failed a check:\n%s", md)
	}
	flat := gapSection([]results.Result{gapResult(false)})
	if strings.Count(flat, "FAIL:") != 2 {
		t.Errorf("a run that always reuses should fail both checks:\n%s", flat)
	}
	if s := gapSection([]results.Result{{Mode: "pooled", RTTMS: 3}}); s != "" {
		t.Errorf("a back-to-back run got a gap section: %q", s)
	}
}

func TestWriteGapCharts(t *testing.T) {
	dir := t.TempDir()
	if err := WriteGapCharts(dir, []results.Result{gapResult(true), {Mode: "per-request", RTTMS: 3}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{GapChartFile("pooled", 3), GapHistChartFile("pooled", 3)} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: %v, want an SVG", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, GapChartFile("per-request", 3))); err == nil {
		t.Error("a run without gaps got a gap chart")
	}
}
