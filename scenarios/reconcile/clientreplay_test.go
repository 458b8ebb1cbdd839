package reconcile

import (
	"slices"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestClientReplay: a refkey that reached the vendor more times than the
// worker called its client is a client replay (the negative control plants
// one); the worker's own resend (two records) is a duplicate but no
// client replay; records that count no call measure nothing (no replay);
// without records the count is not measured.
func TestClientReplay(t *testing.T) {
	t.Run("planted: two requests, one call", func(t *testing.T) {
		in := clean()
		in.Ledger = nil // a contract worker's ledger is its own
		in.Journal = append(in.Journal, sent("b", 200))
		r := Reconcile(in)
		if !r.ClientReplayChecked || r.ClientReplays != 1 || !slices.Equal(r.ClientReplayRefKeys, []string{"b"}) {
			t.Fatalf("checked %v, replays %d %q; want checked, 1 [b]", r.ClientReplayChecked, r.ClientReplays, r.ClientReplayRefKeys)
		}
		if r.Duplicates != 1 || len(r.Violations) != 1 || r.Violations[0].Rule != RuleDuplicate {
			t.Errorf("duplicates %d, violations %+v; want the one duplicate", r.Duplicates, r.Violations)
		}
	})
	t.Run("the worker resent it: two calls, two requests", func(t *testing.T) {
		in := clean()
		in.Ledger = nil
		in.Journal = append(in.Journal, sent("b", 200))
		in.Records = append(in.Records, rec(4, "b", outcome.Sent, ""))
		in.Records[1].Outcome = outcome.Unknown
		r := Reconcile(in)
		if !r.ClientReplayChecked || r.ClientReplays != 0 || r.Duplicates != 1 {
			t.Errorf("checked %v, replays %d, duplicates %d; want checked, 0, 1", r.ClientReplayChecked, r.ClientReplays, r.Duplicates)
		}
	})
	t.Run("an UNKNOWN decided without a call is not a call", func(t *testing.T) {
		// A redelivery met the in-flight attempt's ATTEMPTING entry and
		// ended UNKNOWN without calling the client (no_call), while the
		// attempt itself was SENT: one call, and the vendor was reached
		// twice, so the client replayed it.
		in := clean()
		in.Ledger = nil
		in.Journal = append(in.Journal, sent("b", 200))
		unresolved := rec(4, "b", outcome.Unknown, "notifications.unknown")
		unresolved.Redelivered, unresolved.NoCall = true, true
		in.Records = append(in.Records, unresolved)
		r := Reconcile(in)
		if !r.ClientReplayChecked || r.ClientReplays != 1 || !slices.Equal(r.ClientReplayRefKeys, []string{"b"}) {
			t.Errorf("checked %v, replays %d %q; want checked, 1 [b] (the no_call UNKNOWN counted as a call)", r.ClientReplayChecked, r.ClientReplays, r.ClientReplayRefKeys)
		}
	})
	t.Run("records without a client call: no replay", func(t *testing.T) {
		// The refkey's only record is a DUPLICATE (a crash lost the records
		// of the attempts that sent): the records count no call, so they
		// cannot show fewer calls than requests (Report.ClientReplays:
		// at least one call).
		in := clean()
		in.Ledger = nil
		in.Journal = append(in.Journal, sent("b", 200))
		in.Records[1].Outcome, in.Records[1].Redelivered = outcome.Duplicate, true
		r := Reconcile(in)
		if !r.ClientReplayChecked || r.ClientReplays != 0 || r.Duplicates != 1 {
			t.Errorf("checked %v, replays %d %q, duplicates %d; want checked, 0, 1", r.ClientReplayChecked, r.ClientReplays, r.ClientReplayRefKeys, r.Duplicates)
		}
	})
	t.Run("no records: not measured", func(t *testing.T) {
		in := clean()
		in.Records, in.Ledger = nil, nil
		in.Journal = append(in.Journal, sent("b", 200))
		r := Reconcile(in)
		if r.ClientReplayChecked || r.ClientReplays != 0 {
			t.Errorf("checked %v, replays %d; want not checked", r.ClientReplayChecked, r.ClientReplays)
		}
	})
}
