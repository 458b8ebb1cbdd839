package reconcile

import (
	"slices"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

func rulesOf(r Report) []string {
	var rules []string
	for _, v := range r.Violations {
		rules = append(rules, v.Rule)
	}
	slices.Sort(rules)
	return rules
}

// TestInvalidRecordBelongsOnlyToAnInvalidPublication: a worker record
// INVALID counts for a refkey only when that refkey was published invalid
// (the refkey of an invalid body is the worker's best guess, reconcile.go).
//   - published invalid with refkey "bad", its record INVALID acked instead
//     of dead-lettered: the report names an invalid message acked (and the
//     wrong route), not a lost one;
//   - published valid "c", lost, while another message's invalid body
//     guessed "c": c's lost evidence says no worker record, it does not
//     quote the other message's record.
func TestInvalidRecordBelongsOnlyToAnInvalidPublication(t *testing.T) {
	t.Run("invalid with a refkey, acked", func(t *testing.T) {
		in := clean()
		in.Published = append(in.Published, Published{Seq: 4, RefKey: "bad", MessageID: "m-bad", PublishedAt: t0})
		in.Records = append(in.Records, rec(4, "bad", outcome.Invalid, ""))
		r := Reconcile(in)
		if got, want := rulesOf(r), []string{RuleInvalid, RuleRoute}; !slices.Equal(got, want) || r.Lost != 0 {
			t.Fatalf("rules %q, lost %d; want %q and 0 lost\nviolations: %+v", got, r.Lost, want, r.Violations)
		}
		for _, v := range r.Violations {
			if v.Rule == RuleInvalid && !strings.Contains(v.Detail, "acked as INVALID") {
				t.Errorf("invalid detail %q; want it to say acked as INVALID", v.Detail)
			}
		}
	})
	t.Run("valid refkey guessed from another body", func(t *testing.T) {
		in := without(clean(), "c")
		in.Published = append(in.Published, invalidPub(4, "m-x"))
		in.Records = append(in.Records, rec(4, "c", outcome.Invalid, names.Dead))
		in.Queues[names.Dead] = []QueuedMessage{queued(names.Dead, "", "m-x", outcome.Invalid, "code 1001")}
		r := Reconcile(in)
		if !slices.Equal(r.LostIDs, []string{"c"}) {
			t.Fatalf("lost %q; want [c]\nviolations: %+v", r.LostIDs, r.Violations)
		}
		for _, v := range r.Violations {
			if v.Rule == RuleLost && !strings.Contains(v.Detail, "no worker record") {
				t.Errorf("lost c: detail %q; want no worker record (the INVALID record is m-x's)", v.Detail)
			}
		}
	})
}

// TestInvalidPairedByCountWithoutNames: without queue names (roles
// unknown) a dead-lettered INVALID copy whose message id the worker did
// not keep is paired with the unplaced invalid publication, so nothing is
// lost or unpublished; a REJECTED copy nobody published is not paired with
// it, it is reported unpublished.
func TestInvalidPairedByCountWithoutNames(t *testing.T) {
	base := func() Input {
		return Input{
			Published: []Published{pub(1, "a"), invalidPub(2, "m-x")},
			Queues: map[string][]QueuedMessage{
				"n.dead": {queued("n.dead", "", "", outcome.Invalid, "code 1001")},
			},
			Records: []records.Record{rec(1, "a", outcome.Sent, ""), rec(2, "", outcome.Invalid, "n.dead")},
		}
	}
	t.Run("INVALID copy paired", func(t *testing.T) {
		r := Reconcile(base())
		if !r.OK || r.Lost != 0 || r.ByOutcome[outcome.Invalid] != 1 {
			t.Errorf("OK %v, lost %q, by outcome %v; want OK, 0 lost, INVALID 1\nviolations: %+v",
				r.OK, r.LostIDs, r.ByOutcome, r.Violations)
		}
	})
	t.Run("REJECTED orphan not paired", func(t *testing.T) {
		in := base()
		in.Queues["n.failed"] = []QueuedMessage{queued("n.failed", "", "", outcome.Rejected, "code 3001")}
		r := Reconcile(in)
		if got, want := rulesOf(r), []string{RuleUnpublished}; !slices.Equal(got, want) || r.ByOutcome[outcome.Invalid] != 1 {
			t.Fatalf("rules %q, by outcome %v; want %q and INVALID 1\nviolations: %+v", got, r.ByOutcome, want, r.Violations)
		}
		if d := r.Violations[0].Detail; !strings.Contains(d, "REJECTED in n.failed") {
			t.Errorf("unpublished detail %q; want the REJECTED copy in n.failed", d)
		}
	})
}
