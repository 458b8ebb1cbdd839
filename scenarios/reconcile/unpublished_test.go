package reconcile

import "testing"

// TestUnpublishedSendDetail: a send that reached the vendor for a refkey
// nobody published says so; a send whose body had no refkey says that
// instead (the evidence differs: a producer bug vs a worker that sent a
// body without its refkey).
func TestUnpublishedSendDetail(t *testing.T) {
	in := clean()
	in.Journal = append(in.Journal, sent("zzz", 200), sent("", 200))
	r := Reconcile(in)
	want := map[string]string{
		"zzz": "reached the vendor 1 time(s) (statuses 200), published by nobody",
		"":    "1 send(s) without a refkey reached the vendor (statuses 200)",
	}
	seen := 0
	for _, v := range r.Violations {
		if v.Rule != RuleUnpublished {
			continue
		}
		seen++
		if v.Detail != want[v.RefKey] {
			t.Errorf("refkey %q: detail %q, want %q", v.RefKey, v.Detail, want[v.RefKey])
		}
	}
	if seen != 2 {
		t.Errorf("%d unpublished violations, want 2: %+v", seen, r.Violations)
	}
}
