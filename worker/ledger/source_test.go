package ledger_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestResolutionSourceOf: a resolution without a source (written before
// sources were recorded) is an operator's; any other keeps its own; and
// CheckSettle's refusal names the source it used.
func TestResolutionSourceOf(t *testing.T) {
	for _, tt := range []struct{ source, want string }{
		{"", ledger.SourceOperator},
		{ledger.SourceOperator, ledger.SourceOperator},
		{ledger.SourceReport, ledger.SourceReport},
		{ledger.SourcePull, ledger.SourcePull},
		{ledger.SourceHorizon, ledger.SourceHorizon},
	} {
		if got := (ledger.Resolution{Source: tt.source}).SourceOf(); got != tt.want {
			t.Errorf("SourceOf() of source %q = %q, want %q", tt.source, got, tt.want)
		}
	}
	cur := ledger.Entry{RefKey: "r", State: outcome.Unknown}
	err := ledger.CheckSettle("r", cur, ledger.Resolution{As: outcome.Rejected, At: time.Now()}, 0)
	if !errors.Is(err, ledger.ErrBadState) || !strings.Contains(err.Error(), "(source operator)") {
		t.Errorf("CheckSettle REJECTED without a source: %v; want ErrBadState naming source operator", err)
	}
}
