package worker

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestNewBackoff: the delay doubles from the minimum up to the maximum,
// each draw within ±50% of its interval, and Reset starts over.
func TestNewBackoff(t *testing.T) {
	b := newBackoff(100*time.Millisecond, time.Second, nil)
	for i, interval := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		interval *= time.Millisecond
		d := b.NextBackOff()
		if lo, hi := interval/2, interval*3/2+1; d < lo || d > hi {
			t.Errorf("step %d: delay %v, want in [%v, %v]", i, d, lo, hi)
		}
	}
	b.Reset()
	if d := b.NextBackOff(); d > 150*time.Millisecond+1 {
		t.Errorf("after Reset: %v, want <= 150ms", d)
	}
}

// TestBackoffRandomnessIsTheCallers: the delays are drawn from the
// source newBackoff is given: one at 0 draws the low end of each interval,
// one just below 1 the high end, and two sources seeded alike draw the
// same delays (the simulator's determinism), another seed others.
func TestBackoffRandomnessIsTheCallers(t *testing.T) {
	intervals := []time.Duration{100, 200, 400, 800, 1000, 1000}
	low := newBackoff(100*time.Millisecond, time.Second, func() float64 { return 0 })
	high := newBackoff(100*time.Millisecond, time.Second, func() float64 { return 1 - 1e-12 })
	for i, iv := range intervals {
		iv *= time.Millisecond
		if d := low.NextBackOff(); d != iv/2 {
			t.Errorf("step %d at 0: %v, want %v", i, d, iv/2)
		}
		if d, hi := high.NextBackOff(), iv*3/2; d < hi || d > hi+1 {
			t.Errorf("step %d near 1: %v, want %v", i, d, hi)
		}
	}
	draws := func(seed uint64) []time.Duration {
		b := newBackoff(100*time.Millisecond, time.Second, rand.New(rand.NewPCG(seed, 1)).Float64)
		var out []time.Duration
		for range 8 {
			out = append(out, b.NextBackOff())
		}
		return out
	}
	if a, b := draws(7), draws(7); !slices.Equal(a, b) {
		t.Errorf("one seed, two sequences: %v / %v", a, b)
	}
	if a, b := draws(7), draws(8); slices.Equal(a, b) {
		t.Errorf("two seeds, one sequence: %v", a)
	}
}

// TestSleep: sleep ends early on ctx or stop and says so.
func TestSleep(t *testing.T) {
	t.Run("elapsed", func(t *testing.T) {
		if !sleep(context.Background(), time.Millisecond, nil) {
			t.Error("sleep of 1ms did not report elapsed")
		}
	})
	t.Run("ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		if sleep(ctx, time.Minute, nil) || time.Since(start) > time.Second {
			t.Error("sleep did not end on a cancelled ctx")
		}
	})
	t.Run("stop", func(t *testing.T) {
		stop := make(chan struct{})
		close(stop)
		if sleep(context.Background(), time.Minute, stop) {
			t.Error("sleep did not end on a closed stop channel")
		}
	})
}
