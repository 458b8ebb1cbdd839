package fault

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestIdleRaceReportsValidate: idle_race.reports is checked like
// server.reports (its numbers), needs unknown_left (0 when the vendor's
// reports are complete), a profile and the Go worker; unknown_left needs
// reports.
func TestIdleRaceReportsValidate(t *testing.T) {
	base := `name: r
description: d
kind: idle-race
tool: nginx
fault: f
idle_race:
  rtts_ms: [10]
  settings: [default]
REPORTS
APPLIES
`
	const (
		goAlim = "applies_to: {workers: [go], profiles: [alimtalk]}"
		ok     = "  reports: {delay_ms: 1000, pull: true, horizon: 4s, complete: true}\n  unknown_left: 0"
	)
	for name, tc := range map[string]struct{ reports, applies, wantErr string }{
		"ok":                       {ok, goAlim, ""},
		"off":                      {"", "applies_to: {workers: [go]}", ""},
		"incomplete, some left":    {"  reports: {complete: false}\n  unknown_left: \">=0\"", goAlim, ""},
		"unknown_left unsaid":      {"  reports: {delay_ms: 1}", goAlim, "idle_race.unknown_left"},
		"complete, left > 0":       {"  reports: {complete: true}\n  unknown_left: 1", goAlim, "idle_race.unknown_left"},
		"unknown_left, no reports": {"  unknown_left: 0", goAlim, "needs idle_race.reports"},
		"negative delay":           {"  reports: {delay_ms: -1}\n  unknown_left: 0", goAlim, "idle_race.reports.delay_ms"},
		"copies 11":                {"  reports: {copies: 11}\n  unknown_left: 0", goAlim, "idle_race.reports.copies"},
		"no profile":               {ok, "applies_to: {workers: [go]}", "applies_to.profiles"},
		"not the Go worker":        {ok, "applies_to: {workers: [contract], profiles: [alimtalk]}", "applies_to.workers"},
		"server.reports":           {"", goAlim + "\nserver: {reports: {delay_ms: 1}}", "server.reports"},
	} {
		doc := strings.Replace(strings.Replace(base, "REPORTS", tc.reports, 1), "APPLIES", tc.applies, 1)
		sc, err := Parse("r.yaml", []byte(doc))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err %v, want one naming %s", name, err, tc.wantErr)
		case name == "ok" && (sc.IdleRace.Reports == nil || !sc.IdleRace.Reports.Pull || sc.IdleRace.Reports.Horizon.D() != 4*time.Second ||
			sc.IdleRace.UnknownLeft == nil || !sc.IdleRace.UnknownLeft.Match(0) || sc.IdleRace.UnknownLeft.Match(1)):
			t.Errorf("ok: parsed %+v, unknown_left %v", sc.IdleRace.Reports, sc.IdleRace.UnknownLeft)
		}
	}
}

// plantedLane is one lane's end as the judge gathers it: k1 left UNKNOWN
// (in the ledger and as a copy in the unknown queue), k2 settled SENT by
// its report 1.2 s after its send, k3 NOT_SENT by the horizon and sent
// again.
func plantedLane(t0 time.Time) (reconcile.Input, []records.Record) {
	in := reconcile.Input{
		Queues: map[string][]reconcile.QueuedMessage{"race.unknown": {{RefKey: "k1"}}},
		Ledger: []ledger.Entry{
			{RefKey: "k1", State: outcome.Unknown},
			{RefKey: "k2", State: outcome.Sent, Resolution: &ledger.Resolution{Source: ledger.SourceReport, At: t0.Add(1200 * time.Millisecond)}},
			{RefKey: "k3", State: outcome.Sent, Resolution: &ledger.Resolution{Source: ledger.SourceHorizon, At: t0.Add(6 * time.Second)}},
		},
	}
	recs := []records.Record{
		{RefKey: "k1", Outcome: outcome.Unknown, Start: t0},
		{RefKey: "k2", Outcome: outcome.Unknown, Start: t0},
		{RefKey: "k3", Outcome: outcome.Unknown, Start: t0},
		{RefKey: "k3", Outcome: outcome.Sent, Start: t0.Add(7 * time.Second), GotConns: 1},
		{RefKey: "k4", Outcome: outcome.Sent, Start: t0, GotConns: 1, Reused: true},
	}
	return in, recs
}

