package fault

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestEvaluateDeadLetteredUnsent: a message the broker dead-lettered
// before any send (a quorum queue's delivery limit burned while the ledger
// did not answer) is judged lost by the whole verdict: the reconciler's
// lost count, the observed LOST outcome and expect.lost.
func TestEvaluateDeadLetteredUnsent(t *testing.T) {
	names := queues.NamesFor("n")
	in := reconcile.Input{
		Published: []reconcile.Published{
			{Seq: 1, RefKey: "k1", MessageID: "m1", Valid: true},
			{Seq: 2, RefKey: "k2", MessageID: "m2", Valid: true},
		},
		Names:   names,
		Records: []records.Record{{Seq: 1, RefKey: "k1", Outcome: outcome.Sent}},
		Queues: map[string][]reconcile.QueuedMessage{names.Dead: {{
			Queue: names.Dead, RefKey: "k2", MessageID: "m2",
			Headers: map[string]any{"x-death": []any{amqp.Table{"reason": "delivery_limit", "queue": "n", "count": int64(1)}}},
		}}},
		Journal: []reconcile.JournalEntry{{Method: "POST", Path: reconcile.DefaultSendPath, RefKey: "k1", Status: 200}},
	}
	recs := in.Records
	journal := []vendormock.JournalEntry{{Method: "POST", Path: reconcile.DefaultSendPath, RefKey: "k1", Status: 200}}
	for _, tt := range []struct {
		name     string
		expect   string
		wantPass bool
		wantFail string
	}{
		{"nothing may be lost", "  outcomes: {SENT: 1}\n", false, "1 messages lost (1 dead-lettered unsent: k2), want 0"},
		{"the loss expected", "  outcomes: {SENT: 1, LOST: 1}\n  lost: 1\n", true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := mustParse(t, strings.Replace(minimal, "  outcomes: {SENT: 1}\n", tt.expect, 1))
			rep := reconcile.Reconcile(in)
			v := evaluate(sc, &rep, recs, journal, nil, nil)
			if v.Lost != 1 || v.DeadLetteredUnsent != 1 || v.Observed[outcome.Lost] != 1 || v.Observed[outcome.Dead] != 0 {
				t.Errorf("lost %d, dead-lettered unsent %d, observed %v; want 1, 1 and LOST 1, no DEAD", v.Lost, v.DeadLetteredUnsent, v.Observed)
			}
			if v.Pass != tt.wantPass {
				t.Errorf("Pass = %v; want %v (failures %q)", v.Pass, tt.wantPass, v.Failures)
			}
			if tt.wantFail != "" && !strings.Contains(strings.Join(v.Failures, "|"), tt.wantFail) {
				t.Errorf("failures %q; want one containing %q", v.Failures, tt.wantFail)
			}
			if tt.wantPass == false && !strings.Contains(v.Line(), "1 dead-lettered unsent") {
				t.Errorf("Line() = %q; want it to name the dead-lettered unsent", v.Line())
			}
		})
	}
}
