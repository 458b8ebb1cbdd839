package worker

import (
	"testing"
	"time"
)

// TestCallRunnerStuckCallDoesNotBlock: a call that never returns (a ledger
// given up on at its deadline) keeps its goroutine; the next call runs on
// another one at once, and an idle goroutine is reused by a later call.
func TestCallRunnerStuckCallDoesNotBlock(t *testing.T) {
	r := newCallRunner()
	stuck, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	r.run(func() { close(stuck); <-release })
	<-stuck
	for i := range 3 {
		done := make(chan struct{})
		r.run(func() { close(done) })
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d did not run while another call is stuck", i)
		}
	}
}

// TestCallRunnerNil: a nil runner still runs the call (on a new goroutine).
func TestCallRunnerNil(t *testing.T) {
	var r *callRunner
	done := make(chan struct{})
	r.run(func() { close(done) })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a nil runner did not run the call")
	}
}
