package reconcile

import (
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestReconcileSettledByReport: an UNKNOWN whose ledger entry a delivery
// report settled SENT afterwards (its unknown-queue copy acked away) ends
// SENT, not lost. Negative controls: the same without a resolution is
// lost, and a resolution does not hide a message that is still queued.
func TestReconcileSettledByReport(t *testing.T) {
	base := func() Input {
		e := entry("a", outcome.Sent, 1)
		e.Resolution = &ledger.Resolution{At: t0, As: outcome.Sent, Source: ledger.SourceReport}
		return Input{
			Published: []Published{pub(1, "a")},
			Names:     names,
			Queues:    map[string][]QueuedMessage{},
			Records:   []records.Record{rec(1, "a", outcome.Unknown, names.Unknown)},
			Ledger:    []ledger.Entry{e},
			Journal:   []JournalEntry{sent("a", 200)},
		}
	}
	t.Run("settled", func(t *testing.T) {
		r := Reconcile(base())
		if !r.OK || r.ByOutcome[outcome.Sent] != 1 || r.Lost != 0 || r.ByPlace[PlaceSettled] != 1 {
			t.Errorf("OK %v, ByOutcome %v, ByPlace %v, lost %d, violations %v; want OK, SENT 1 settled, 0 lost",
				r.OK, r.ByOutcome, r.ByPlace, r.Lost, r.Violations)
		}
	})
	t.Run("no resolution", func(t *testing.T) {
		in := base()
		in.Ledger[0].Resolution = nil
		if r := Reconcile(in); r.OK || r.Lost != 1 {
			t.Errorf("OK %v, lost %d; want not OK, 1 lost", r.OK, r.Lost)
		}
	})
	t.Run("still queued", func(t *testing.T) {
		in := base()
		in.Queues[names.Unknown] = []QueuedMessage{queued(names.Unknown, "a", "m-a", outcome.Unknown, "timeout")}
		if r := Reconcile(in); r.ByPlace[PlaceSettled] != 0 || r.ByOutcome[outcome.Unknown] != 1 {
			t.Errorf("ByPlace %v, ByOutcome %v; want the queued copy, no settled place", r.ByPlace, r.ByOutcome)
		}
	})
}
