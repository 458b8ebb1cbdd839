package fault

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestPlanLanes: whatever the number of lanes, every scenario of the
// catalog runs exactly once, each cluster scenario on a lane of its own
// broker size, fault scenarios before idle races within a lane; one lane
// is the old order (clusters first, then everything on one node).
func TestPlanLanes(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, sc := range scs {
		want = append(want, sc.Name)
	}
	slices.Sort(want)
	for _, n := range []int{0, 1, 2, 4, MaxLanes, 100} {
		lanes := planLanes(scs, n, nil)
		if len(lanes) > max(n, 1) && len(lanes) > len(brokerGroups(scs)) {
			t.Errorf("n=%d: %d lanes, want at most %d", n, len(lanes), max(n, len(brokerGroups(scs))))
		}
		var got []string
		for _, l := range lanes {
			raced := false
			for _, sc := range l.scs {
				got = append(got, sc.Name)
				if sc.stackNodes() != l.nodes {
					t.Errorf("n=%d: %s needs %d broker nodes, lane %s has %d", n, sc.Name, sc.stackNodes(), l.name, l.nodes)
				}
				if sc.Kind == KindIdleRace {
					raced = true
				} else if raced {
					t.Errorf("n=%d: lane %s runs fault %s after an idle race", n, l.name, sc.Name)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("n=%d: lanes run %d scenarios, want each of the %d once", n, len(got), len(want))
		}
	}
	one := planLanes(scs, 1, nil)
	if last := one[len(one)-1]; last.nodes != 1 {
		t.Errorf("one lane: the one-node stack runs last (clusters first), got %s last", last.name)
	}
}

// TestPlanLanesSpreadsOneNodeScenarios: with four lanes and one cluster
// size, the one-node scenarios are spread over three lanes, not piled on
// one (a plan that puts everything in one lane would pass the test above).
func TestPlanLanesSpreadsOneNodeScenarios(t *testing.T) {
	sel := []*Scenario{
		{Name: "a", Kind: KindFault}, {Name: "b", Kind: KindFault}, {Name: "c", Kind: KindFault},
		{Name: "d", Kind: KindFault, BrokerNodes: 3}, {Name: "r", Kind: KindIdleRace},
	}
	lanes := planLanes(sel, 4, nil)
	var sizes []int
	for _, l := range lanes {
		sizes = append(sizes, len(l.scs))
	}
	if !slices.Equal(sizes, []int{1, 2, 1, 1}) {
		t.Errorf("lane sizes %v, want [1 2 1 1] (cluster-3: d; lane-1: a r; lane-2: b; lane-3: c)", sizes)
	}
	if lanes[1].scs[1].Name != "r" {
		t.Errorf("lane-1 runs %v, want the idle race after its fault", lanes[1].scs)
	}
}

// TestPlanLanesByDuration: the long scenarios go to different lanes and
// the short ones fill the gaps (longest first, least-loaded lane), where a
// split by count piles the first and fourth longest on one lane.
func TestPlanLanesByDuration(t *testing.T) {
	secs := map[string]int{"long": 350, "a": 10, "b": 10, "race1": 370, "race2": 370, "c": 10, "d": 10}
	var sel []*Scenario
	for _, n := range []string{"long", "a", "b", "c", "d"} {
		sel = append(sel, &Scenario{Name: n, Kind: KindFault})
	}
	for _, n := range []string{"race1", "race2"} {
		sel = append(sel, &Scenario{Name: n, Kind: KindIdleRace})
	}
	est := func(sc *Scenario) time.Duration { return time.Duration(secs[sc.Name]) * time.Second }
	worst := func(lanes []stackLane) time.Duration { return longestLane(lanes, est) }
	byDuration, byCount := planLanes(sel, 3, est), planLanes(sel, 3, nil)
	// 1,130 s over 3 lanes: no split beats 377 s; longest first gives
	// race1+c, race2+d, long+a+b.
	if got := worst(byDuration); got != 380*time.Second {
		t.Errorf("by duration the longest lane takes %s, want 6m20s (each long one with short ones): %v", got, laneNames(byDuration))
	}
	// The negative control: by count, "long" and "race2" share a lane.
	if got := worst(byCount); got <= 380*time.Second {
		t.Errorf("by count the longest lane takes %s; the control expects more than 6m20s", got)
	}
	for _, l := range byDuration {
		if got := l.est; got != func() (s time.Duration) {
			for _, sc := range l.scs {
				s += est(sc)
			}
			return s
		}() {
			t.Errorf("lane %s: est %s is not the sum of its scenarios", l.name, got)
		}
		if i := slices.IndexFunc(l.scs, func(sc *Scenario) bool { return sc.Kind == KindIdleRace }); i >= 0 {
			for _, sc := range l.scs[i:] {
				if sc.Kind != KindIdleRace {
					t.Errorf("lane %s runs fault %s after an idle race", l.name, sc.Name)
				}
			}
		}
	}
}

// TestLaneEstimates: a fault takes its earlier duration or the default;
// an idle race its pauses plus its sends at the slowest RTT, and COUNT
// changes it.
func TestLaneEstimates(t *testing.T) {
	race := &Scenario{Name: "race", Kind: KindIdleRace, IdleRace: &IdleRaceSpec{}}
	race.applyDefaults()
	est := laneEstimates(map[string]time.Duration{"timed": 42 * time.Second}, 0)
	if got := est(&Scenario{Name: "timed", Kind: KindFault}); got != 42*time.Second {
		t.Errorf("timed fault: %s, want 42s", got)
	}
	if got := est(&Scenario{Name: "new", Kind: KindFault}); got != defaultEstimate {
		t.Errorf("untimed fault: %s, want %s", got, defaultEstimate)
	}
	// Defaults: 1000 sends in bursts of 10, pauses 1.5-2.5 s, RTTs 10 and
	// 150 ms, server delay 18 ms: 99 x 2 s + 1000 x 168 ms + 10 s.
	if got, want := est(race), 198*time.Second+168*time.Second+10*time.Second; got != want {
		t.Errorf("idle race: %s, want %s", got, want)
	}
	// COUNT=100: 9 x 2 s + 100 x 168 ms + 10 s.
	if got, want := laneEstimates(nil, 100)(race), 18*time.Second+16800*time.Millisecond+10*time.Second; got != want {
		t.Errorf("idle race at COUNT=100: %s, want %s", got, want)
	}
}

// TestReadDurations: the committed faults.json gives every fault a
// duration; a missing file is none; a malformed one is an error.
func TestReadDurations(t *testing.T) {
	ds, err := ReadDurations(filepath.Join("..", "..", "results", "faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) < 40 || ds["bulk-ad-rate-limit"] < time.Minute {
		t.Errorf("committed durations: %d faults, bulk-ad-rate-limit %s; want every fault, that one over a minute", len(ds), ds["bulk-ad-rate-limit"])
	}
	if ds, err := ReadDurations(filepath.Join(t.TempDir(), "none.json")); err != nil || ds != nil {
		t.Errorf("missing file: %v, %v; want none and no error", ds, err)
	}
	bad := filepath.Join(t.TempDir(), "faults.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDurations(bad); err == nil {
		t.Error("malformed file: no error")
	}
}

// TestPlanLanesCatalog: on the catalog with the committed run's
// durations, the plan by duration ends no later than the split by count
// would (SCENARIO=all's four lanes), and it logs the plan.
func TestPlanLanesCatalog(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	past, err := ReadDurations(filepath.Join("..", "..", "results", "faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	est := laneEstimates(past, 0)
	worst := func(lanes []stackLane) time.Duration { return longestLane(lanes, est) }
	byDuration, byCount := planLanes(scs, 4, est), planLanes(scs, 4, nil)
	t.Logf("by duration: %s", laneNames(byDuration))
	if d, c := worst(byDuration), worst(byCount); d > c {
		t.Errorf("by duration the longest lane is estimated at %s, by count %s", d, c)
	} else {
		t.Logf("longest lane: %s by duration, %s by count", d.Round(time.Second), c.Round(time.Second))
	}
}

// longestLane is the largest sum of est over one lane's scenarios.
func longestLane(lanes []stackLane, est estimateFunc) (w time.Duration) {
	for _, l := range lanes {
		var sum time.Duration
		for _, sc := range l.scs {
			sum += est(sc)
		}
		w = max(w, sum)
	}
	return w
}
