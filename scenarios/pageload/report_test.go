package pageload

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"gonum.org/v1/plot/vg"
)

// TestWriteReport writes a good run's report: the verdict lines, one row
// per page with the study's figures beside the lab's, both charts as SVG,
// and pageload.json that reads back.
func TestWriteReport(t *testing.T) {
	ls := goodRun()
	cells := Summarize(ls)
	checks := Judge(ls, cells, 100)
	prov := &results.Provenance{RunID: "20261205T000000Z-abcdef0", Commit: "abcdef0123456789", Command: []string{"pageload", "OUT=x"}}
	sum := Summary{Provenance: prov, Setup: Setup{RTTMS: 50, Runs: 5, Resources: []int{10, 100}, APIDelayMS: 2000, Images: 100, ImageBytes: 182500, Chromium: "Chrome/156", NetNS: true, Nginx: "nginx/1.22.1"},
		Cells: cells, Checks: checks, Pass: Passed(checks)}
	out := t.TempDir()
	if err := WriteReport(out, sum); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, SummaryMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**Verdict: PASS.**", "Command: `./run.sh pageload OUT=x`",
		"- PASS " + CheckH2Faster + ": at 100 resources HTTP/2 median 770 ms vs HTTP/1.1 1,800 ms (-57%)",
		"| 100 images | **1,800** (1,600-2,000; 1,450-2,100) | **770** (730-1,050; 480-1,100) | -57% | 6 / 1 | 250 / 159 | -37% |",
		"| backend-bound (one API call) |", "| 2,080 / 2,090 | no difference |",
		"charts/pageload.svg", "nginx/1.22.1", "At 100 images Chromium opened 6 HTTP/1.1 connection(s) per load and 1 HTTP/2, as study C says browsers do",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	for _, name := range []string{ChartPages, ChartBack} {
		b, err := os.ReadFile(filepath.Join(out, ChartsDir, name))
		if err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("study C HTTP/2")) {
			t.Errorf("%s: %v, not an SVG chart with the study's series", name, err)
		}
	}
	var back Summary
	b, err := os.ReadFile(filepath.Join(out, SummaryJSON))
	if err != nil || json.Unmarshal(b, &back) != nil || !back.Pass || len(back.Cells) != 6 || back.Provenance.RunID != prov.RunID {
		t.Errorf("pageload.json: %v; read back %+v", err, back)
	}
}

// TestMarkdownOfAFailedRun says FAIL and the failed line.
func TestMarkdownOfAFailedRun(t *testing.T) {
	ls := goodRun()
	for i := range ls {
		if ls[i].Page == BackendPage && ls[i].Proto == ProtoH2 {
			ls[i].Times.CompleteMS *= 1.5
		}
	}
	cells := Summarize(ls)
	checks := Judge(ls, cells, 100)
	md := Markdown(Summary{Cells: cells, Checks: checks, Pass: Passed(checks), Setup: Setup{RTTMS: 50, Resources: []int{10, 100}}})
	if !strings.Contains(md, "**Verdict: FAIL.**") || !strings.Contains(md, "- FAIL "+CheckBackendNoise) || !strings.Contains(md, "outside the noise band") {
		t.Errorf("a failed run's summary:\n%s", md)
	}
}

// TestEncodeLoadReadsBack: a load file is JSON that reads back into the
// same load (times to 0.1 ms), one timing entry per line.
func TestEncodeLoadReadsBack(t *testing.T) {
	tm, err := ParseTiming(readFixture(t, "timing-p10-h1.json"))
	if err != nil {
		t.Fatal(err)
	}
	l := goodRun()[0]
	l.Timing, l.Times = tm, tm.Times()
	b, err := EncodeLoad(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Load
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("load file is not JSON: %v\n%s", err, b)
	}
	if back.ID != l.ID || len(back.Timing.Resources) != 10 || back.Timing.Nav == nil || back.Server.Connections != 6 ||
		back.Timing.Nav.LoadEventEnd != float64(int(tm.Nav.LoadEventEnd*10+0.5))/10 {
		t.Errorf("read back %+v", back)
	}
	if n := bytes.Count(b, []byte("\n   {\"name\":")); n != 10 {
		t.Errorf("%d resource lines; want 10, one per entry", n)
	}
}

func TestChartNeedsCells(t *testing.T) {
	if _, err := Chart(nil, false); err == nil {
		t.Error("a chart of nothing")
	}
	p, err := Chart(Summarize(goodRun()), false)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteSVG(&b, p, 10*vg.Centimeter, 6*vg.Centimeter); err != nil || b.Len() == 0 {
		t.Errorf("render: %v", err)
	}
}

// TestReportRerendersFromTheLoadFiles: ./run.sh report OUT rebuilds the
// summary from load-*.json and pageload.json's setup, judging again: a
// load file edited to fail (an h2 load on two connections) turns the
// verdict to FAIL.
func TestReportRerendersFromTheLoadFiles(t *testing.T) {
	out := t.TempDir()
	ls := goodRun()
	for _, l := range ls {
		if err := WriteLoad(out, l); err != nil {
			t.Fatal(err)
		}
	}
	cells := Summarize(ls)
	checks := Judge(ls, cells, 100)
	if err := WriteReport(out, Summary{Setup: Setup{RTTMS: 50, Runs: 5, Resources: []int{10, 100}}, Cells: cells, Checks: checks, Pass: Passed(checks)}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, SummaryMD))
	var w bytes.Buffer
	if err := Report(out, &w); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(out, SummaryMD))
	if !bytes.Equal(before, after) || !strings.Contains(w.String(), "rewritten from 30 loads") {
		t.Errorf("re-rendered summary differs from the run's, or %q", w.String())
	}
	bad := ls[7] // r3-p10-h2
	bad.Server.Connections, bad.Server.ConnIDs = 2, append(bad.Server.ConnIDs, "9999")
	if err := WriteLoad(out, bad); err != nil {
		t.Fatal(err)
	}
	if err := Report(out, &w); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, SummaryMD))
	if !strings.Contains(string(md), "**Verdict: FAIL.**") || !strings.Contains(string(md), "- FAIL "+CheckConnections) {
		t.Errorf("an edited load file did not fail the re-judged run:\n%s", md)
	}
	if err := Report(t.TempDir(), &w); err == nil {
		t.Error("a folder without pageload.json re-rendered")
	}
}
