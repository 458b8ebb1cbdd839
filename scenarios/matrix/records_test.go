package matrix

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestCellFromResultUnreconciled: a worker cell whose bench run has no
// reconciler verdict keeps Lost and Duplicates at -1 (not measured), and
// the cell's check fails naming it; it is never read as 0 lost, 0
// duplicates (issue 14's surviving mutant: an unmeasured run printed PASS).
// A reconciled run's figures are copied as they are.
func TestCellFromResultUnreconciled(t *testing.T) {
	for _, tc := range []struct {
		name              string
		rec               *reconcile.Report
		wantLost, wantDup int
		wantCheck         string
	}{
		{"not reconciled", nil, -1, -1, "not reconciled"},
		{"reconciled clean", &reconcile.Report{}, 0, 0, "ok"},
		{"reconciled with a loss and a duplicate", &reconcile.Report{Lost: 2, Duplicates: 3}, 2, 3, "2 lost, 3 duplicates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := results.MatrixCell{Driver: results.DriverWorker, Count: 10, Warmup: 2,
				Outcomes: map[outcome.Outcome]int{outcome.Sent: 12}}
			cellFromResult(&c, results.Result{TCPConnections: 1, Reconcile: tc.rec, WorkerState: "disk"})
			if c.Lost != tc.wantLost || c.Duplicates != tc.wantDup {
				t.Errorf("lost %d duplicates %d; want %d and %d", c.Lost, c.Duplicates, tc.wantLost, tc.wantDup)
			}
			if got := c.Check(); !strings.Contains(got, tc.wantCheck) || (tc.wantCheck != "ok" && got == "ok") {
				t.Errorf("Check() = %q; want it to contain %q", got, tc.wantCheck)
			}
			if c.Connections != 1 {
				t.Errorf("connections %d; want 1 (the run's TCP connections)", c.Connections)
			}
			if c.WorkerState != "disk" {
				t.Errorf("worker_state %q; want the run's, disk", c.WorkerState)
			}
		})
	}
}
