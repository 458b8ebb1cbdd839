package fault

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

func mustParse(t *testing.T, y string) *Scenario {
	t.Helper()
	sc, err := Parse("x.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestEvaluate(t *testing.T) {
	sc := mustParse(t, strings.Replace(minimal, "  outcomes: {SENT: 1}\n",
		"  outcomes: {SENT: 1, UNKNOWN: 1}\n  journal: 2\n  journal_by_outcome: {UNKNOWN: 1}\n  records: {UNKNOWN: 1}\n  reasons: true\n", 1))
	recs := []records.Record{
		{Seq: 1, RefKey: "k1", Outcome: "SENT"},
		{Seq: 2, RefKey: "k2", Outcome: "UNKNOWN", Error: "read: EOF"},
	}
	journal := []vendormock.JournalEntry{{RefKey: "k1", Status: 200}, {RefKey: "k2", Status: 200}}
	okRep := &reconcile.Report{OK: true, ByOutcome: map[outcome.Outcome]int{"SENT": 1, "UNKNOWN": 1}}

	tests := []struct {
		name     string
		rep      *reconcile.Report
		recs     []records.Record
		journal  []vendormock.JournalEntry
		checks   []Check
		wantPass bool
		wantFail string
	}{
		{"all as expected", okRep, recs, journal, nil, true, ""},
		{"journal count off", okRep, recs, journal[:1], nil, false, "journal: 1, want 2"},
		{"unexpected outcome", &reconcile.Report{OK: true, ByOutcome: map[outcome.Outcome]int{"SENT": 1, "UNKNOWN": 1, "NOT_SENT": 1}}, recs, journal, nil, false, "NOT_SENT: 1, want none"},
		{"duplicate", &reconcile.Report{OK: true, Duplicates: 1, ByOutcome: okRep.ByOutcome}, recs, journal, nil, false, "more than once"},
		{"lost", &reconcile.Report{OK: true, Lost: 1, ByOutcome: okRep.ByOutcome}, recs, journal, nil, false, "1 messages lost"},
		{"reconciler violation", &reconcile.Report{OK: false, ByOutcome: okRep.ByOutcome, Violations: []reconcile.Violation{{RefKey: "k2", Rule: "route", Detail: "wrong queue"}}}, recs, journal, nil, false, "route k2: wrong queue"},
		{"failed check", okRep, recs, journal, []Check{{Step: 1, What: "journal sends so far", Want: "0", Got: 1}}, false, "steps[1] journal sends so far: 1, want 0"},
		{"missing reason", okRep, []records.Record{recs[0], {Seq: 2, RefKey: "k2", Outcome: "UNKNOWN"}}, journal, nil, false, "carries no reason"},
		{"journal of unknown off", okRep, recs, []vendormock.JournalEntry{{RefKey: "k1"}, {RefKey: "k1"}}, nil, false, "journal of UNKNOWN messages: 0, want 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := evaluate(sc, tt.rep, tt.recs, tt.journal, tt.checks, nil)
			if v.Pass != tt.wantPass {
				t.Errorf("Pass = %v; want %v (failures %q)", v.Pass, tt.wantPass, v.Failures)
			}
			if tt.wantFail != "" && !strings.Contains(strings.Join(v.Failures, "|"), tt.wantFail) {
				t.Errorf("failures %q; want one containing %q", v.Failures, tt.wantFail)
			}
			if v.JournalCount != len(tt.journal) {
				t.Errorf("JournalCount = %d; want %d", v.JournalCount, len(tt.journal))
			}
		})
	}
}

func TestWindowViolations(t *testing.T) {
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m, s int) time.Time { return time.Date(2026, 11, 30, h, m, s, 0, seoul) }
	tests := []struct {
		name string
		recs []records.Record
		want int
	}{
		{"sent before, held after", []records.Record{{Outcome: "SENT", Clock: at(20, 49, 59)}, {Outcome: "OUTSIDE_SEND_WINDOW", Clock: at(20, 50, 0)}}, 0},
		{"sent after the cutoff", []records.Record{{Outcome: "SENT", Clock: at(20, 50, 1)}}, 1},
		{"held before the cutoff", []records.Record{{Outcome: "OUTSIDE_SEND_WINDOW", Clock: at(20, 49, 0)}}, 1},
		{"held before the opening is fine", []records.Record{{Outcome: "OUTSIDE_SEND_WINDOW", Clock: at(7, 0, 0)}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := windowViolations(tt.recs, "20:50"); len(got) != tt.want {
				t.Errorf("violations %q; want %d", got, tt.want)
			}
		})
	}
}

