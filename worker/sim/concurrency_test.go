package sim

import (
	"testing"
)

// TestConcurrencyRunsTheAckBatcher: with serve at concurrency 4 the
// first seeds keep every invariant while the scheduler runs handlers
// before older ones, the worker's ack batcher sends multiple acks (and
// its flush timer fires by the simulated clock), and each seed still
// gives one trace when run twice.
func TestConcurrencyRunsTheAckBatcher(t *testing.T) {
	seeds := uint64(300)
	if raceEnabled || testing.Short() {
		seeds = 60
	}
	total := map[string]int{}
	for seed := range seeds {
		s := Generate(seed)
		opt := Options{Concurrency: 4}
		r := RunSchedule(s, opt)
		if r.Err != nil || r.Violation != nil {
			t.Fatalf("seed %d at concurrency 4: %v %v\n%s", seed, r.Err, r.Violation, r.Trace)
		}
		for k, n := range r.Loop {
			total[k] += n
		}
		if seed < 20 {
			if again := RunSchedule(s, opt); again.Hash() != r.Hash() {
				t.Errorf("seed %d at concurrency 4: two runs, two traces", seed)
			}
		}
	}
	for _, k := range []string{"handler turns", "handlers run before an older one", "multiple acks",
		"deliveries settled by a multiple ack", "ack flush timers fired"} {
		if total[k] == 0 {
			t.Errorf("%q never happened in %d seeds at concurrency 4", k, seeds)
		}
	}
	if total["deliveries settled by a multiple ack"] <= total["multiple acks"] {
		t.Errorf("%d multiple acks settled %d deliveries: none covered more than one", total["multiple acks"], total["deliveries settled by a multiple ack"])
	}
	t.Logf("%d seeds at concurrency 4: %v", seeds, total)
}

// TestConcurrencyOneIsAsBefore: at concurrency 1 the scheduler runs the
// handler it holds at once: no handler turn is counted, no ack is
// batched.
func TestConcurrencyOneIsAsBefore(t *testing.T) {
	for seed := range uint64(50) {
		r := RunSchedule(Generate(seed), Options{Concurrency: 1})
		if r.Violation != nil || r.Loop["handler turns"] != 0 || r.Loop["multiple acks"] != 0 {
			t.Fatalf("seed %d at concurrency 1: %v, loop %v", seed, r.Violation, r.Loop)
		}
	}
}
