package fault

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// ledgerRow is what the ledger holds for one refkey: its state, or
// present false when it has no row.
type ledgerRow struct {
	present bool
	state   outcome.Outcome
}

// acceptedStates are the ledger states that agree with a send the vendor
// answered 2xx: it was sent (SENT), may have been (UNKNOWN, or ATTEMPTING:
// an attempt whose outcome was never recorded, for example a frozen
// worker whose copy could not be re-published; both are never sent again
// automatically, and an operator checks with the vendor first), or the
// vendor refused it in a 2xx body (REJECTED). NOT_SENT would be sent again.
var acceptedStates = []outcome.Outcome{outcome.Sent, outcome.Unknown, ledger.Attempting, outcome.Rejected}

// ledgerDisagreements compares the ledger with the journal for refkeys
// (expect.ledger_agrees): a refkey the vendor received without a ledger
// row was sent without its Begin; one the vendor answered 2xx must be in
// acceptedStates (NOT_SENT would be sent again); one the vendor never
// received must not be SENT. It returns one
// line per disagreement, in refkeys' order.
func ledgerDisagreements(refkeys []string, journal []vendormock.JournalEntry, rows map[string]ledgerRow) []string {
	received, accepted := map[string]int{}, map[string]bool{}
	for _, j := range journal {
		received[j.RefKey]++
		if j.Status >= 200 && j.Status < 300 {
			accepted[j.RefKey] = true
		}
	}
	var out []string
	for _, k := range refkeys {
		row := rows[k]
		switch {
		case received[k] > 0 && !row.present:
			out = append(out, fmt.Sprintf("%s: the vendor received it %d time(s), the ledger has no row (sent without its Begin)", k, received[k]))
		case accepted[k] && !slices.Contains(acceptedStates, row.state):
			out = append(out, fmt.Sprintf("%s: the vendor accepted it, the ledger says %s", k, row.state))
		case received[k] == 0 && row.present && row.state == outcome.Sent:
			out = append(out, fmt.Sprintf("%s: the ledger says SENT, the vendor never received it", k))
		}
	}
	return out
}

// checkLedger reads the scenario's refkeys from the PostgreSQL ledger
// (from the host) and records expect.ledger_agrees as a Check (Got: the
// number of disagreements, each logged).
func (s *scenarioRun) checkLedger(ctx context.Context, journal []vendormock.JournalEntry) error {
	pg, err := s.r.Stack.StartPostgres(ctx, "") // the one already running
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	store, err := ledger.OpenPostgres(ctx, pg.URLHost)
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	defer store.Close()
	var keys []string
	rows := map[string]ledgerRow{}
	for _, p := range s.pub.pub.Published() {
		if p.RefKey == "" || !p.Valid || slices.Contains(keys, p.RefKey) {
			continue
		}
		keys = append(keys, p.RefKey)
		e, ok, err := store.Get(ctx, p.RefKey)
		if err != nil {
			return fmt.Errorf("ledger check: %w", err)
		}
		rows[p.RefKey] = ledgerRow{present: ok, state: e.State}
	}
	bad := ledgerDisagreements(keys, journal, rows)
	for _, b := range bad {
		s.r.logf("%s: ledger vs journal: %s", s.sc.Name, b)
	}
	c := Check{Step: len(s.sc.Steps), What: "refkeys where the ledger disagrees with the journal (of " + strconv.Itoa(len(keys)) + ")", Want: "0", Got: len(bad), OK: len(bad) == 0}
	s.checks = append(s.checks, c)
	s.r.logf("%s: ledger agrees with the journal on %d of %d refkeys %s", s.sc.Name, len(keys)-len(bad), len(keys), okWord(c.OK))
	return nil
}
