package sim

import (
	"os"
	"strconv"
	"testing"
)

// TestDebugSeed replays one seed and prints its trace, shrunk when it
// fails: SIM_SEED=291 go test -run TestDebugSeed -v ./worker/sim
// (SIM_LEDGER=bbolt runs it on the bbolt ledger). Skipped without
// SIM_SEED.
func TestDebugSeed(t *testing.T) {
	v := os.Getenv("SIM_SEED")
	if v == "" {
		t.Skip("SIM_SEED not set")
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("SIM_SEED=%q: %v", v, err)
	}
	opt := Options{Ledger: os.Getenv("SIM_LEDGER")}
	s := Generate(seed)
	r := RunSchedule(s, opt)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Violation == nil {
		t.Logf("seed %d: no violation, trace hash %s\n%s", seed, r.Hash(), r.Trace.String())
		return
	}
	sh, tr := Shrink(s, opt, r.Violation.Invariant)
	t.Log(Failure{Seed: seed, Violation: *r.Violation, Events: len(s.Events), Shrunk: sh, Trace: tr})
}
