package results

import (
	"slices"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// SettleTimes is the time to settle of the UNKNOWN sends a vendor report
// settled (pushed or pulled): the ledger's Resolution.At (the report
// applied) minus the Start of the refkey's last UNKNOWN record (the send
// attempt), in ms.
type SettleTimes struct {
	N     int     `json:"n"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	MinMS float64 `json:"min_ms"`
	MaxMS float64 `json:"max_ms"`
}

// Settlement is what a run's end says about its UNKNOWN sends and their
// settlement (docs/outcomes.md#delivery-reports). The UNKNOWN a run
// produced are its records' (Result.Outcomes, the idle race's rows), not
// counted here again.
type Settlement struct {
	// Reports: the worker was given the vendor's delivery reports. The
	// bench never turns them on (false: every UNKNOWN left is for an
	// operator).
	Reports bool `json:"reports"`
	// LedgerRead: the worker's ledger was read (one worker on its bbolt
	// file). false (replicas, a contract worker): SettledBy is unknown
	// and UnknownLeft counts the unknown queue alone.
	LedgerRead bool `json:"ledger_read"`
	// UnknownLeft counts the refkeys left UNKNOWN for an operator:
	// UNKNOWN in the ledger, or with a copy in the unknown queue (the
	// union, each once).
	UnknownLeft int `json:"unknown_left"`
	// SettledBy counts the ledger's settlements by source (report, pull,
	// horizon, operator); empty when none.
	SettledBy map[string]int `json:"settled_by,omitempty"`
	// TimeToSettle is the time to settle of those settled by a report or
	// a pull; nil when none was.
	TimeToSettle *SettleTimes `json:"time_to_settle,omitempty"`
}

// MeasureSettlement reads in (gathered after the workers stopped): the
// refkeys left UNKNOWN for an operator, the ledger's settlements by source,
// and the time to settle of those settled by a report or a pull, against
// recs (the refkey's last UNKNOWN record). unknownQueue names the unknown
// queue in in.Queues. A nil in.Ledger counts the queue alone and
// measures no time; LedgerRead is in.Ledger != nil, Reports is false (the
// caller knows).
func MeasureSettlement(in reconcile.Input, unknownQueue string, recs []records.Record) Settlement {
	m := Settlement{LedgerRead: in.Ledger != nil, SettledBy: map[string]int{}}
	left := map[string]bool{}
	for i, q := range in.Queues[unknownQueue] {
		key := q.RefKey
		if key == "" { // a copy without a refkey still counts, once
			key = "message-id " + q.MessageID + " #" + strconv.Itoa(i)
		}
		left[key] = true
	}
	attempt := map[string]time.Time{} // refkey -> start of its last UNKNOWN record
	for _, r := range recs {
		if r.Outcome == outcome.Unknown && r.RefKey != "" && r.Start.After(attempt[r.RefKey]) {
			attempt[r.RefKey] = r.Start
		}
	}
	var ms []float64
	for _, e := range in.Ledger {
		if e.State == outcome.Unknown {
			left[e.RefKey] = true
		}
		if e.Resolution == nil {
			continue
		}
		src := e.Resolution.SourceOf()
		m.SettledBy[src]++
		if t, ok := attempt[e.RefKey]; ok && (src == ledger.SourceReport || src == ledger.SourcePull) {
			ms = append(ms, float64(e.Resolution.At.Sub(t).Microseconds())/1000)
		}
	}
	m.UnknownLeft = len(left)
	if len(ms) > 0 {
		slices.Sort(ms)
		m.TimeToSettle = &SettleTimes{N: len(ms), P50MS: Percentile(ms, 0.5), P99MS: Percentile(ms, 0.99), MinMS: ms[0], MaxMS: ms[len(ms)-1]}
	}
	return m
}
