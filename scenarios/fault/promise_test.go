package fault

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestBrokenPromise: a report the mock vendor first offered past the
// horizon after the worker's UNKNOWN voids the run (the planted failure,
// shaped on reports-incomplete-resend in an audit at 2805b22, where one
// report came 5.28 s after its UNKNOWN against a 4 s horizon); one offered
// in time does not, and neither does a worker whose horizon fires early
// (the report came in time, the worker still took the send for not sent):
// that failure stays the worker's.
func TestBrokenPromise(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 8, 41, 55, 380_000_000, time.UTC)
	recs := []records.Record{
		{RefKey: "k.0001", Outcome: outcome.Unknown, Start: t0.Add(-time.Second), End: t0},
		{RefKey: "k.0002", Outcome: outcome.Unknown, Start: t0, End: t0.Add(time.Second)},
		{RefKey: "k.0001", Outcome: outcome.Sent, Start: t0.Add(5300 * time.Millisecond), End: t0.Add(5330 * time.Millisecond)},
	}
	h := 4 * time.Second
	// Each send accepted 20 ms into its attempt.
	offer := func(k string, after time.Duration) vendormock.Offer {
		start := map[string]time.Time{"k.0001": t0.Add(-time.Second), "k.0002": t0}[k]
		return vendormock.Offer{Accepted: start.Add(20 * time.Millisecond), At: t0.Add(after)}
	}
	late := map[string]vendormock.Offer{"k.0001": offer("k.0001", 5280*time.Millisecond), "k.0002": offer("k.0002", 3*time.Second)}
	why := brokenPromise(late, recs, h)
	if !strings.Contains(why, "1 report(s)") || !strings.Contains(why, "k.0001") || strings.Contains(why, "k.0002") ||
		!strings.Contains(why, "5.28s") || !strings.Contains(why, "run the scenario again") {
		t.Errorf("planted late report: %q, want 1 report, k.0001 only (k.0002 came 2 s after its UNKNOWN), 5.28s, and what to do", why)
	}
	late["k.0002"] = offer("k.0002", 5270*time.Millisecond) // 4.27 s after its UNKNOWN, as in that audit
	if why := brokenPromise(late, recs, h); !strings.Contains(why, "2 report(s)") || !strings.Contains(why, "k.0002") {
		t.Errorf("both late: %q, want 2 reports named", why)
	}
	inTime := map[string]vendormock.Offer{"k.0001": offer("k.0001", 1200*time.Millisecond), "k.0002": offer("k.0002", 2200*time.Millisecond)}
	if why := brokenPromise(inTime, recs, h); why != "" {
		t.Errorf("reports 1.2 s after their UNKNOWN: %q, want the promise kept", why)
	}
	// The worker's horizon firing early looks, in the counts, like the
	// void case (a report answered already_final, a second send); the
	// vendor was punctual, so the run is not void and judges the worker.
	early := []records.Record{recs[0], {RefKey: "k.0001", Outcome: outcome.Sent, Start: t0.Add(time.Second), End: t0.Add(time.Second)}}
	if why := brokenPromise(map[string]vendormock.Offer{"k.0001": offer("k.0001", 2*time.Second)}, early, h); why != "" {
		t.Errorf("a worker whose horizon fired after 1 s: %q, want not void (its failure is its own)", why)
	}
	if why := brokenPromise(late, recs, 0); why != "" {
		t.Errorf("no promise (complete false): %q, want \"\"", why)
	}
	// nginx-502-horizon: the UNKNOWN attempt never reached the vendor; it
	// accepted only the re-send after the horizon, SENT, and reported on
	// that one 1 s later. No promise was broken (a run at bfccb28 said
	// so before the attempt was matched).
	resent := []records.Record{{RefKey: "k.0003", Outcome: outcome.Unknown, Start: t0, End: t0.Add(50 * time.Millisecond)},
		{RefKey: "k.0003", Outcome: outcome.Sent, Start: t0.Add(5 * time.Second), End: t0.Add(5030 * time.Millisecond)}}
	of := vendormock.Offer{Accepted: t0.Add(5010 * time.Millisecond), At: t0.Add(6010 * time.Millisecond)}
	if why := brokenPromise(map[string]vendormock.Offer{"k.0003": of}, resent, h); why != "" {
		t.Errorf("a report on the re-send of an UNKNOWN the vendor never saw: %q, want \"\"", why)
	}
}

// TestPromisedHorizon: the horizon is the one the worker is told (the
// scenario's override, else the profile's), and none when it is told the
// reports are not complete.
func TestPromisedHorizon(t *testing.T) {
	p, err := vendormock.LoadProfile(filepath.Join("..", "..", "vendormock", "profiles", "alimtalk"))
	if err != nil {
		t.Fatal(err)
	}
	no, yes := false, true
	for _, tc := range []struct {
		rs   ReportsRunSpec
		want time.Duration
	}{
		{ReportsRunSpec{}, 10 * time.Minute},
		{ReportsRunSpec{Horizon: Duration(4 * time.Second), Complete: &yes}, 4 * time.Second},
		{ReportsRunSpec{Horizon: Duration(4 * time.Second), Complete: &no}, 0},
	} {
		got, err := promisedHorizon(p.ReportsJSON, &tc.rs)
		if err != nil || got != tc.want {
			t.Errorf("%+v: %s, %v; want %s", tc.rs, got, err, tc.want)
		}
	}
	if _, err := promisedHorizon("{", &ReportsRunSpec{Complete: &yes}); err == nil {
		t.Error("a profile whose reports do not parse: nil error")
	}
}

// TestVoidVerdictReadsAsTheLabs: a void run fails, says VOID in its line
// and in the faults table, and its note says it is the lab's doing.
func TestVoidVerdictReadsAsTheLabs(t *testing.T) {
	v := Verdict{Name: "reports-incomplete-resend", Tool: "wiremock", Pass: true}
	voidIf(&v, "")
	if !v.Pass || v.Void != "" {
		t.Fatalf("voidIf with no reason changed the verdict: %+v", v)
	}
	voidIf(&v, "the mock vendor broke its promise")
	if v.Pass || !strings.HasPrefix(v.Line(), "VOID") || !strings.HasPrefix(v.Failures[0], "VOID: ") {
		t.Errorf("void verdict: pass %v, line %q, failures %v; want a fail, VOID first", v.Pass, v.Line(), v.Failures)
	}
	var b bytes.Buffer
	if err := WriteFaultsTable(&b, []Verdict{v}, true); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "| VOID |") || !strings.Contains(s, "void (the lab's doing, not the worker's)") {
		t.Errorf("faults table of a void run:\n%s\nwant VOID in the row and the lab named", s)
	}
}
