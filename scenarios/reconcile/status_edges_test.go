package reconcile

import (
	"slices"
	"testing"
)

// TestStatusClassEdges: the journal rules count a request that got a 4xx
// (400-499) as not having reached the vendor and a 2xx (200-299) as a
// success, edges included: a 400 before a resend is no duplicate, a 500
// is (like the 502 of TestReconcile), and a 300 is no proof of SENT.
func TestStatusClassEdges(t *testing.T) {
	for _, tc := range []struct {
		status       int
		is4xx, is2xx bool
	}{
		{199, false, false}, {200, false, true}, {299, false, true}, {300, false, false},
		{399, false, false}, {400, true, false}, {499, true, false}, {500, false, false},
	} {
		if got4, got2 := is4xx(tc.status), is2xx(tc.status); got4 != tc.is4xx || got2 != tc.is2xx {
			t.Errorf("status %d: is4xx %v, is2xx %v; want %v, %v", tc.status, got4, got2, tc.is4xx, tc.is2xx)
		}
	}

	t.Run("a 400 then a 200 is not a duplicate", func(t *testing.T) {
		in := clean()
		in.Journal = append([]JournalEntry{sent("a", 400)}, in.Journal...)
		r := Reconcile(in)
		if !r.OK || r.Duplicates != 0 {
			t.Errorf("OK %v, duplicates %d %q, violations %+v; want OK and none", r.OK, r.Duplicates, r.DuplicateRefKeys, r.Violations)
		}
	})
	t.Run("a 500 then a 200 is a duplicate", func(t *testing.T) {
		in := clean()
		in.Journal = append([]JournalEntry{sent("a", 500)}, in.Journal...)
		r := Reconcile(in)
		if r.Duplicates != 1 || !slices.Equal(r.DuplicateRefKeys, []string{"a"}) {
			t.Errorf("duplicates %d %q; want 1 [a] (a 500 may have reached the vendor)", r.Duplicates, r.DuplicateRefKeys)
		}
	})
	t.Run("SENT answered only with a 300", func(t *testing.T) {
		in := clean()
		in.Journal[1].Status = 300 // a's only send
		r := Reconcile(in)
		if len(r.Violations) != 1 || r.Violations[0].Rule != RuleSentNotInJournal || r.Violations[0].RefKey != "a" {
			t.Errorf("violations %+v; want one %s for a", r.Violations, RuleSentNotInJournal)
		}
	})
}
