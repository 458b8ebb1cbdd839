package sim

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// simSeeds is the fixed seed set TestSimulate runs: seeds 0 to
// simSeeds-1 (raceSeeds under the race detector, which makes each
// schedule several times slower; docs/testing.md gives the times).
const simSeeds = 10_000

// knownOnThisBranch names the defect classes (classify) this branch still
// has: the defects of issue 27 the simulator finds, fixed on other
// branches, and one class it found beyond them. TestSimulate tolerates
// their seeds and lists them; any other failure fails it. When a fix is
// merged, delete its name here: its seeds must then pass.
var knownOnThisBranch = []string{}

// TestSimulate runs the fixed seed set and fails on any failing seed that
// is not a known defect of this branch (printed shrunk, with its trace).
// It also checks that the schedules exercised every fault kind, every
// outcome and every path of the consume loop the simulator reaches, so
// that a generator (or a loop) that stops reaching some of them fails.
func TestSimulate(t *testing.T) {
	n := simSeeds
	if raceEnabled {
		n = raceSeeds
	}
	if testing.Short() {
		n = min(n, 1000)
	}
	sum, err := Run(context.Background(), Options{Seeds: n, NoShrink: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Schedules != n || len(sum.Errors) > 0 {
		t.Fatalf("ran %d of %d schedules; errors: %v", sum.Schedules, n, sum.Errors)
	}
	t.Logf("%d schedules, %d steps, %d invariant checks, %d failing seeds", sum.Schedules, sum.Steps, sum.Checks, len(sum.Failures))
	known := map[string][]uint64{}
	for _, f := range sum.Failures {
		r := RunSchedule(f.Shrunk, Options{}) // Run keeps no trace of an unshrunk failure
		f.Trace = r.Trace.String()
		c := classify(f)
		if slices.Contains(knownOnThisBranch, c) {
			known[c] = append(known[c], f.Seed)
			continue
		}
		s, tr := Shrink(Generate(f.Seed), Options{}, f.Violation.Invariant)
		f.Shrunk, f.Trace = s, tr
		t.Errorf("a failing seed that is no known defect of this branch (replay: SIM_SEED=%d go test -run TestDebugSeed -v ./worker/sim):\n%s", f.Seed, f)
	}
	for _, c := range knownOnThisBranch {
		if seeds := known[c]; len(seeds) > 0 {
			t.Logf("known defect %q: %d seeds, e.g. %v", c, len(seeds), seeds[:min(5, len(seeds))])
		}
	}
	want := []string{}
	for _, f := range LedgerFaults {
		want = append(want, "ledger-"+f)
	}
	for _, f := range VendorFaults {
		want = append(want, "vendor-"+f)
	}
	for _, f := range PullFaults {
		want = append(want, "vendor-pull-"+f)
	}
	for _, f := range PublishFaults {
		want = append(want, "publish-"+f)
	}
	for _, p := range CrashPoints {
		want = append(want, "crash-"+p)
	}
	for _, p := range FreezePoints {
		want = append(want, "freeze-"+p)
	}
	want = append(want, "close-now", "close-mid-send")
	for _, k := range want {
		if sum.Faults[k] == 0 {
			t.Errorf("fault %s never fired in %d schedules", k, n)
		}
	}
	for _, o := range []string{"SENT", "NOT_SENT", "UNKNOWN", "REJECTED", "INVALID", "DUPLICATE", "OUTSIDE_SEND_WINDOW", "requeued",
		"settled by pull", "settled by push", "settled by horizon"} {
		if sum.Outcomes[o] == 0 {
			t.Errorf("outcome %s never happened in %d schedules", o, n)
		}
	}
	for _, k := range []string{"sessions", "sessions lost", "reconnects after a lost session", "stops for a broken ledger",
		"ledger waits refused a write", "ledger waits that saw a write", "pauses after a requeue", "wake-ups",
		"a delivery of a lost generation refused", "handovers to another replica",
		"publish path repairs", "connections closed over a freeze",
		"handler turns", "handlers run before an older one", "ack flush timers fired",
		"multiple acks", "deliveries settled by a multiple ack"} {
		if sum.Loop[k] == 0 {
			t.Errorf("the consume loop never did %q in %d schedules", k, n)
		}
	}
	var md bytes.Buffer
	if err := sum.WriteMarkdown(&md, 0); err != nil || !strings.Contains(md.String(), "| schedules | ") {
		t.Errorf("WriteMarkdown: %v", err)
	}
}
