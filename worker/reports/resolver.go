package reports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Verdict is what Apply did with one report.
type Verdict string

// Verdicts of Apply.
const (
	// Settled: the entry was UNKNOWN (or an old ATTEMPTING) and is now SENT
	// or REJECTED.
	Settled Verdict = "settled"
	// AlreadyFinal: the entry already had a final state; the report is
	// recorded and changes nothing (a duplicate, a late or a contradicting
	// report).
	AlreadyFinal Verdict = "already_final"
	// NoEntry: the ledger does not know the refkey; the report is kept and
	// logged, never trusted to create an entry.
	NoEntry Verdict = "no_entry"
	// Interim: the report's result is not final (an "unknown" value) and
	// changed nothing: the entry was already final. An interim report for an UNKNOWN (or old ATTEMPTING)
	// entry settles it as SENT instead (Settled): the vendor has the
	// message, so it must never be sent again.
	Interim Verdict = "interim"
	// InFlight: the entry is ATTEMPTING and younger than MinAge: its
	// attempt may still write its own outcome. The report is kept; the
	// next Sweep pulls it again.
	InFlight Verdict = "in_flight"
)

// Copies moves the copy of a settled message that waits in
// notifications.unknown: SENT is acked away, REJECTED goes to the failed
// queue, NOT_SENT back to be sent. The ledger already holds the settlement
// when Settled is called, so a copy moved back to the main queue is
// decided by ledger Begin whatever Settled did.
type Copies interface {
	Settled(ctx context.Context, refkey string, as outcome.Outcome) error
}

// Record is one line of the report journal.
type Record struct {
	At      time.Time        `json:"at"`
	Source  string           `json:"source"` // ledger.SourceReport or ledger.SourcePull
	Report  vendorapi.Report `json:"report"`
	Verdict Verdict          `json:"verdict"`
	// State is the ledger's state for the refkey after the report ("" when
	// there is no entry).
	State outcome.Outcome `json:"state,omitempty"`
}

// Journal keeps every authenticated report (FileJournal). Keep must be
// durable when it returns nil: an error makes the receiver answer 503 so
// the vendor pushes the report again.
type Journal interface {
	Keep(ctx context.Context, r Record) error
}

// Resolver applies reports to the ledger (package doc). Store and Spec are
// required; Copies, Journal, Log and Metrics may be nil.
type Resolver struct {
	Store  ledger.Store
	Spec   vendorapi.ReportSpec
	Copies Copies
	// Journal keeps every report Apply was given.
	Journal Journal
	// MinAge is the worst-case send time: an ATTEMPTING entry younger than
	// it is not settled (docs/deployment.md#resolving-unknown).
	MinAge  time.Duration
	Log     *slog.Logger
	Metrics *Metrics

	// held keeps, by refkey, each report Apply could not apply (the ledger
	// or the journal failed): a report exists only for a message the
	// vendor accepted, so until it is applied the refkey must not be
	// horizon-settled NOT_SENT. The next Sweep applies it again without
	// waiting for the vendor's retry. Not durable: a restart forgets it,
	// and the vendor's own retry of the push is then what settles it.
	heldMu sync.Mutex
	held   map[string]heldReport
}

// heldReport is a report Apply could not apply, and its source.
type heldReport struct {
	rep    vendorapi.Report
	source string
}

// hold keeps rep for the next Sweep (Apply failed on it).
func (r *Resolver) hold(rep vendorapi.Report, source string) {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	if r.held == nil {
		r.held = map[string]heldReport{}
	}
	r.held[rep.RefKey] = heldReport{rep: rep, source: source}
}

// release forgets refkey's held report (one of its reports was applied).
func (r *Resolver) release(refkey string) {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	delete(r.held, refkey)
}

// holds reports whether a report of refkey waits to be applied.
func (r *Resolver) holds(refkey string) bool {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	_, ok := r.held[refkey]
	return ok
}

// heldReports returns the reports waiting to be applied, by refkey.
func (r *Resolver) heldReports() []heldReport {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	out := make([]heldReport, 0, len(r.held))
	for _, k := range slices.Sorted(maps.Keys(r.held)) {
		out = append(out, r.held[k])
	}
	return out
}

func (r *Resolver) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// Apply settles the ledger entry of rep's refkey by the package's rules and
// returns what it did. A report it could not apply (an error) is held for
// the next Sweep, which applies it again and never horizon-settles its
// refkey meanwhile. source is ledger.SourceReport (pushed) or
// ledger.SourcePull. Errors: the ledger or the journal failed (nothing
// may be assumed recorded: the caller lets the vendor retry), or source is
// neither of the two.
func (r *Resolver) Apply(ctx context.Context, rep vendorapi.Report, source string, now time.Time) (Verdict, error) {
	if source != ledger.SourceReport && source != ledger.SourcePull {
		return "", fmt.Errorf("apply report %s: source %q: want %q or %q", rep.RefKey, source, ledger.SourceReport, ledger.SourcePull)
	}
	v, state, err := r.decide(ctx, rep, source, now)
	if err != nil {
		r.hold(rep, source)
		return "", fmt.Errorf("apply report %s: %w", rep.RefKey, err)
	}
	if r.Journal != nil {
		if err := r.Journal.Keep(ctx, Record{At: now.UTC(), Source: source, Report: rep, Verdict: v, State: state}); err != nil {
			r.hold(rep, source)
			return "", fmt.Errorf("apply report %s: keep it: %w", rep.RefKey, err)
		}
	}
	if v == InFlight {
		r.hold(rep, source) // applied again by each Sweep until its attempt is old enough
	} else {
		r.release(rep.RefKey)
	}
	r.Metrics.report(source, v)
	return v, nil
}