// TestIdleRaceRowSettle: a lane measured with reports shows its UNKNOWN
// left (the planted k1: 1), its settlements by source and the time to
// settle, in the JSON and in both tables; a lane without reports keeps
// the table and JSON of before (no settlement column, no key).
func TestIdleRaceRowSettle(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	in, recs := plantedLane(t0)
	row := raceRow(300, "default", 90*time.Second, 4, recs, 4, reconcile.Report{OK: true})
	row.addSettle(measureSettle(in, "race.unknown", recs))
	if row.UnknownLeft == nil || *row.UnknownLeft != 1 {
		t.Fatalf("unknown_left %v, want 1 (k1)", row.UnknownLeft)
	}
	if row.Unknown != 3 || row.SettledBy[ledger.SourceReport] != 1 || row.SettledBy[ledger.SourceHorizon] != 1 {
		t.Errorf("UNKNOWN produced %d, settled by %v; want 3, report 1, horizon 1", row.Unknown, row.SettledBy)
	}
	if row.TimeToSettle == nil || row.TimeToSettle.N != 1 || row.TimeToSettle.P50MS != 1200 {
		t.Errorf("time to settle %+v, want one, 1200 ms (the horizon's is not a report's)", row.TimeToSettle)
	}
	res := IdleRaceResult{Scenario: "idle-race-reports", Reports: "pushed 1000 ms after", Rows: []IdleRaceRow{row}}
	var md, txt bytes.Buffer
	WriteIdleRaceTable(&md, res, true)
	WriteIdleRaceTable(&txt, res, false)
	for _, s := range []string{md.String(), txt.String()} {
		for _, want := range []string{"UNKNOWN left", "report 1 / pull 0 / horizon 1", "1200 / 1200"} {
			if !strings.Contains(s, want) {
				t.Errorf("table lacks %q:\n%s", want, s)
			}
		}
	}
	if !strings.Contains(md.String(), "| 1 | 1200 / 1200 |") {
		t.Errorf("markdown row lacks left 1 before the time to settle:\n%s", md.String())
	}
	if s := idleSummary(res); !strings.Contains(s, "UNKNOWN produced 3, settled: report 1 / pull 0 / horizon 1, left 1") {
		t.Errorf("summary %q lacks the settlement", s)
	}
	b, _ := json.Marshal(row)
	if !strings.Contains(string(b), `"unknown_left":1`) || !strings.Contains(string(b), `"settled_by":{"horizon":1,"report":1}`) {
		t.Errorf("row JSON %s lacks unknown_left 1 and settled_by", b)
	}

	off := raceRow(300, "default", 90*time.Second, 4, recs, 4, reconcile.Report{OK: true})
	var offMD bytes.Buffer
	WriteIdleRaceTable(&offMD, IdleRaceResult{Rows: []IdleRaceRow{off}}, true)
	head := "| RTT ms | setting | idle timeout | sends | UNKNOWN | NOT_SENT | failures/1000 | absorbed/1000 | new conns | reached vendor | dup | lost |\n"
	if !strings.HasPrefix(offMD.String(), head) {
		t.Errorf("reports off: table changed:\n%s", offMD.String())
	}
	if b, _ := json.Marshal(off); strings.Contains(string(b), "unknown_left") || strings.Contains(string(b), "settled_by") {
		t.Errorf("reports off: row JSON %s names the settlement", b)
	}
}

// TestSettleLimit: the wait covers the report's delay, the horizon, four
// sweeps and the quiet time.
func TestSettleLimit(t *testing.T) {
	got := settleLimit(&ReportsRunSpec{DelayMS: 1000}, 4*time.Second)
	if want := time.Second + 4*time.Second + 4*reportSweep + settleQuiet + 20*time.Second; got != want {
		t.Errorf("settleLimit %s, want %s", got, want)
	}
}

// TestIdleCellNeverZero: a lane that runs with the worker's own idle
// timeout, which the race does not know, is not printed as "0s" (issue
// 30: the committed audits' idle race tables read "worker | 0s"); a lane
// with a set timeout prints it (the control).
func TestIdleCellNeverZero(t *testing.T) {
	var b strings.Builder
	WriteIdleRaceTable(&b, IdleRaceResult{Rows: []IdleRaceRow{
		{RTTMS: 3, Setting: IdleSettingWorker},
		{RTTMS: 3, Setting: "t_minus_rtt_margin", IdleConnTimeoutMS: 73997},
	}}, true)
	if strings.Contains(b.String(), "| 0s |") || !strings.Contains(b.String(), "| worker | the worker's own (not known to the race) |") {
		t.Errorf("worker lane:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "| 1m13.997s |") {
		t.Errorf("set lane:\n%s", b.String())
	}
}
