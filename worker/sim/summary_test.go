package sim

import (
	"context"
	"strings"
	"testing"
)

// TestRunShrinksTheLowestSeeds: Run shrinks the lowest failing seeds of
// each invariant (ShrinkPerInvariant), keeps their traces, and the
// markdown summary lists every failing seed's invariant and the shrunk
// ones in full.
func TestRunShrinksTheLowestSeeds(t *testing.T) {
	// The planted replay makes failing seeds whatever the worker's fixes.
	sum, err := Run(context.Background(), Options{Seeds: 60, ShrinkPerInvariant: 1, Plant: Plant{ReplaySends: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) < 2 {
		t.Fatalf("%d failing seeds of 60 with a planted replay; the test says nothing", len(sum.Failures))
	}
	seen := map[string]bool{}
	for _, f := range sum.Failures {
		first := !seen[f.Violation.Invariant]
		seen[f.Violation.Invariant] = true
		if shrunk := f.Trace != ""; shrunk != first {
			t.Errorf("seed %d (%s): shrunk %t; want %t (the lowest seed of its invariant only)", f.Seed, f.Violation.Invariant, shrunk, first)
		}
		if first && len(f.Shrunk.Events) >= f.Events {
			t.Errorf("seed %d: shrunk to %d of %d events", f.Seed, len(f.Shrunk.Events), f.Events)
		}
	}
	var b strings.Builder
	if err := sum.WriteMarkdown(&b, 0); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"| schedules | 60 (seeds 0 to 59) |", "## Faults that fired", "## Outcomes and settlements"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	for inv := range seen {
		if !strings.Contains(md, "| "+inv+" | ") || !strings.Contains(md, ": "+inv+"\n") {
			t.Errorf("summary lacks invariant %s's row or its shrunk failure:\n%s", inv, md)
		}
	}
}