// decide is Apply without the journal: the verdict and the ledger state
// after it.
func (r *Resolver) decide(ctx context.Context, rep vendorapi.Report, source string, now time.Time) (Verdict, outcome.Outcome, error) {
	lg := r.log().With("refkey", rep.RefKey, "source", source, "result", rep.Result)
	e, found, err := r.Store.Get(ctx, rep.RefKey)
	if err != nil {
		return "", "", err
	}
	switch {
	case !found:
		lg.Warn("report for a refkey the ledger does not know: kept, not trusted")
		return NoEntry, "", nil
	case e.State != outcome.Unknown && e.State != ledger.Attempting:
		if rep.Kind == vendorapi.ReportPending {
			return Interim, e.State, nil
		}
		r.final(lg, e, rep)
		return AlreadyFinal, e.State, nil
	case e.State == ledger.Attempting && now.Sub(e.UpdatedAt) < r.MinAge:
		// Held, an interim report too (it says the vendor has the
		// message): each Sweep applies it again until the attempt is old
		// enough, and a push is answered 503 with Retry-After.
		lg.Info("report for an attempt that may still be finishing: kept, not applied", "attempting_since", e.UpdatedAt)
		return InFlight, e.State, nil
	}
	as, why := outcome.Sent, fmt.Sprintf("%s %s", r.Spec.ResultField, rep.Result)
	switch rep.Kind {
	case vendorapi.ReportFailed:
		as = outcome.Rejected
	case vendorapi.ReportPending:
		// The vendor has the message and has not reported its result yet:
		// it was accepted, so it is SENT (the outcome table's "vendor
		// accepted it") and never NOT_SENT, whatever the horizon says
		// later (issue 27: an interim answer fell through to the horizon
		// rule and the message was sent again).
		why = InterimWhyPrefix + why
	}
	res := ledger.Resolution{By: "vendor " + source, Why: why,
		At: now.UTC(), Source: source, Code: rep.Code}
	err = r.Store.Resolve(ctx, rep.RefKey, as, res, r.MinAge)
	switch {
	case errors.Is(err, ledger.ErrBadState):
		// Settled meanwhile (another report, an operator, the attempt's
		// own Finish): read what won.
		cur, _, gerr := r.Store.Get(ctx, rep.RefKey)
		if gerr != nil {
			return "", "", gerr
		}
		r.final(lg, cur, rep)
		return AlreadyFinal, cur.State, nil
	case errors.Is(err, ledger.ErrAttemptTooRecent):
		return InFlight, e.State, nil
	case err != nil:
		return "", "", err
	}
	r.Metrics.settled(source, now.Sub(e.UpdatedAt))
	lg.Info("settled by vendor report", "was", e.State, "as", as, "code", rep.Code, "unknown_for", now.Sub(e.UpdatedAt).Round(time.Millisecond))
	if r.Copies != nil {
		if err := r.Copies.Settled(ctx, rep.RefKey, as); err != nil {
			lg.Warn("settled, but its copy in the unknown queue was not moved; the ledger decides it when it comes back", "error", err.Error())
		}
	}
	return Settled, as, nil
}

// InterimWhyPrefix starts the Resolution.Why of an entry an interim report
// settled as SENT ("interim: status PENDING").
const InterimWhyPrefix = "interim: "

// settledByInterim reports whether e was settled SENT by an interim report.
func settledByInterim(e ledger.Entry) bool {
	return e.State == outcome.Sent && e.Resolution != nil && strings.HasPrefix(e.Resolution.Why, InterimWhyPrefix)
}

// final logs a report for an entry that is already final, louder when the
// report contradicts it. A final result after an interim settlement is
// the vendor's news about a message it had accepted, not a contradiction.
func (r *Resolver) final(lg *slog.Logger, e ledger.Entry, rep vendorapi.Report) {
	agrees := e.State == outcome.Sent && rep.Kind == vendorapi.ReportDelivered ||
		e.State == outcome.Rejected && rep.Kind == vendorapi.ReportFailed
	if !agrees && settledByInterim(e) {
		lg.Info("final result of a message an interim report settled SENT: recorded, nothing changes", "code", rep.Code)
		return
	}
	if agrees {
		lg.Info("report for a final entry: recorded, nothing changes", "state", e.State)
		return
	}
	lg.Warn("report contradicts a final entry: recorded, nothing changes; an operator should look", "state", e.State, "code", rep.Code)
}
