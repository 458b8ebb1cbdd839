package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// How the replicas share the queue (Config.Active, ACTIVE;
// docs/deployment.md, Several active workers).
const (
	// ActiveSingle: single active consumer; one replica works, the others
	// stand by. Keeps the queue's order; any ledger.
	ActiveSingle = "single"
	// ActiveCompeting: every replica consumes the one queue (competing
	// consumers). No order between messages; needs the shared PostgreSQL
	// ledger, whose atomic Begin keeps "never twice".
	ActiveCompeting = "competing"
	// DefaultActive is ACTIVE's default.
	DefaultActive = ActiveSingle
)

// Values of Config.RatePace (RATE_PACE).
const (
	RatePaceShare = "share"
	RatePaceOff   = "off"
)

// sendInterval is the -send-interval of each replica: its share of the
// stack's rate limit, 0 without one or under RatePaceOff.
func (b *Bench) sendInterval() time.Duration {
	if b.cfg.RatePace == RatePaceOff {
		return 0
	}
	return RateShare(b.stack.RateLimit, b.cfg.ActiveWorkers())
}

// RateHeadroom is the part of the vendor's limit the workers together
// pace at: jitter between the workers' schedules then stays inside the
// vendor's burst instead of turning into 429s.
const RateHeadroom = 0.95

// ActiveWorkers is how many replicas consume at once: Workers under
// ActiveCompeting, else 1.
func (c Config) ActiveWorkers() int {
	if c.Active == ActiveCompeting {
		return max(c.Workers, 1)
	}
	return 1
}

// RateShare is the worker -send-interval that makes active workers,
// each paced at it, send RateHeadroom x limit sends/s together; 0 when
// limit <= 0 (no pacing).
func RateShare(limit, active int) time.Duration {
	if limit <= 0 {
		return 0
	}
	return time.Duration(float64(max(active, 1)) * float64(time.Second) / (RateHeadroom * float64(limit)))
}

// CheckRateLimit counts the POST sendPath lines of entries nginx passed
// and refused 429, and the accepted rate (RateLimitCheck.AcceptedPerS).
func CheckRateLimit(entries []vendormock.AccessEntry, sendPath string, limit, active int, share time.Duration) *results.RateLimitCheck {
	c := &results.RateLimitCheck{LimitSendsPerS: limit, ActiveWorkers: active}
	if share > 0 {
		c.WorkerShareSendsPerS = round3(float64(time.Second) / float64(share))
	}
	var times []time.Time
	for _, e := range entries {
		if e.Method != "POST" || e.Path != sendPath {
			continue
		}
		if e.Status == 429 {
			c.Refused++
			continue
		}
		c.Accepted++
		times = append(times, e.Time)
	}
	slices.SortFunc(times, time.Time.Compare)
	rate := func(from, to int) float64 {
		if span := times[to].Sub(times[from]).Seconds(); to > from && span > 0 {
			return round3(float64(to-from) / span)
		}
		return 0
	}
	if n := len(times); n > 1 {
		c.AcceptedPerS = rate(0, n-1)
		if n >= 10 {
			c.SteadyPerS = rate(n/10, n-1-n/10)
		}
	}
	if limit > 0 {
		c.OfLimit = round3(c.AcceptedPerS / float64(limit))
		c.SteadyOfLimit = round3(c.SteadyPerS / float64(limit))
	}
	if all := c.Accepted + c.Refused; all > 0 {
		c.RefusedShare = round3(float64(c.Refused) / float64(all))
	}
	return c
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// settled counts the records that end their message's stay here: every
// outcome but NOT_SENT, which comes back from the retry queue.
func settled(set *lab.RecordSet) int {
	n := 0
	for _, r := range set.Merged() {
		if r.Outcome != outcome.NotSent {
			n++
		}
	}
	return n
}

// waitSettled polls set until n records are settled (a 429'd message is
// recorded NOT_SENT, then again when its retry is sent), erroring after
// lim.stall without progress or lim.timeout.
func waitSettled(ctx context.Context, w io.Writer, set *lab.RecordSet, label string, n int, lim waitLimits) error {
	deadline, last, lastChange := time.Now().Add(lim.timeout), -1, time.Now()
	for {
		if err := set.Poll(); err != nil {
			return err
		}
		done := settled(set)
		if done >= n {
			return nil
		}
		if done != last {
			last, lastChange = done, time.Now()
		}
		switch {
		case time.Since(lastChange) > lim.stall:
			return fmt.Errorf("%w: no message settled for %s (%d of %d)", ErrWorkerTimeout, lim.stall, done, n)
		case time.Now().After(deadline):
			return fmt.Errorf("%w: %d of %d messages settled in %s", ErrWorkerTimeout, done, n, lim.timeout)
		}
		logf(w, "%s: %d of %d settled; waiting for the NOT_SENT ones' retries", label, done, n)
		if err := lab.Sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

// rateLimits widens lim for a run of n messages under a limit of limit
// sends/s: at least twice n/limit plus a minute.
func rateLimits(lim waitLimits, n, limit int) waitLimits {
	if limit > 0 {
		lim.timeout = max(lim.timeout, 2*time.Duration(n)*time.Second/time.Duration(limit)+time.Minute)
	}
	return lim
}
