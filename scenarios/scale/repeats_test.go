package scale

import (
	"strings"
	"testing"
)

// TestPlanRepeatsInTurns: REPEATS=2 runs each concurrency's points in
// turns (direct, worker, direct, worker), names the second turn "-r2",
// and runs the memory run once; REPEATS=1 keeps the plan and names as
// they were.
func TestPlanRepeatsInTurns(t *testing.T) {
	c := DefaultConfig()
	c.Concurrencies, c.WorkerCounts, c.CaseDelayMS, c.SoakS = []int{32, 128}, []int{1}, CaseOff, 60
	one := c.Plan()
	c.Repeats = 2
	two := c.Plan()
	var names []string
	for _, s := range two {
		names = append(names, s.Name())
	}
	want := []string{
		"grid-direct-w1-c32-150ms", "grid-worker-w1-c32-150ms", "grid-direct-w1-c32-150ms-r2", "grid-worker-w1-c32-150ms-r2",
		"grid-direct-w1-c128-150ms", "grid-worker-w1-c128-150ms", "grid-direct-w1-c128-150ms-r2", "grid-worker-w1-c128-150ms-r2",
		"soak-worker-w1-c128-150ms",
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("REPEATS=2 plan:\n got %v\nwant %v", names, want)
	}
	if len(one) != 5 || one[0].Name() != "grid-direct-w1-c32-150ms" || one[1].Name() != "grid-worker-w1-c32-150ms" {
		t.Errorf("REPEATS=1 plan changed: %v", one)
	}
}

// TestRepeatsSection: the medians of each driver, the spread, the ratio
// of the medians and each turn's ratio; nothing for a run of one.
func TestRepeatsSection(t *testing.T) {
	pt := func(driver string, r int, rate float64) Point {
		return Point{Series: SeriesGrid, Driver: driver, Workers: 1, Concurrency: 128, ServerDelayMS: 18, Repeat: r, SendsPerS: rate}
	}
	ps := []Point{
		pt("direct", 1, 1000), pt("worker", 1, 700),
		pt("direct", 2, 1300), pt("worker", 2, 1000),
		pt("direct", 3, 900), pt("worker", 3, 800),
	}
	out := repeatsSection(ps)
	// direct median 1000 (900-1300), worker median 800 (700-1000):
	// 0.80x; turns 0.70x, 0.77x, 0.89x.
	for _, want := range []string{"| 1000.0 (900.0-1300.0, n=3) |", "| 800.0 (700.0-1000.0, n=3) |", "| 0.80x |", "| 0.70x-0.89x |"} {
		if !strings.Contains(out, want) {
			t.Errorf("repeats section lacks %q:\n%s", want, out)
		}
	}
	if got := repeatsSection([]Point{pt("direct", 0, 1000), pt("worker", 0, 700)}); got != "" {
		t.Errorf("a run of one got a repeats section:\n%s", got)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median(4 1 3 2) = %v, want 2.5", m)
	}
}
