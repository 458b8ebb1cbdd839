package reconcile

import (
	"slices"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestMultiplePlacesDetail: the evidence of a message found twice names
// each place as it is: an acked one by its outcome and record seq, a
// queued one by its outcome and queue.
func TestMultiplePlacesDetail(t *testing.T) {
	in := clean()
	in.Queues["n.unknown"] = []QueuedMessage{queued("n.unknown", "a", "m-a", outcome.Unknown, "timeout")}
	r := Reconcile(in)
	want := "published 1 time(s), found in 2 places: acked SENT (record seq 1), UNKNOWN in n.unknown"
	if len(r.Violations) != 1 || r.Violations[0].Rule != RuleMultiplePlaces || r.Violations[0].Detail != want {
		t.Fatalf("violations %+v; want one %s: %q", r.Violations, RuleMultiplePlaces, want)
	}
}

// TestRefKeyConflictPublishedOnce: REFKEY_CONFLICT excuses an INVALID
// dead-letter only when the run published the refkey more than once. A
// refkey published once and refused as a conflict (the ledger kept an
// earlier run's body) is a valid notification that never went out: an
// invalid-rule violation. The control publishes it twice.
func TestRefKeyConflictPublishedOnce(t *testing.T) {
	reason := worker.CodeRefKeyConflict + ": refkey already used for a different message body (ledger SENT)"
	in := Input{
		Published: []Published{pub(1, "a")},
		Names:     names,
		Queues:    map[string][]QueuedMessage{names.Dead: {queued(names.Dead, "a", "m-a", outcome.Invalid, reason)}},
		Records: []records.Record{{Seq: 1, RefKey: "a", Outcome: outcome.Invalid, Queue: names.Dead,
			Code: worker.CodeRefKeyConflict, Error: reason}},
	}
	r := Reconcile(in)
	if len(r.Violations) != 1 || r.Violations[0].Rule != RuleInvalid ||
		!strings.HasPrefix(r.Violations[0].Detail, "published valid, dead-lettered as INVALID: "+worker.CodeRefKeyConflict) {
		t.Errorf("published once: violations %+v; want one %s naming %s", r.Violations, RuleInvalid, worker.CodeRefKeyConflict)
	}

	second := pub(2, "a")
	second.MessageID = "m-a-reuse1"
	in.Published = append(in.Published, second)
	in.Queues[names.Dead][0].MessageID = second.MessageID
	if r := Reconcile(in); len(r.Violations) != 0 {
		t.Errorf("published twice (control): violations %+v; want none", r.Violations)
	}
}

// TestInvalidDeadLetterOutcome: an invalid message in the dead-letter
// queue carries the outcome INVALID, or none (DEAD: dead-lettered without
// an outcome header); another outcome there is an invalid-rule violation
// naming it.
func TestInvalidDeadLetterOutcome(t *testing.T) {
	for _, tc := range []struct {
		header outcome.Outcome
		want   string // the invalid-rule detail, "" for none
	}{
		{outcome.Invalid, ""},
		{"", ""},
		{outcome.NotSent, "invalid message dead-lettered with outcome NOT_SENT"},
	} {
		in := clean()
		in.Published = append(in.Published, invalidPub(4, "bad-1"))
		in.Records = append(in.Records, rec(4, "", outcome.Invalid, "n.dead"))
		in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "", "bad-1", tc.header, "body is not JSON")}
		r := Reconcile(in)
		var got []string
		for _, v := range r.Violations {
			if v.Rule == RuleInvalid {
				got = append(got, v.Detail)
			}
		}
		var want []string
		if tc.want != "" {
			want = []string{tc.want}
		}
		if !slices.Equal(got, want) {
			t.Errorf("outcome header %q: %s violations %q; want %q", tc.header, RuleInvalid, got, want)
		}
	}
}
