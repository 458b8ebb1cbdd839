package sim

import (
	"context"
	"os"
	"testing"
)

// defectSeeds is the proof of teeth against issue 27's defects. Each
// defect is fixed in the worker; testdata/sim-defects/<patch>.patch puts
// it back. Each row is a seed of TestSimulate's fixed set whose schedule
// broke the invariant named while the defect was in the code, and whose
// shrunk schedule classify names as the defect.
//
// Without SIM_DEFECT the rows' seeds must pass (the defects stay fixed).
// `./run.sh simulate TEETH=1` applies each patch to a copy of the tree and
// runs TestTeethDefectPutBack there with SIM_DEFECT=<patch>: the patch's
// rows must then fail again, shrink, replay the same trace twice, and
// the whole fixed seed set must find the defect.
var defectSeeds = []struct {
	patch     string // testdata/sim-defects/<patch>.patch
	defect    string
	seed      uint64
	invariant string
}{
	{"attempting-never-swept", DefectAttemptingNeverSwept, 1, InvSettled},
	{"attempting-never-swept", DefectAttemptingNeverSwept, 2, InvSettled},
	{"horizon-after-pull-error", DefectHorizonAfterPullFail, 481, InvLedgerAgrees},
	{"horizon-after-pull-error", DefectHorizonAfterPullFail, 698, InvLedgerAgrees},
	{"horizon-after-interim", DefectHorizonAfterInterim, 87, InvLedgerAgrees},
	{"horizon-after-interim", DefectHorizonAfterInterim, 688, InvLedgerAgrees},
	{"bolt-begin-ignores-deadline", DefectBoltBeginDeadline, 406, InvLedgerAgrees},
	{"bolt-begin-ignores-deadline", DefectBoltBeginDeadline, 73, InvLedgerAgrees},
	{"window-not-rechecked-in-send", DefectWindowAfterToken, 2569, InvSendWindow},
	{"window-not-rechecked-in-send", DefectWindowAfterToken, 4330, InvSendWindow},
	{"stale-finish-is-ledger-failure", DefectStaleFinish, 412, InvLedgerStopNeedsFault},
	{"stale-finish-is-ledger-failure", DefectStaleFinish, 439, InvLedgerStopNeedsFault},
	{"wait-ledger-ping-hidden", DefectWaitLedgerHidden, 11, InvWaitForLedger},
	{"wait-ledger-ping-hidden", DefectWaitLedgerHidden, 14, InvWaitForLedger},
	// Beyond issue 27's list: found by the simulator itself once it ran
	// the real loop, fixed by the worker's delivery renewal.
	{"no-delivery-renewal", DefectDeliveryLimit, 5403, InvOnePlace},
	// Found once the broker model returned mandatory publishes, fixed by
	// the drain's repair of its publish path.
	{"drain-no-repair", DefectDrainNoRepair, 4684, InvSettled},
	// Issue 29's ack batcher, reached once serve ran above concurrency 1
	// (seed 45 at concurrency 8, 58 at 2; 7 at 4, 16 at 2).
	{"ack-names-settled-tag", DefectAckNamesSettledTag, 45, InvNoChannelError},
	{"ack-names-settled-tag", DefectAckNamesSettledTag, 58, InvNoChannelError},
	{"ack-covers-unfinished", DefectAckCoversUnfinished, 7, InvAckAfterOutcome},
	{"ack-covers-unfinished", DefectAckCoversUnfinished, 16, InvAckAfterOutcome},
}

