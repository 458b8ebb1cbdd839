package sim

import (
	"context"
	"reflect"
	"testing"
)

// replaySeeds are seeds of each kind: clean and failing, the in-memory
// and the bbolt ledger, with and without reports.
var replaySeeds = []uint64{0, 1, 3, 49, 65, 68, 77, 184, 291, 532, 3238}

// TestReplayIsDeterministic runs each seed twice and compares the traces:
// one seed is one history.
func TestReplayIsDeterministic(t *testing.T) {
	bolt := 0
	for _, seed := range replaySeeds {
		s1, s2 := Generate(seed), Generate(seed)
		if !reflect.DeepEqual(s1, s2) {
			t.Fatalf("seed %d: Generate gave two schedules", seed)
		}
		if s1.Config.Bolt {
			bolt++
		}
		a, b := RunSchedule(s1, Options{}), RunSchedule(s2, Options{})
		if a.Err != nil || b.Err != nil {
			t.Fatalf("seed %d: %v / %v", seed, a.Err, b.Err)
		}
		if a.Hash() != b.Hash() {
			t.Errorf("seed %d: two runs, two traces:\n--- first\n%s\n--- second\n%s", seed, a.Trace.String(), b.Trace.String())
		}
		if len(a.Trace.Lines) < len(s1.Events)/2 && a.Violation == nil {
			t.Errorf("seed %d: a trace of %d lines for %d events", seed, len(a.Trace.Lines), len(s1.Events))
		}
		if !reflect.DeepEqual(a.Violation, b.Violation) || a.Steps != b.Steps {
			t.Errorf("seed %d: verdicts differ: %v (%d steps) / %v (%d steps)", seed, a.Violation, a.Steps, b.Violation, b.Steps)
		}
	}
	if bolt == 0 {
		t.Error("no replay seed runs the bbolt ledger; add one")
	}
}

// TestSeedsDiffer guards the replay test against a trace that says
// nothing: different seeds give different traces.
func TestSeedsDiffer(t *testing.T) {
	seen := map[string]uint64{}
	for _, seed := range replaySeeds {
		h := RunSeed(seed, Options{}).Hash()
		if other, ok := seen[h]; ok {
			t.Errorf("seeds %d and %d have the same trace", other, seed)
		}
		seen[h] = seed
	}
}

// TestRunIsDeterministicAcrossWorkers: the summary of a seed range does
// not depend on how many schedules run side by side.
func TestRunIsDeterministicAcrossWorkers(t *testing.T) {
	run := func(workers int) Summary {
		s, err := Run(context.Background(), Options{Seeds: 150, FirstSeed: 1000, Workers: workers, NoShrink: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.Failures {
			s.Failures[i].Trace = "" // compared by seed and violation
		}
		return s
	}
	a, b := run(1), run(3)
	if a.Steps != b.Steps || a.Checks != b.Checks || !reflect.DeepEqual(a.Faults, b.Faults) ||
		!reflect.DeepEqual(a.Outcomes, b.Outcomes) || !reflect.DeepEqual(a.Failures, b.Failures) {
		t.Errorf("1 worker: %d steps, %d failures; 3 workers: %d steps, %d failures", a.Steps, len(a.Failures), b.Steps, len(b.Failures))
	}
	if a.Steps < 150*10 {
		t.Errorf("150 seeds made %d steps; the comparison says little", a.Steps)
	}
}
