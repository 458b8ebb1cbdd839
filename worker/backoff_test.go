package worker

import (
	"context"
	"testing"
	"time"
)

// TestNewBackoff: the delay doubles from the minimum up to the maximum,
// each draw within ±50% of its interval, and Reset starts over.
func TestNewBackoff(t *testing.T) {
	b := newBackoff(100*time.Millisecond, time.Second)
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
