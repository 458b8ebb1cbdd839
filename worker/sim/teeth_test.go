package sim

import "testing"

// defectSeeds is the proof of teeth on THIS BRANCH, which does not have
// issue 27's fixes: each row is a seed of TestSimulate's fixed set whose
// schedule breaks the invariant named, and whose shrunk schedule
// classify names as the defect. The rows pass today because the defects
// are here. When a fix is merged, its rows must turn: the lead keeps
// them as checks against the defect put back (a patch under testdata, or
// a mutant), and the seed itself must then pass. The last two rows are a
// defect beyond the list (DefectDeliveryLimit).
var defectSeeds = []struct {
	defect    string
	seed      uint64
	invariant string
}{
	{DefectAttemptingNeverSwept, 1, InvSettled},
	{DefectAttemptingNeverSwept, 2, InvSettled},
	{DefectHorizonAfterPullFail, 291, InvLedgerAgrees},
	{DefectHorizonAfterPullFail, 698, InvLedgerAgrees},
	{DefectHorizonAfterInterim, 49, InvLedgerAgrees},
	{DefectHorizonAfterInterim, 688, InvLedgerAgrees},
	{DefectBoltBeginDeadline, 68, InvLedgerAgrees},
	{DefectBoltBeginDeadline, 73, InvLedgerAgrees},
	{DefectWindowAfterToken, 65, InvSendWindow},
	{DefectWindowAfterToken, 662, InvSendWindow},
	{DefectStaleFinish, 77, InvLedgerStopNeedsFault},
	{DefectStaleFinish, 272, InvLedgerStopNeedsFault},
	{DefectDeliveryLimit, 3238, InvOnePlace},
	{DefectDeliveryLimit, 5403, InvOnePlace},
}

// TestTeethDefectsOnThisBranch: each defect's seeds break their invariant
// (the simulator finds the defect), shrink to a few events that still
// show it, and the shrunk schedule replays the same trace twice.
func TestTeethDefectsOnThisBranch(t *testing.T) {
	for _, c := range defectSeeds {
		t.Run(c.defect, func(t *testing.T) {
			if c.seed >= simSeeds {
				t.Fatalf("seed %d is outside TestSimulate's set (0 to %d)", c.seed, simSeeds-1)
			}
			s := Generate(c.seed)
			r := RunSchedule(s, Options{})
			if r.Violation == nil || r.Violation.Invariant != c.invariant {
				t.Fatalf("seed %d: violation %v; want %s (the defect %q is fixed? then this row must move to a defect-put-back check)",
					c.seed, r.Violation, c.invariant, c.defect)
			}
			sh, tr := Shrink(s, Options{}, c.invariant)
			f := Failure{Seed: c.seed, Violation: *r.Violation, Events: len(s.Events), Shrunk: sh, Trace: tr}
			if got := classify(f); got != c.defect {
				t.Errorf("seed %d shrunk shows %q; want %q:\n%s", c.seed, got, c.defect, f)
			}
			if len(sh.Events) > 20 || len(sh.Events) >= len(s.Events) {
				t.Errorf("seed %d: shrunk to %d of %d events", c.seed, len(sh.Events), len(s.Events))
			}
			a, b := RunSchedule(sh, Options{}), RunSchedule(sh, Options{})
			if a.Hash() != b.Hash() || a.Violation == nil || a.Violation.Invariant != c.invariant {
				t.Errorf("seed %d: the shrunk schedule does not replay: %v / %v", c.seed, a.Violation, b.Violation)
			}
			t.Logf("seed %d, %s, shrunk to %d of %d events", c.seed, r.Violation, len(sh.Events), len(s.Events))
		})
	}
}

// TestTeethPlantedDefects: the simulator catches the negative controls
// planted in the worker, within TestSimulate's seeds: a transport that
// replays a POST whose answer was lost, and a ledger that loses a
// committed Begin at a crash. Without the plant, the same seeds keep
// at-most-once.
func TestTeethPlantedDefects(t *testing.T) {
	cases := []struct {
		name  string
		opt   Options
		seeds []uint64
	}{
		{"transport replays a POST", Options{Plant: Plant{ReplaySends: true}}, []uint64{6, 11}},
		{"ledger loses a committed Begin", Options{Ledger: "bbolt", Plant: Plant{LoseBeginOnCrash: true}}, []uint64{11, 25}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, seed := range c.seeds {
				with := RunSeed(seed, c.opt)
				if with.Violation == nil || with.Violation.Invariant != InvAtMostOnce {
					t.Errorf("seed %d with the plant: %v; want %s", seed, with.Violation, InvAtMostOnce)
				}
				clean := c.opt
				clean.Plant = Plant{}
				if without := RunSeed(seed, clean); without.Violation != nil && without.Violation.Invariant == InvAtMostOnce {
					t.Errorf("seed %d without the plant: %v", seed, without.Violation)
				}
			}
			// Not only the listed seeds: the plant is found early in the
			// fixed set.
			found := 0
			for seed := range uint64(100) {
				if r := RunSeed(seed, c.opt); r.Violation != nil && r.Violation.Invariant == InvAtMostOnce {
					found++
				}
			}
			if found == 0 {
				t.Error("the plant broke at-most-once in none of seeds 0 to 99")
			}
			t.Logf("the plant broke at-most-once in %d of seeds 0 to 99", found)
		})
	}
}
