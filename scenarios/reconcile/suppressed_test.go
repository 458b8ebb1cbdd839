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
