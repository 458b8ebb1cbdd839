package fault

import (
	"path/filepath"
	"slices"
	"testing"
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
		lanes := planLanes(scs, n)
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
	one := planLanes(scs, 1)
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
	lanes := planLanes(sel, 4)
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
