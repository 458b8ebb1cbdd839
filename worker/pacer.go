package worker

import "time"

// pacer spaces the deliveries a worker takes at least Interval apart on a
// steady schedule (Config.SendInterval): a take that comes late by less
// than one interval keeps the schedule, so the mean rate is exactly
// 1/Interval while the worker keeps up; after a longer pause the schedule
// restarts from the take, so an idle worker never bursts to catch up
// (docs/deployment.md, Vendor rate limit). Interval <= 0 never waits. Not
// safe for concurrent use: serve's goroutine alone takes deliveries.
type pacer struct {
	interval time.Duration
	next     time.Time // earliest next take; zero = any time
}

// wait is how long from now until the next take is allowed; 0 = now.
func (p *pacer) wait(now time.Time) time.Duration {
	if p.interval <= 0 || p.next.IsZero() || !now.Before(p.next) {
		return 0
	}
	return p.next.Sub(now)
}

// took records a take at now.
func (p *pacer) took(now time.Time) {
	if p.interval <= 0 {
		return
	}
	if p.next.IsZero() || now.Sub(p.next) >= p.interval {
		p.next = now
	}
	p.next = p.next.Add(p.interval)
}
