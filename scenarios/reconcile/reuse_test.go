package reconcile

import (
	"testing"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestReconcileCountsMessagesOfAReusedRefKey: a refkey published twice
// with two bodies is two messages. The second, dead-lettered INVALID with
// REFKEY_CONFLICT, is a place of its own next to the first one's SENT;
// the same dead-letter without the conflict reason, or a refkey published
// once, is still a violation.
func TestReconcileCountsMessagesOfAReusedRefKey(t *testing.T) {
	reason := worker.CodeRefKeyConflict + ": refkey already used for a different message body (ledger SENT)"
	base := func() Input {
		second := pub(2, "a")
		second.MessageID = "m-a-reuse1"
		return Input{
			Published: []Published{pub(1, "a"), second},
			Names:     names,
			Queues:    map[string][]QueuedMessage{names.Dead: {queued(names.Dead, "a", "m-a-reuse1", outcome.Invalid, reason)}},
			Records: []records.Record{rec(1, "a", outcome.Sent, ""),
				{Seq: 2, RefKey: "a", Outcome: outcome.Invalid, Queue: names.Dead, Code: worker.CodeRefKeyConflict, Error: reason}},
			Ledger:  []ledger.Entry{entry("a", outcome.Sent, 1)},
			Journal: []JournalEntry{sent("a", 200)},
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Input)
		wantOK bool
	}{
		{"conflict dead-lettered", func(*Input) {}, true},
		{"no conflict reason", func(in *Input) {
			in.Queues[names.Dead][0] = queued(names.Dead, "a", "m-a-reuse1", outcome.Invalid, "bad body")
		}, false},
		{"published once", func(in *Input) {
			in.Published = in.Published[:1]
			in.Queues[names.Dead][0].MessageID = "m-a"
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.mutate(&in)
			r := Reconcile(in)
			if r.OK != tc.wantOK {
				t.Fatalf("OK = %v, want %v; violations %+v", r.OK, tc.wantOK, r.Violations)
			}
			if tc.wantOK && (r.Published != 2 || r.RefKeys != 1 || r.ByOutcome[outcome.Sent] != 1 || r.ByOutcome[outcome.Invalid] != 1 || r.Duplicates != 0) {
				t.Errorf("published %d, refkeys %d, by outcome %v, duplicates %d; want 2 messages of 1 refkey: SENT 1, INVALID 1, no duplicate",
					r.Published, r.RefKeys, r.ByOutcome, r.Duplicates)
			}
		})
	}
}
