package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// A bench run is judged by its reconciler verdict: a lost or duplicated
// message, or no verdict at all, makes Run fail (issue 14: the bench
// printed a WARNING and exited 0), naming the run and its evidence file.
func TestDeliveryFailures(t *testing.T) {
	ok := &reconcile.Report{OK: true}
	tests := []struct {
		name string
		rec  *reconcile.Report
		want string // "" = no failure
	}{
		{"reconciled clean", ok, ""},
		{"not reconciled", nil, "not reconciled"},
		{"one duplicate", &reconcile.Report{OK: false, Duplicates: 1, DuplicateRefKeys: []string{"rk-7"}}, "1 duplicated (rk-7)"},
		{"lost, OK flag wrong", &reconcile.Report{OK: true, Lost: 2, LostIDs: []string{"a", "b"}}, "2 lost (a, b)"},
		{"broken invariant only", &reconcile.Report{OK: false, Violations: []reconcile.Violation{{Rule: "route", Detail: "SENT in retry"}}}, "route SENT in retry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := results.Result{Mode: "pooled", RTTMS: 3, Reconcile: tt.rec}
			lines := DeliveryFailures("results", []results.Result{{Mode: "per-request", RTTMS: 3, Reconcile: ok}, r})
			var buf bytes.Buffer
			err := DeliveryError(&buf, lines)
			if tt.want == "" {
				if err != nil || len(lines) != 0 {
					t.Fatalf("got %v (%q), want no failure", err, lines)
				}
				return
			}
			if !errors.Is(err, ErrDelivery) || len(lines) != 1 {
				t.Fatalf("got %v, %q; want ErrDelivery and one line", err, lines)
			}
			for _, want := range []string{tt.want, "pooled at 3 ms", "results/bench-pooled-3ms.json"} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("line %q does not name %q", lines[0], want)
				}
			}
			if last := strings.TrimSpace(buf.String()); !strings.HasSuffix(last, strings.TrimSpace(lines[0])) || !strings.Contains(last, "FAIL") {
				t.Errorf("the run's last lines %q do not end with the failure", last)
			}
		})
	}
}
