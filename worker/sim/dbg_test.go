package sim

import (
	"os"
	"strconv"
	"testing"
)

func TestDebugSeed(t *testing.T) {
	s := os.Getenv("SIM_SEED")
	if s == "" {
		t.Skip("SIM_SEED not set")
	}
	seed, _ := strconv.ParseUint(s, 10, 64)
	sc := Generate(seed)
	r := RunSchedule(sc, Options{})
	if r.Violation == nil {
		t.Log(r.Trace.String())
		t.Log("no violation", r.Err)
		return
	}
	sh, tr := Shrink(sc, Options{}, r.Violation.Invariant)
	t.Log(Failure{Seed: seed, Violation: *r.Violation, Events: len(sc.Events), Shrunk: sh, Trace: tr})
}
