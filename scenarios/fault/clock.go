package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
)

// waitClock sleeps until the worker's clock (client.clock_start, then
// real time) has surely passed hhmmss ("08:00:10", in clock_start's
// zone, on its day or the next): the clock started no later than
// s.started, so clock_start + time since s.started is a lower bound of
// it. Errors: ErrWaitTimeout when that is further than timeout.
func (s *scenarioRun) waitClock(ctx context.Context, hhmmss string, timeout time.Duration) error {
	c0, err := time.Parse(time.RFC3339, s.sc.Client.ClockStart)
	if err != nil {
		return fmt.Errorf("wait clock: client.clock_start: %w", err)
	}
	at, err := time.ParseInLocation("15:04:05", hhmmss, c0.Location())
	if err != nil {
		return fmt.Errorf("wait clock %q: %w", hhmmss, err)
	}
	target := time.Date(c0.Year(), c0.Month(), c0.Day(), at.Hour(), at.Minute(), at.Second(), 0, c0.Location())
	if target.Before(c0) {
		target = target.AddDate(0, 0, 1)
	}
	d := target.Sub(c0) - time.Since(s.started)
	if d > timeout {
		return fmt.Errorf("%w: the worker's clock reaches %s in %s, past the wait's timeout %s", ErrWaitTimeout, hhmmss, d.Round(time.Second), timeout)
	}
	s.r.logf("%s: waiting %.1f s until the worker's clock passes %s", s.sc.Name, max(d, 0).Seconds(), hhmmss)
	return lab.Sleep(ctx, max(d, 0))
}
