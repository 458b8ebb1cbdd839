package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// settleCases hold every store to the settlement source: each settlement
// of an UNKNOWN entry keeps where it came from (operator, report, pull,
// horizon) and when, and only the vendor may settle one as REJECTED
// (ledger.CheckSettle; docs/outcomes.md#delivery-reports).
func settleCases() []Case {
	return []Case{
		{"every settlement keeps its source and time", func(t *testing.T, s ledger.Store) {
			for i, src := range ledger.Sources {
				k := key + "-" + src
				finish(t, s, k, HashA, begin(t, s, k, HashA, T0), outcome.Unknown, T0)
				r := ledger.Resolution{By: "by-" + src, Why: "why-" + src, At: T0.Add(time.Duration(i+1) * time.Minute), Source: src}
				if err := s.Resolve(context.Background(), k, outcome.Sent, r, MinAge); err != nil {
					t.Fatalf("Resolve(source %s): %v", src, err)
				}
				r.As = outcome.Sent
				expectGet(t, s, k, ledger.Entry{RefKey: k, State: outcome.Sent, Attempts: 1, Detail: "detail", BodyHash: HashA,
					CreatedAt: T0, UpdatedAt: r.At, Resolution: &r})
			}
		}},
		{"a vendor report settles as REJECTED with its code; an operator cannot", func(t *testing.T, s ledger.Store) {
			ctx := context.Background()
			finish(t, s, key, HashA, begin(t, s, key, HashA, T0), outcome.Unknown, T0)
			for _, src := range []string{"", ledger.SourceOperator, ledger.SourceHorizon, "gossip"} {
				r := ledger.Resolution{By: "x", Why: "y", At: T0.Add(time.Minute), Source: src, Code: "3015"}
				if err := s.Resolve(ctx, key, outcome.Rejected, r, MinAge); !errors.Is(err, ledger.ErrBadState) {
					t.Errorf("Resolve(as REJECTED, source %q) = %v; want ErrBadState", src, err)
				}
			}
			if err := s.Resolve(ctx, key, outcome.Sent, ledger.Resolution{At: T0.Add(time.Minute), Source: "gossip"}, MinAge); !errors.Is(err, ledger.ErrBadState) {
				t.Errorf("Resolve(source gossip) = %v; want ErrBadState", err)
			}
			expectGet(t, s, key, ledger.Entry{RefKey: key, State: outcome.Unknown, Attempts: 1, Detail: "detail", BodyHash: HashA,
				CreatedAt: T0, UpdatedAt: T0})
			r := ledger.Resolution{By: "vendor report", Why: "failed", At: T0.Add(time.Hour), Source: ledger.SourceReport, Code: "3015"}
			if err := s.Resolve(ctx, key, outcome.Rejected, r, MinAge); err != nil {
				t.Fatalf("Resolve(as REJECTED from a report): %v", err)
			}
			r.As = outcome.Rejected
			want := ledger.Entry{RefKey: key, State: outcome.Rejected, Attempts: 1, Detail: "3015", BodyHash: HashA,
				CreatedAt: T0, UpdatedAt: r.At, Resolution: &r}
			expectGet(t, s, key, want)
			// A second report (a duplicate, or one that contradicts it)
			// changes nothing: the entry is final.
			r2 := ledger.Resolution{By: "vendor report", Why: "delivered", At: T0.Add(2 * time.Hour), Source: ledger.SourcePull}
			if err := s.Resolve(ctx, key, outcome.Sent, r2, MinAge); !errors.Is(err, ledger.ErrBadState) {
				t.Errorf("Resolve of a REJECTED entry = %v; want ErrBadState", err)
			}
			expectGet(t, s, key, want)
		}},
	}
}
