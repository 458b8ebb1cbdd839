package fault

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// EnvFaultShard names the part of the one-node catalog TestIntegrationFaults
// runs: "K/N" (1 <= K <= N) runs every Nth scenario from the Kth, in
// catalog order, on a stack of its own. ./run.sh's lanes run 1/2 and 2/2
// side by side, which together run each scenario once; unset runs them all.
const EnvFaultShard = "LAB_FAULT_SHARD"

// shardOf is every nth scenario of scs from the kth (1-based).
func shardOf(scs []*Scenario, k, n int) []*Scenario {
	var kept []*Scenario
	for i, sc := range scs {
		if i%n == k-1 {
			kept = append(kept, sc)
		}
	}
	return kept
}

// parseShard reads "K/N" with 1 <= K <= N.
func parseShard(v string) (k, n int, err error) {
	ks, ns, ok := strings.Cut(v, "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	if !ok || kerr != nil || nerr != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("want K/N with 1 <= K <= N (for example 1/2)")
	}
	return k, n, nil
}

func TestParseShard(t *testing.T) {
	for _, v := range []string{"1/1", "1/2", "2/2", "3/4"} {
		if _, _, err := parseShard(v); err != nil {
			t.Errorf("parseShard(%q): %v, want ok", v, err)
		}
	}
	for _, v := range []string{"", "1", "0/2", "3/2", "1/0", "a/2", "1/b", "-1/2", "1/2/3"} {
		if _, _, err := parseShard(v); err == nil {
			t.Errorf("parseShard(%q) accepted, want an error", v)
		}
	}
}

// TestShardsRunEachScenarioOnce: the shards 1/n..n/n of the catalog are
// disjoint and together the whole catalog, so ./run.sh's two fault lanes
// leave nothing out.
func TestShardsRunEachScenarioOnce(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		var all []string
		for k := 1; k <= n; k++ {
			part := shardOf(scs, k, n)
			if len(part) == 0 {
				t.Errorf("shard %d/%d is empty", k, n)
			}
			for _, sc := range part {
				all = append(all, sc.Name)
			}
		}
		var want []string
		for _, sc := range scs {
			want = append(want, sc.Name)
		}
		slices.Sort(all)
		slices.Sort(want)
		if !slices.Equal(all, want) {
			t.Errorf("shards of %d: %d scenarios, want each of the %d once", n, len(all), len(want))
		}
	}
}