// TestTeethDefectPutBack: without SIM_DEFECT every row's seed passes; with
// SIM_DEFECT=<patch> (the tree carries that patch) the patch's rows break
// their invariant, shrink to a few events classify names as the defect,
// the shrunk schedule replays the same trace twice, and Run over the CI's
// fixed seed set finds the defect.
func TestTeethDefectPutBack(t *testing.T) {
	putBack := os.Getenv("SIM_DEFECT")
	if putBack != "" && defectInvariant(putBack) == "" {
		t.Fatalf("SIM_DEFECT=%q names no row of defectSeeds", putBack)
	}
	for _, c := range defectSeeds {
		t.Run(c.patch, func(t *testing.T) {
			if c.seed >= simSeeds {
				t.Fatalf("seed %d is outside TestSimulate's set (0 to %d)", c.seed, simSeeds-1)
			}
			s := Generate(c.seed)
			r := RunSchedule(s, Options{})
			switch {
			case putBack != "" && c.patch != putBack:
				return // another defect's seed: the one put back may show there too
			case c.patch != putBack:
				if r.Violation != nil {
					t.Fatalf("seed %d (found %q when it was in the code): %v", c.seed, c.defect, r.Violation)
				}
				return
			}
			if r.Violation == nil || r.Violation.Invariant != c.invariant {
				t.Fatalf("seed %d with %q put back: violation %v; want %s", c.seed, c.defect, r.Violation, c.invariant)
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
			w1, w2 := RunSchedule(s, Options{}), RunSchedule(s, Options{})
			if w1.Hash() != w2.Hash() {
				t.Errorf("seed %d: two runs of the whole schedule gave two traces", c.seed)
			}
			t.Logf("seed %d, %s, shrunk to %d of %d events, trace %s twice", c.seed, r.Violation, len(sh.Events), len(s.Events), w1.Hash())
		})
	}
	if putBack == "" {
		return
	}
	sum, err := Run(context.Background(), Options{Seeds: simSeeds, NoShrink: true})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range sum.Failures {
		if f.Violation.Invariant == defectInvariant(putBack) {
			found++
		}
	}
	if found == 0 {
		t.Errorf("with %s put back, none of the %d fixed seeds broke %s", putBack, simSeeds, defectInvariant(putBack))
	}
	t.Logf("with %s put back, %d of the %d fixed seeds broke %s", putBack, found, simSeeds, defectInvariant(putBack))
}

// defectInvariant is the invariant defectSeeds expects of patch.
func defectInvariant(patch string) string {
	for _, r := range defectSeeds {
		if r.patch == patch {
			return r.invariant
		}
	}
	return ""
}

// TestTeethPlantedDefects: the simulator catches the negative controls
// planted in the worker's deployment, within TestSimulate's seeds, by
// at-most-once: a transport that replays a POST whose answer was lost; a
// ledger that loses a committed Begin at a crash; the catalog's
// no-sac-crash (two replicas, competing consumers, a bbolt file each);
// and two replicas under single active consumer with a bbolt file each
// (docs/deployment.md: a standby with a file of its own sends again what
// the active one sent before it died, and the standby takes the
// redelivery: seed 11, its channel closes mid-send; seed 22, at
// concurrency 4; the no-sac-crash plant is caught by seeds 0 and 22 too).
// Without the
// plant (clean: the same replicas and consumers on one shared ledger) the
// same seeds keep at-most-once. And by ack-after-outcome: a publisher
// that takes a mandatory return for a routed publish (the copy lost, its
// original acked with no outcome durable: seed 0, an ad's copy to a
// deleted held queue; before the checker judged acks, one-place caught it
// at quiescence).
func TestTeethPlantedDefects(t *testing.T) {
	perReplica := Options{Ledger: "bbolt", Replicas: 2, Plant: Plant{LedgerPerReplica: true}}
	noSAC, sac := perReplica, perReplica
	noSAC.Plant.NoSingleActiveConsumer = true
	sac.SingleActiveConsumer = true
	cases := []struct {
		name       string
		opt, clean Options
		seeds      []uint64
		inv        string
	}{
		{"transport replays a POST", Options{Plant: Plant{ReplaySends: true}}, Options{}, []uint64{6, 11}, InvAtMostOnce},
		{"ledger loses a committed Begin", Options{Ledger: "bbolt", Plant: Plant{LoseBeginOnCrash: true}}, Options{Ledger: "bbolt"}, []uint64{39, 79}, InvAtMostOnce},
		{"no single active consumer, a bbolt file per replica", noSAC,
			Options{Ledger: "bbolt", Replicas: 2, Plant: Plant{NoSingleActiveConsumer: true}}, []uint64{0, 22}, InvAtMostOnce},
		{"single active consumer, a bbolt file per replica", sac,
			Options{Ledger: "bbolt", Replicas: 2, SingleActiveConsumer: true}, []uint64{11, 22}, InvAtMostOnce},
		{"a mandatory return taken for routed", Options{Plant: Plant{ReturnIsRouted: true}}, Options{}, []uint64{0, 9}, InvAckAfterOutcome},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, seed := range c.seeds {
				with := RunSeed(seed, c.opt)
				if with.Violation == nil || with.Violation.Invariant != c.inv {
					t.Errorf("seed %d with the plant: %v; want %s", seed, with.Violation, c.inv)
				}
				if without := RunSeed(seed, c.clean); without.Violation != nil {
					t.Errorf("seed %d without the plant: %v", seed, without.Violation)
				}
			}
			// Not only the listed seeds: the plant is found early in the
			// fixed set (the first 50 seeds under the race detector,
			// which makes each schedule several times slower).
			scan := uint64(100)
			if raceEnabled {
				scan = 50
			}
			found := 0
			for seed := range scan {
				if r := RunSeed(seed, c.opt); r.Violation != nil && r.Violation.Invariant == c.inv {
					found++
				}
			}
			if found == 0 {
				t.Errorf("the plant broke %s in none of seeds 0 to %d", c.inv, scan-1)
			}
			t.Logf("the plant broke %s in %d of seeds 0 to %d", c.inv, found, scan-1)
		})
	}
}
