package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/scenarios")

// fixtureDir holds fixed bench results (not a measurement) for report tests.
const fixtureDir = "../../testdata/scenarios/results"

func fixtureResults(t *testing.T) []results.Result {
	t.Helper()
	rs, err := results.ReadResults(fixtureDir)
	if err != nil {
		t.Fatalf("read fixture results: %v", err)
	}
	return rs
}

// golden compares got with testdata/scenarios/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "scenarios", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./scenarios/ -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (go test ./scenarios/ -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestReadResultsSorted(t *testing.T) {
	rs := fixtureResults(t)
	var got []string
	for _, r := range rs {
		got = append(got, results.ResultFileName(r.Mode, r.RTTMS))
	}
	want := []string{"bench-per-request-3ms.json", "bench-pooled-3ms.json", "bench-per-request-10ms.json", "bench-pooled-10ms.json"}
	if !slices.Equal(got, want) {
		t.Errorf("ReadResults order = %v; want %v", got, want)
	}
	if _, err := results.ReadResults(t.TempDir()); err == nil {
		t.Error("ReadResults of an empty dir: want an error")
	}
}

func TestWriteResultRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := fixtureResults(t)[0]
	if err := results.WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bench-per-request-3ms.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The keys other tools read.
	for _, k := range []string{`"mode"`, `"rtt_ms"`, `"count"`, `"warmup"`, `"server_delay_ms"`, `"sends_per_s"`,
		`"latency_ms"`, `"p50"`, `"p90"`, `"p99"`, `"max"`, `"cpu_ms_per_send"`, `"wall_s"`, `"tcp_connections"`,
		`"tls_versions"`, `"client_reused"`, `"journal_count"`, `"stack_start_s"`, `"outcomes"`, `"self_check_rtt_ms"`,
		`"environment"`, `"go_version"`, `"cpus"`, `"images"`, `"kernel"`, `"date"`, `"host_note"`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("result JSON lacks key %s", k)
		}
	}
	back, err := results.ReadResults(dir)
	if err != nil || len(back) != 1 || back[0].LatencyMS != r.LatencyMS || back[0].TCPConnections != r.TCPConnections {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}

func TestCaseFigures(t *testing.T) {
	// The published table (docs/case.md#published-table): 1,000 sends at the
	// published rate take about the published wall time, and connections are
	// 1,050 or 1. A typo in the table fails here.
	for _, f := range CaseFigures() {
		if got := float64(f.Count) / f.SendsPerS; math.Abs(got-f.WallS)/f.WallS > 0.01 {
			t.Errorf("case %d ms %s: %d / %.1f sends/s = %.1f s; published %.1f s", f.RTTMS, f.Mode, f.Count, f.SendsPerS, got, f.WallS)
		}
		if f.P99MS < f.P50MS {
			t.Errorf("case %d ms %s: p99 %.1f < p50 %.1f", f.RTTMS, f.Mode, f.P99MS, f.P50MS)
		}
	}
	if _, ok := CaseFigureFor(25, "pooled"); ok {
		t.Error("CaseFigureFor(25 ms): the case did not measure it")
	}
}

func TestCompare(t *testing.T) {
	cs := Compare(fixtureResults(t))
	if len(cs) != 2 {
		t.Fatalf("Compare = %+v; want 2 RTTs", cs)
	}
	ten := cs[1]
	if ten.RTTMS != 10 || math.Abs(ten.SendsRatio-31.6/18.2) > 1e-9 || math.Abs(ten.P50DiffMS-(54.6-31.3)) > 1e-9 {
		t.Errorf("Compare at 10 ms = %+v", ten)
	}
	if !ten.HasCase || math.Abs(ten.CaseSendsRatio-27.9/15.6) > 1e-9 || math.Abs(ten.CaseP50DiffMS-(63.7-35.5)) > 1e-9 {
		t.Errorf("Compare at 10 ms, case = %+v", ten)
	}
	// Only one mode at an RTT: no comparison.
	if got := Compare(fixtureResults(t)[:1]); len(got) != 0 {
		t.Errorf("Compare with one mode = %+v; want none", got)
	}
}

func TestReporters(t *testing.T) {
	rs := fixtureResults(t)
	oddRTT := []results.Result{rs[2], rs[3]}
	oddRTT[0].RTTMS, oddRTT[1].RTTMS = 25, 25
	oddRTT[0].Count, oddRTT[1].Count = 60, 60
	tests := []struct {
		name   string
		rep    Reporter
		golden string
	}{
		{"markdown", NewMarkdownReporter(rs), "summary.md.golden"},
		{"text", NewTextReporter(rs), "summary.txt.golden"},
		{"markdown, RTT without case figures, small COUNT", NewMarkdownReporter(oddRTT), "summary-25ms.md.golden"},
		{"text, one mode only: no comparison", NewTextReporter(rs[1:2]), "summary-pooled-only.txt.golden"},
		{"markdown, one mode only: no comparison", NewMarkdownReporter(rs[1:2]), "summary-pooled-only.md.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.rep(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, b.Bytes())
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 1: "1", 999: "999", 1050: "1,050", 1234567: "1,234,567", -1050: "-1,050"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q; want %q", n, got, want)
		}
	}
}

