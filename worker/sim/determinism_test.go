package sim

import (
	"sync"
	"testing"
)

// determinismSeeds is how many seeds TestSameSeedSameTrace runs twice
// (raceDeterminismSeeds under the race detector).
const determinismSeeds = 2_000

// TestSameSeedSameTrace: the consume loop runs on goroutines of its own,
// yet each of the first determinismSeeds seeds, run twice side by side
// with other schedules, gives one trace: the scheduler owns every step.
func TestSameSeedSameTrace(t *testing.T) {
	n := determinismSeeds
	if raceEnabled {
		n = raceDeterminismSeeds
	}
	if testing.Short() {
		n = min(n, 200)
	}
	seeds := make(chan uint64)
	var mu sync.Mutex
	var differ []uint64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for seed := range seeds {
				s := Generate(seed)
				a, b := RunSchedule(s, Options{}), RunSchedule(s, Options{})
				if a.Err != nil || b.Err != nil || a.Hash() != b.Hash() {
					mu.Lock()
					differ = append(differ, seed)
					mu.Unlock()
					t.Errorf("seed %d: two runs, two histories (errors %v / %v):\n--- first\n%s\n--- second\n%s",
						seed, a.Err, b.Err, a.Trace.String(), b.Trace.String())
				}
			}
		})
	}
	for seed := range uint64(n) {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	if len(differ) > 0 {
		t.Fatalf("%d of %d seeds gave two histories: %v", len(differ), n, differ[:min(10, len(differ))])
	}
	t.Logf("%d seeds, each run twice: one trace each", n)
}
