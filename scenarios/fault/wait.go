package fault

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// The wait step: records, outcomes and journal counts polled until they
// hold (waitClock, for the lab clock, is in clock.go).

func (s *scenarioRun) wait(ctx context.Context, w WaitStep) error {
	t := w.Timeout.D()
	if t == 0 {
		t = DefaultWaitTimeout
	}
	if w.Clock != "" {
		return s.waitClock(ctx, w.Clock, t)
	}
	return s.waitFor(ctx, waitCond{records: w.Records, outcomes: w.Outcomes, journal: w.Journal, settled: w.Settled}, t)
}

type waitCond struct {
	records  int
	outcomes map[outcome.Outcome]int
	journal  int
	settled  int // records but NOT_SENT at least
}

// String says what c waits for, in the lab's count wording:
// "records>=0, SENT>=200, journal>=0" (outcomes in the reconciler's order).
func (c waitCond) String() string {
	parts := []string{fmt.Sprintf("records>=%d", c.records)}
	if c.settled > 0 {
		parts = append(parts, fmt.Sprintf("settled>=%d", c.settled))
	}
	for _, o := range orderedOutcomes(c.outcomes) {
		parts = append(parts, fmt.Sprintf("%s>=%d", o, c.outcomes[o]))
	}
	return strings.Join(append(parts, fmt.Sprintf("journal>=%d", c.journal)), ", ")
}

// waitFor polls the records (and the journal when asked) until c holds.
func (s *scenarioRun) waitFor(ctx context.Context, c waitCond, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	state := ""
	for {
		if err := s.recs.Poll(); err != nil {
			return err
		}
		counts := s.recs.Counts()
		ok := s.recs.Len() >= c.records && s.recs.Len()-counts[outcome.NotSent] >= c.settled
		for k, n := range c.outcomes {
			ok = ok && counts[k] >= n
		}
		state = fmt.Sprintf("%d records %s", s.recs.Len(), formatCounts(counts))
		if ok && c.journal > 0 {
			n, err := s.journalCount(ctx)
			if err != nil {
				return err
			}
			ok = n >= c.journal
			state += fmt.Sprintf(", journal %d", n)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%w after %s: want %s; have %s", ErrWaitTimeout, timeout, c, state)
		case <-tick.C:
		}
	}
}
