package sim_test

import (
	"context"
	"fmt"
	"io"

	"github.com/notifier-lab/notifier-lab/worker/sim"
)

// Run a seed range, as ./run.sh simulate would, and write its summary.
func ExampleRun() {
	done := 0
	sum, err := sim.Run(context.Background(), sim.Options{Seeds: 20, FirstSeed: 100,
		Progress: func(n, failed int) { done = n }})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sum.WriteMarkdown(io.Discard, 100); err != nil {
		fmt.Println(err)
	}
	fmt.Println("schedules:", sum.Schedules, "progress:", done, "every step checked:", sum.Checks >= sum.Steps)
	// Output: schedules: 20 progress: 20 every step checked: true
}

// Replay one seed: the same trace every time.
func ExampleRunSeed() {
	a, b := sim.RunSeed(7, sim.Options{}), sim.RunSeed(7, sim.Options{})
	fmt.Println(a.Hash() == b.Hash(), a.Steps == b.Steps)
	// Output: true true
}