// svgTexts parses an SVG document and returns its root element name and the
// text of every <text> element; it fails the test when the XML is invalid.
func svgTexts(t *testing.T, r io.Reader) (root string, texts []string) {
	t.Helper()
	d := xml.NewDecoder(r)
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return root, texts
		}
		if err != nil {
			t.Fatalf("invalid SVG: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, strings.TrimSpace(string(tok)))
			}
		case xml.EndElement:
			inText = false
		}
	}
}

func TestWriteCharts(t *testing.T) {
	rs := fixtureResults(t)
	dir := t.TempDir()
	if err := WriteCharts(dir, rs); err != nil {
		t.Fatal(err)
	}
	for _, c := range Charts() {
		t.Run(c.File, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			root, texts := svgTexts(t, f)
			if root != "svg" {
				t.Fatalf("root element %q; want svg", root)
			}
			want := []string{c.Title, "per-request", "pooled", "per-request (case)", "pooled (case)", "3 ms", "10 ms"}
			// Every lab bar carries its value.
			for _, r := range rs {
				want = append(want, strings.TrimSpace(sprintf(c.Format, c.Value(r))))
			}
			for _, w := range want {
				if !slices.Contains(texts, w) {
					t.Errorf("chart lacks text %q; has %q", w, texts)
				}
			}
		})
	}
}

func TestChartWithoutCaseFigures(t *testing.T) {
	rs := fixtureResults(t)[2:]
	for i := range rs {
		rs[i].RTTMS = 25
	}
	var b bytes.Buffer
	c := Charts()[0]
	if err := c.Reporter(rs)(&b); err != nil {
		t.Fatal(err)
	}
	_, texts := svgTexts(t, &b)
	if slices.Contains(texts, "pooled (case)") {
		t.Errorf("a chart at 25 ms shows case bars, but the case did not measure 25 ms: %q", texts)
	}
	if !slices.Contains(texts, "25 ms") || !slices.Contains(texts, "pooled") {
		t.Errorf("chart lacks its group or series: %q", texts)
	}
	if err := c.Reporter(nil)(&b); err == nil {
		t.Error("chart of no results: want an error")
	}
}

func TestReport(t *testing.T) {
	out := t.TempDir()
	for _, r := range fixtureResults(t) {
		if err := results.WriteResult(out, r); err != nil {
			t.Fatal(err)
		}
	}
	var term bytes.Buffer
	if err := Report(out, &term); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := NewMarkdownReporter(fixtureResults(t))(&want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md, want.Bytes()) {
		t.Error("summary.md differs from the markdown reporter's output")
	}
	if !strings.Contains(term.String(), "pooled (case)") {
		t.Errorf("terminal summary lacks the case rows:\n%s", term.String())
	}
	for _, c := range Charts() {
		if _, err := os.Stat(filepath.Join(out, "charts", c.File)); err != nil {
			t.Errorf("chart missing: %v", err)
		}
	}
}

func sprintf(format string, v float64) string { return fmt.Sprintf(format, v) }

