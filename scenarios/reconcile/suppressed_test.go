package reconcile

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestLostDetailCountsSuppressedDuplicates: a lost refkey whose only
// records are DUPLICATE acks (no queue: the ledger said it was done) is
// reported with how many such duplicates were suppressed, the evidence an
// operator needs ("1 suppressed duplicate(s)").
func TestLostDetailCountsSuppressedDuplicates(t *testing.T) {
	in := without(clean(), "c")
	in.Records = append(in.Records, rec(3, "c", outcome.Duplicate, ""))
	r := Reconcile(in)
	for _, v := range r.Violations {
		if v.RefKey == "c" && v.Rule == RuleLost {
			if !strings.Contains(v.Detail, "1 suppressed duplicate(s)") {
				t.Errorf("lost c: detail %q; want it to say 1 suppressed duplicate(s)", v.Detail)
			}
			return
		}
	}
	t.Fatalf("c not reported lost: %+v", r.Violations)
}

// TestLostWithOnlyDuplicateRecordsIsNotFoundNowhere: a lost refkey whose
// only records are suppressed duplicates was found (as those records): its
// detail says so instead of "found nowhere" (issue 30: the page printed
// "lost, found nowhere" beside its own evidence of a DUPLICATE record).
// A refkey with no record at all still reads "found nowhere" (the control).
func TestLostWithOnlyDuplicateRecordsIsNotFoundNowhere(t *testing.T) {
	in := without(without(clean(), "c"), "b")
	in.Records = append(in.Records, rec(3, "c", outcome.Duplicate, ""))
	r := Reconcile(in)
	got := map[string]string{}
	for _, v := range r.Violations {
		if v.Rule == RuleLost {
			got[v.RefKey] = v.Detail
		}
	}
	if d := got["c"]; strings.Contains(d, "found nowhere") || !strings.Contains(d, "only as suppressed duplicate(s)") {
		t.Errorf("lost c (one DUPLICATE record): %q; want it found only as a suppressed duplicate, not nowhere", d)
	}
	if d := got["b"]; !strings.Contains(d, "found nowhere") {
		t.Errorf("lost b (no record): %q; want found nowhere", d)
	}
}
