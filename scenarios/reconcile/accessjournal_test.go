package reconcile

import (
	"testing"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestAccessJournalDuplicates is the negative control of the vendor's
// record read from nginx's log (a stack without WireMock's journal, the
// scale benchmark): a refkey nginx passed to the vendor twice is a
// duplicate, one nginx refused itself (the rate limit's 429) is not.
func TestAccessJournalDuplicates(t *testing.T) {
	const up = "172.18.0.3:8080"
	line := func(refkey string, status int, upstream string) vendormock.AccessEntry {
		e := vendormock.AccessEntry{Method: "POST", Path: DefaultSendPath, RefKey: refkey, Status: status, UpstreamStatus: upstream}
		if upstream != "" {
			e.UpstreamAddr = up
		}
		return e
	}
	base := []vendormock.AccessEntry{
		{Method: "POST", Path: "/v1/token", Status: 200, UpstreamAddr: up, UpstreamStatus: "200"},
		line("a", 200, "200"), line("b", 200, "200"), line("c", 200, "200"),
	}
	in := clean()
	in.Journal = vendormock.AccessJournal(base)
	if r := Reconcile(in); !r.OK || r.Duplicates != 0 {
		t.Fatalf("clean log: OK %v, duplicates %d, violations %+v; want OK", r.OK, r.Duplicates, r.Violations)
	}
	for _, tc := range []struct {
		name  string
		extra vendormock.AccessEntry
		dup   bool
	}{
		{"b passed to the vendor twice", line("b", 200, "200"), true},
		{"b again, nginx timed out waiting for the vendor", line("b", 504, "504"), true},
		{"b again, refused by nginx's rate limit", line("b", 429, ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := clean()
			in.Journal = vendormock.AccessJournal(append(append([]vendormock.AccessEntry{}, base...), tc.extra))
			r := Reconcile(in)
			if got := r.Duplicates == 1 && len(r.DuplicateRefKeys) == 1 && r.DuplicateRefKeys[0] == "b"; got != tc.dup {
				t.Errorf("duplicates %d %q; want a duplicate of b: %v", r.Duplicates, r.DuplicateRefKeys, tc.dup)
			}
		})
	}
}