// TestWriteReportKeepsMarkedSections: rewriting the bench summary keeps the
// sections the fault scenarios and the idle race wrote, and nothing else of
// the old file.
func TestWriteReportKeepsMarkedSections(t *testing.T) {
	out := t.TempDir()
	old := "# old bench table\n\nstale row\n\n<!-- faults:begin -->\n## Fault scenarios\n| a | b |\n<!-- faults:end -->\n\n" +
		"<!-- idle-race:begin -->\n## Idle race\n<!-- idle-race:end -->\n\n<!-- broken:begin -->\nno end\n"
	if err := os.WriteFile(filepath.Join(out, "summary.md"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := results.ReadResults(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(out, rs, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!-- faults:begin -->\n## Fault scenarios\n| a | b |\n<!-- faults:end -->", "<!-- idle-race:begin -->\n## Idle race\n<!-- idle-race:end -->", "| RTT | client |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"stale row", "no end"} {
		if strings.Contains(string(got), gone) {
			t.Errorf("summary.md keeps %q from the old file", gone)
		}
	}
	if !strings.HasSuffix(string(got), "-->\n\n<!-- idle-race:begin -->\n## Idle race\n<!-- idle-race:end -->\n") {
		t.Errorf("the kept sections are not one blank line apart, ending in one newline:\n%q", got)
	}
	// A second report rewrites the file byte for byte (a committed
	// summary is not changed by ./run.sh report).
	if err := WriteReport(out, rs, io.Discard); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(got) {
		t.Errorf("a second report changed summary.md:\n%q\nthen\n%q", got, again)
	}
}

// TestCaseWallScaledToCount: the case's 1,000-send wall time is scaled to
// the COUNT of the lab row it sits under, marked, and the notes say so; at
// COUNT 1000 it is printed as published.
func TestCaseWallScaledToCount(t *testing.T) {
	c, ok := CaseFigureFor(3, vendorapi.PooledName)
	if !ok {
		t.Fatal("no case row for pooled at 3 ms")
	}
	tests := []struct {
		count    int
		wantCell string
		wantNote bool
	}{
		{1000, f1(c.WallS) + " s", false},
		{20000, f1(c.WallS*20) + " s *", true},
		{60, f1(c.WallS*0.06) + " s *", true},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.count), func(t *testing.T) {
			rs := []results.Result{{Mode: vendorapi.PooledName, RTTMS: 3, Count: tt.count, WallS: 485}}
			tab := summaryTable(rs)
			col := slices.Index(tab.header, countLabel(rs)+" sends wall s")
			if col < 0 || len(tab.rows) != 2 {
				t.Fatalf("table %+v; want a wall column and our row then the case's", tab)
			}
			if got := tab.rows[1][col]; got != tt.wantCell {
				t.Errorf("case wall cell = %q; want %q", got, tt.wantCell)
			}
			note := strings.Contains(strings.Join(notes(rs), "\n"), "scaled to the row's COUNT")
			if note != tt.wantNote {
				t.Errorf("notes mention the scaling: %v; want %v", note, tt.wantNote)
			}
			var text strings.Builder
			if err := NewTextReporter(rs)(&text); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(text.String(), "* = the case's wall time"); got != tt.wantNote {
				t.Errorf("text footer explains *: %v; want %v\n%s", got, tt.wantNote, text.String())
			}
		})
	}
	if got := CaseWallS(c, 2000); got != 2*c.WallS {
		t.Errorf("CaseWallS(2000) = %v; want %v", got, 2*c.WallS)
	}
}

// TestCPULabel: an unknown CPU per send (-1, the worker could not read
// its CPU) reads "n/a"; a known one keeps two decimals.
func TestCPULabel(t *testing.T) {
	if got := cpuLabel(-1); got != "n/a" {
		t.Errorf("cpuLabel(-1) = %q; want n/a", got)
	}
	if got := cpuLabel(0.334); got != "0.33" {
		t.Errorf("cpuLabel(0.334) = %q; want 0.33", got)
	}
}

// A run into an OUT that holds an earlier run's bench file names that file
// at its end, as `report` does (the fresh-user trial found the run silent
// while docs/running.md said it names them); a folder of its own files
// only says nothing.
func TestNoteOthers(t *testing.T) {
	dir := t.TempDir()
	old := results.Result{Mode: "per-request", RTTMS: 3, Count: 10}
	cur := results.Result{Mode: "pooled", RTTMS: 3, Count: 10}
	for _, r := range []results.Result{old, cur} {
		if err := results.WriteResult(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := NoteOthers(dir, []results.Result{cur}, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "left out 1 bench file(s)") || !strings.Contains(b.String(), results.ResultFile(old)) ||
		strings.Contains(b.String(), results.ResultFile(cur)) {
		t.Errorf("NoteOthers said %q; want it to name %s only", b.String(), results.ResultFile(old))
	}
	b.Reset()
	if err := NoteOthers(dir, []results.Result{old, cur}, &b); err != nil || b.String() != "" {
		t.Errorf("with every file its own: %q, %v; want nothing said", b.String(), err)
	}
}

// A failed run's summary says so (the fresh-user trial: a crossed
// THRESHOLD_P99_MS exited 1 and only verdict.json said why); `report`
// keeps it, and never shows a verdict of another run beside these figures.
func TestSummaryShowsTheRunsVerdict(t *testing.T) {
	r := results.Result{Mode: "pooled", RTTMS: 3, Count: 10, Warmup: 1,
		Provenance: &results.Provenance{RunID: "20261203T050000Z-aaaaaaa", Date: "2026-12-03T05:00:00Z"}}
	failed := results.NewVerdict([]results.Check{
		{Name: "delivery", Run: "pooled at 3 ms", Value: 0, Limit: 0, Unit: "messages", Pass: true},
		{Name: "THRESHOLD_P99_MS", Run: "pooled at 3 ms", Value: 28.5, Limit: 5, Unit: "ms", Pass: false},
	}, r.Provenance)
	for _, tt := range []struct {
		name  string
		runID string
		want  []string
		not   []string
	}{
		{"this run's verdict", r.Provenance.RunID, []string{"Verdict: **FAIL**: 1 of 2 checks failed", "- THRESHOLD_P99_MS, pooled at 3 ms: 28.5 ms, limit 5"}, nil},
		{"another run's verdict", "20261203T040000Z-bbbbbbb", nil, []string{"Verdict:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := results.WriteResult(dir, r); err != nil {
				t.Fatal(err)
			}
			v := failed
			v.Provenance = &results.Provenance{RunID: tt.runID}
			if err := results.WriteVerdict(dir, v); err != nil {
				t.Fatal(err)
			}
			if err := Report(dir, io.Discard); err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(md), w) {
					t.Errorf("summary lacks %q:\n%s", w, md)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(md), n) {
					t.Errorf("summary shows %q:\n%s", n, md)
				}
			}
		})
	}
}
