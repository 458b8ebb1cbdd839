package worker

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// newBackoff returns the one backoff policy of the worker, used both for
// broker reconnects and for the pause after consecutive requeued
// deliveries: the interval starts at minDelay and doubles up to maxDelay;
// each delay is drawn at random within ±50% of the interval
// (backoff.ExponentialBackOff, RandomizationFactor 0.5), so replicas that
// lost the broker together do not all come back at the same instant. Delays
// are thus in [minDelay/2, 1.5*maxDelay]. It never gives up: Reset starts
// over after a session that lived long.
func newBackoff(minDelay, maxDelay time.Duration) *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{
		InitialInterval:     minDelay,
		RandomizationFactor: 0.5,
		Multiplier:          2,
		MaxInterval:         maxDelay,
	}
}

// sleep waits d, or until ctx is done or stop (may be nil) is closed. It
// reports whether the whole delay elapsed.
func sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}
