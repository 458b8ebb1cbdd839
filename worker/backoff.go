package worker

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// jitterFactor is the backoff's randomization: each delay is drawn within
// ±50% of its interval.
const jitterFactor = 0.5

// jitterBackoff is the worker's one backoff policy (newBackoff): the
// interval of a backoff.ExponentialBackOff without randomization, and the
// randomization drawn here from rnd, with the formula of
// backoff.ExponentialBackOff, so the delays are those of an
// ExponentialBackOff with RandomizationFactor 0.5 whose randomness the
// caller chooses. Not safe for concurrent use.
type jitterBackoff struct {
	exp backoff.ExponentialBackOff
	rnd func() float64 // uniform in [0, 1)
}

// newBackoff returns the one backoff policy of the worker, used both for
// broker reconnects and for the pause after consecutive requeued
// deliveries: the interval starts at minDelay and doubles up to maxDelay;
// each delay is drawn at random within ±50% of the interval, so replicas
// that lost the broker together do not all come back at the same instant.
// Delays are thus in [minDelay/2, 1.5*maxDelay]. It never gives up: Reset
// starts over after a session that lived long. rnd is its randomness,
// uniform in [0, 1); nil is rand.Float64 (the simulator passes a seeded
// one).
func newBackoff(minDelay, maxDelay time.Duration, rnd func() float64) *jitterBackoff {
	if rnd == nil {
		rnd = rand.Float64
	}
	return &jitterBackoff{rnd: rnd, exp: backoff.ExponentialBackOff{
		InitialInterval: minDelay,
		Multiplier:      2,
		MaxInterval:     maxDelay,
	}}
}

// NextBackOff returns the next delay: the interval ±50%, at random.
func (b *jitterBackoff) NextBackOff() time.Duration {
	interval := float64(b.exp.NextBackOff())
	lo, hi := interval*(1-jitterFactor), interval*(1+jitterFactor)
	// As backoff.ExponentialBackOff draws it: the +1 makes hi reachable.
	return time.Duration(lo + b.rnd()*(hi-lo+1))
}

// Reset starts over at the first interval.
func (b *jitterBackoff) Reset() { b.exp.Reset() }

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
