package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// finishCases hold every store to Finish's condition: an outcome lands only
// on the attempt it belongs to (ledger.CheckAttempt), so a late writer (a
// redelivery's UNKNOWN, a frozen replica's outcome) never overwrites what
// the live attempt or an operator recorded.
func finishCases() []Case {
	return []Case{
		{"Finish of an attempt that already has an outcome writes nothing", func(t *testing.T, s ledger.Store) {
			for _, st := range []outcome.Outcome{outcome.NotSent, outcome.Sent} {
				k := key + "-" + string(st)
				a := begin(t, s, k, HashA, T0)
				finish(t, s, k, HashA, a, st, T0.Add(time.Second))
				expectStale(t, s, k, a, outcome.Unknown, st, 1)
				expectGet(t, s, k, ledger.Entry{RefKey: k, State: st, Attempts: 1, Detail: "detail", BodyHash: HashA,
					CreatedAt: T0, UpdatedAt: T0.Add(time.Second)})
			}
		}},
		{"Finish of an earlier attempt writes nothing over the next one", func(t *testing.T, s ledger.Store) {
			a1 := begin(t, s, key, HashA, T0)
			finish(t, s, key, HashA, a1, outcome.NotSent, T0)
			a2 := begin(t, s, key, HashA, T0.Add(time.Minute))
			if a1 != 1 || a2 != 2 {
				t.Fatalf("Begin returned attempts %d then %d; want 1 then 2", a1, a2)
			}
			expectStale(t, s, key, a1, outcome.Unknown, ledger.Attempting, 2)
			expectStale(t, s, key, 3, outcome.Sent, ledger.Attempting, 2)
			want := ledger.Entry{RefKey: key, State: ledger.Attempting, Attempts: 2, BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0.Add(time.Minute)}
			expectGet(t, s, key, want)
			finish(t, s, key, HashA, a2, outcome.Sent, T0.Add(2*time.Minute))
		}},
		{"Finish of an attempt without an entry creates nothing", func(t *testing.T, s ledger.Store) {
			expectStale(t, s, key, 1, outcome.Sent, "", 0)
			expectMissing(t, s, key)
		}},
		{"an outcome decided without a send never lands on an attempted entry", func(t *testing.T, s ledger.Store) {
			a := begin(t, s, key, HashA, T0)
			expectStale(t, s, key, 0, outcome.OutsideSendWindow, ledger.Attempting, 1)
			finish(t, s, key, HashA, a, outcome.Sent, T0)
			expectStale(t, s, key, 0, outcome.Invalid, outcome.Sent, 1)
			expectGet(t, s, key, ledger.Entry{RefKey: key, State: outcome.Sent, Attempts: 1, Detail: "detail", BodyHash: HashA, CreatedAt: T0, UpdatedAt: T0})
		}},
		{"an outcome decided without a send updates an entry that never had an attempt", func(t *testing.T, s ledger.Store) {
			finish(t, s, key, HashA, 0, outcome.OutsideSendWindow, T0)
			finish(t, s, key, HashA, 0, outcome.OutsideSendWindow, T0.Add(time.Hour))
			expectGet(t, s, key, ledger.Entry{RefKey: key, State: outcome.OutsideSendWindow, Detail: "detail", BodyHash: HashA,
				CreatedAt: T0, UpdatedAt: T0.Add(time.Hour)})
		}},
		{"an operator's verdict on ATTEMPTING refuses the attempt's late outcome", func(t *testing.T, s ledger.Store) {
			a := begin(t, s, key, HashA, T0)
			r := ledger.Resolution{By: "ops-1", Why: "vendor journal shows it", At: T0.Add(time.Hour)}
			if err := s.Resolve(context.Background(), key, outcome.Sent, r, MinAge); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			expectStale(t, s, key, a, outcome.NotSent, outcome.Sent, 1)
		}},
	}
}