// TestLastSent: the latest SENT record's worker clock in the window's
// zone, whatever the records' order; held and failed records do not
// count; "" without a SENT record.
func TestLastSent(t *testing.T) {
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m, s, ms int) time.Time { return time.Date(2026, 11, 30, h, m, s, ms*1e6, seoul).UTC() }
	recs := []records.Record{
		{Outcome: "SENT", Clock: at(20, 49, 58, 120)},
		{Outcome: "SENT", Clock: at(20, 49, 59, 875)},
		{Outcome: "NOT_SENT", Clock: at(20, 49, 59, 950)},
		{Outcome: "SENT", Clock: at(20, 49, 57, 0)},
		{Outcome: "OUTSIDE_SEND_WINDOW", Clock: at(20, 50, 1, 0)},
	}
	if got := lastSent(recs); got != "20:49:59.875" {
		t.Errorf("lastSent = %q, want 20:49:59.875 (the latest SENT, Seoul time)", got)
	}
	if got := lastSent(recs[2:3]); got != "" {
		t.Errorf("lastSent without a SENT = %q", got)
	}
	v := Verdict{Pass: true, LastSent: "20:49:59.875"}
	if !strings.Contains(v.Line(), "last SENT at 20:49:59.875 (worker clock)") {
		t.Errorf("Line() = %q lacks the finish", v.Line())
	}
}

func TestAppendSectionKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	bench := "# Bench\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
	if err := os.WriteFile(path, []byte(bench), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"## Faults\n\nfirst\n", "## Faults\n\nsecond\n"} {
		if err := appendSection(path, "faults", body, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	s := string(got)
	if !strings.HasPrefix(s, bench) {
		t.Errorf("bench table not kept:\n%s", s)
	}
	if strings.Contains(s, "first") || strings.Count(s, "## Faults") != 1 || !strings.Contains(s, "second") {
		t.Errorf("section not replaced once:\n%s", s)
	}
}

func TestWriteFaultsMergesAndWrites(t *testing.T) {
	out := t.TempDir()
	three := Exactly(3)
	a := Verdict{Name: "a", Tool: "nginx", Pass: true, Observed: map[outcome.Outcome]int{"UNKNOWN": 3}, Expected: Expected{Outcomes: map[outcome.Outcome]Count{"UNKNOWN": three}}}
	b := Verdict{Name: "b", Tool: "toxiproxy", Pass: false, Failures: []string{"journal: 1, want 0"}, Observed: map[outcome.Outcome]int{"SENT": 1}}
	var buf bytes.Buffer
	if err := WriteFaults(out, []Verdict{a, b}, nil, &buf); err != nil {
		t.Fatal(err)
	}
	a.JournalCount = 7
	if err := WriteFaults(out, []Verdict{a}, nil, &buf); err != nil { // a run of one scenario keeps b
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Pass   bool
		Faults []map[string]any
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	var typed FaultsFile
	if err := json.Unmarshal(raw, &typed); err != nil {
		t.Fatalf("faults.json does not read back: %v", err)
	}
	if got := typed.Faults[0].Expected.Outcomes["UNKNOWN"]; got != three {
		t.Errorf("expected UNKNOWN read back as %v; want %v", got, three)
	}
	if len(f.Faults) != 2 || f.Faults[0]["name"] != "a" || f.Faults[0]["journal_count"] != 7.0 || f.Pass {
		t.Errorf("faults.json = %s", raw)
	}
	for _, k := range []string{"name", "expected", "observed", "journal_count", "duplicates", "lost", "pass"} {
		if _, ok := f.Faults[0][k]; !ok {
			t.Errorf("faults.json entry lacks %q", k)
		}
	}
	if !strings.Contains(buf.String(), "b failed: journal: 1, want 0") || !strings.Contains(buf.String(), "1 of 2 faults passed") {
		t.Errorf("printed table:\n%s", buf.String())
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	if !strings.Contains(string(md), "1 of 2 faults passed") || !strings.Contains(string(md), "(faults.md)") {
		t.Errorf("summary.md:\n%s", md)
	}
}

func TestRaceRowAndChart(t *testing.T) {
	recs := []records.Record{
		{Outcome: "SENT", GotConns: 1, Reused: true},
		{Outcome: "SENT", GotConns: 2},
		{Outcome: "UNKNOWN", GotConns: 1, Reused: true},
		{Outcome: "NOT_SENT", GotConns: 1},
	}
	row := raceRow(150, "default", 90*time.Second, 4, recs, 3, reconcile.Report{OK: true})
	if row.Failures != 2 || row.FailuresPer1000 != 500 || row.Absorbed != 1 || row.NewConnections != 2 || row.ReachedVendor != 3 {
		t.Errorf("row = %+v", row)
	}
	res := IdleRaceResult{KeepaliveTimeoutMS: 2000, Rows: []IdleRaceRow{row,
		raceRow(150, "t_minus_rtt_margin", 1600*time.Millisecond, 4, recs[:2], 2, reconcile.Report{OK: true})}}
	var svg bytes.Buffer
	if err := WriteIdleRaceChart(&svg, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "RTT 150 ms") {
		t.Errorf("chart is not an SVG with the RTT legend")
	}
}

func TestWriteIdleRaceNamesFilesAfterTheScenario(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	for _, name := range []string{"idle-race", "idle-race-window"} {
		res := IdleRaceResult{Scenario: name, KeepaliveTimeoutMS: 2000, Pass: true,
			Rows: []IdleRaceRow{raceRow(10, "default", 90*time.Second, 10, nil, 10, reconcile.Report{OK: true})}}
		if err := WriteIdleRace(out, res, &buf); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"idle-race.json", "idle-race.md", "charts/idle-race.svg", "idle-race-window.json", "charts/idle-race-window.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	if strings.Count(string(md), "## Idle race: ") != 2 {
		t.Errorf("summary.md should hold one section per race:\n%s", md)
	}
}

// TestOtherViolationsPlantedReplay: with an expected duplicate, the
// attempts finding on that same refkey (a transport replay: two requests,
// one ledger attempt) is the planted fault; an attempts finding on any
// other refkey, and every finding of a scenario expecting 0, still count.
func TestOtherViolationsPlantedReplay(t *testing.T) {
	rep := &reconcile.Report{
		DuplicateRefKeys: []string{"r-3"},
		Violations: []reconcile.Violation{
			{RefKey: "r-3", Rule: reconcile.RuleDuplicate},
			{RefKey: "r-3", Rule: reconcile.RuleAttempts},
			{RefKey: "r-4", Rule: reconcile.RuleAttempts},
		},
	}
	got := OtherViolations(rep, 1, 0)
	if len(got) != 1 || got[0].RefKey != "r-4" || got[0].Rule != reconcile.RuleAttempts {
		t.Errorf("want 1, OtherViolations = %+v; want only r-4's attempts finding", got)
	}
	if got := OtherViolations(rep, 0, 0); len(got) != 3 {
		t.Errorf("want 0, OtherViolations = %+v; want all 3", got)
	}
}

// faults.json records the provenance of the run that wrote it last.
func TestWriteFaultsRecordsProvenance(t *testing.T) {
	out := t.TempDir()
	prov := &results.Provenance{RunID: "20261201T230000Z-abcdef0", Commit: "abcdef0123", Command: []string{"run", "SCENARIO=all"}, Date: "2026-12-01T23:00:00Z"}
	v := Verdict{Name: "a", Tool: "nginx", Pass: true, Observed: map[outcome.Outcome]int{}}
	if err := WriteFaults(out, []Verdict{v}, prov, io.Discard); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f FaultsFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Provenance == nil || f.Provenance.Commit != prov.Commit || f.Provenance.RunID != prov.RunID {
		t.Errorf("faults.json provenance = %+v; want %+v", f.Provenance, prov)
	}
	md, err := os.ReadFile(filepath.Join(out, "faults.md"))
	if err != nil || !strings.Contains(string(md), "Run 20261201T230000Z-abcdef0 at commit abcdef0123") || !strings.Contains(string(md), "Command: `./run.sh SCENARIO=all`") {
		t.Errorf("faults.md lacks the provenance header (%v):\n%s", err, md)
	}
}

// TestEvaluateExpectedLoss: a negative control with expect.lost passes
// only when the reconciler finds exactly that many lost (its lost
// violations then are not "other" violations); none found fails it.
func TestEvaluateExpectedLoss(t *testing.T) {
	sc := mustParse(t, strings.Replace(minimal, "  outcomes: {SENT: 1}\n", "  outcomes: {SENT: 1}\n  lost: 2\n", 1))
	recs := []records.Record{{Seq: 1, RefKey: "k1", Outcome: "SENT"}}
	journal := []vendormock.JournalEntry{{RefKey: "k1", Status: 200}}
	lostViol := []reconcile.Violation{{RefKey: "k2", Rule: reconcile.RuleLost}, {RefKey: "k3", Rule: reconcile.RuleLost}}
	for _, tt := range []struct {
		name     string
		rep      *reconcile.Report
		wantPass bool
		wantFail string
	}{
		{"the planted loss seen", &reconcile.Report{OK: false, Lost: 2, ByOutcome: map[outcome.Outcome]int{"SENT": 1}, Violations: lostViol}, true, ""},
		{"no loss seen", &reconcile.Report{OK: true, ByOutcome: map[outcome.Outcome]int{"SENT": 1}}, false, "0 messages lost, want 2"},
		{"another violation besides", &reconcile.Report{OK: false, Lost: 2, ByOutcome: map[outcome.Outcome]int{"SENT": 1},
			Violations: append(lostViol, reconcile.Violation{RefKey: "k1", Rule: reconcile.RuleRoute, Detail: "wrong queue"})}, false, "route k1: wrong queue"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := evaluate(sc, tt.rep, recs, journal, nil, nil)
			if v.Pass != tt.wantPass {
				t.Errorf("Pass = %v; want %v (failures %q)", v.Pass, tt.wantPass, v.Failures)
			}
			if tt.wantFail != "" && !strings.Contains(strings.Join(v.Failures, "|"), tt.wantFail) {
				t.Errorf("failures %q; want one containing %q", v.Failures, tt.wantFail)
			}
		})
	}
}
