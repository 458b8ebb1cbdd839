package reports

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Puller fetches the report of one refkey (vendorapi.ReportSpec.Pull).
// found is false while the vendor has none.
type Puller interface {
	Pull(ctx context.Context, refkey string) (rep vendorapi.Report, found bool, err error)
}

// SweepStats counts what one Sweep did.
type SweepStats struct {
	Unknown     int // UNKNOWN entries looked at
	Attempting  int // ATTEMPTING entries older than MinAge looked at (a crash or a lost session mid-send)
	Pulled      int // reports found by pull (any verdict)
	Settled     int // settled by a pulled report (an interim one included: SENT)
	NotFound    int // pulls the vendor answered "no report"
	NotSent     int // past the horizon, complete vendor, no report: NOT_SENT, retried
	PastHorizon int // past the horizon, incomplete vendor: left for an operator
	PullErrors  int // pulls that failed (the entry is tried again next Sweep, never horizon-settled on it)
	Reapplied   int // reports Apply could not apply earlier (ledger or journal failed), applied now
}

// Sweeper runs the resolver's periodic part over the ledger's entries in
// doubt: every UNKNOWN one, and every ATTEMPTING one older than
// Resolver.MinAge (an attempt that crashed mid-send, which no Finish will
// close). For each it pulls the report (when Puller is set and the vendor
// has a pull endpoint), then applies the horizon rule (package doc). Its
// zero value plus Resolver is ready; it remembers which entries it
// already logged as left for an operator.
type Sweeper struct {
	Resolver *Resolver
	Puller   Puller // nil: no pull

	mu     sync.Mutex
	logged map[string]bool
}

// Sweep looks at every entry in doubt once, oldest first. Errors: the
// ledger could not be listed, a settlement failed to be written, or ctx
// ended (a SIGTERM during the sweep): the Sweep then stops where it is
// and the next one starts over. A failed pull is logged and counted, not
// an error.
//
// The horizon settles an entry NOT_SENT only when nothing says the vendor
// may have it: with a pull endpoint, only after this Sweep's pull of it
// answered "no report" (a failed pull, a pull cut short by ctx or an
// interim report never lets it: the outage that made the UNKNOWN is the
// one most likely to take the report API down too); without one (a
// push-only vendor), when no report was pushed within the horizon (an
// interim push settles the entry SENT, so it is no longer in doubt).
func (s *Sweeper) Sweep(ctx context.Context, now time.Time) (SweepStats, error) {
	r := s.Resolver
	var st SweepStats
	for _, h := range r.heldReports() {
		// A report the ledger or the journal refused earlier: the vendor
		// has the message; apply it now rather than wait for its retry.
		if _, err := r.Apply(ctx, h.rep, h.source, now); err != nil {
			return st, fmt.Errorf("sweep: apply a held report again: %w", err)
		}
		st.Reapplied++
	}
	entries, err := s.inDoubt(ctx, now, &st)
	if err != nil {
		return st, err
	}
	horizon := r.Spec.HorizonDuration()
	pastHorizon := map[string]bool{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return st, fmt.Errorf("sweep stopped: %w", err)
		}
		if s.Puller != nil && r.Spec.Pull != nil {
			rep, found, err := s.Puller.Pull(ctx, e.RefKey)
			switch {
			case ctx.Err() != nil:
				return st, fmt.Errorf("sweep stopped during the pull of %s: %w", e.RefKey, ctx.Err())
			case err != nil:
				st.PullErrors++
				r.log().Warn("pull of a delivery report failed; not settled by the horizon on it", "refkey", e.RefKey, "error", err.Error())
				continue
			case found:
				st.Pulled++
				v, err := r.Apply(ctx, rep, ledger.SourcePull, now)
				if err != nil {
					return st, err
				}
				if v == Settled {
					st.Settled++
				}
				// Any report, final or interim, says the vendor has the
				// message: never the horizon's NOT_SENT.
				continue
			}
			st.NotFound++
		}
		if !r.Spec.Enabled() || now.Sub(e.UpdatedAt) < horizon || r.holds(e.RefKey) {
			continue
		}
		if !r.Spec.Complete {
			st.PastHorizon++
			pastHorizon[e.RefKey] = true
			s.logOnce(e, horizon)
			continue
		}
		noReport := "no report"
		if s.Puller != nil && r.Spec.Pull != nil {
			noReport = "the vendor answered no report"
		}
		res := ledger.Resolution{By: "report horizon",
			Why: fmt.Sprintf("%s %s after the send; the vendor reports every accepted message within %s (complete: true)",
				noReport, now.Sub(e.UpdatedAt).Round(time.Second), horizon),
			At: now.UTC(), Source: ledger.SourceHorizon}
		if err := r.Store.Resolve(ctx, e.RefKey, outcome.NotSent, res, r.MinAge); err != nil {
			r.log().Info("horizon settlement not written; the entry changed meanwhile", "refkey", e.RefKey, "error", err.Error())
			continue
		}
		st.NotSent++
		r.log().Info("no report within the horizon: NOT_SENT, retried", "refkey", e.RefKey, "horizon", horizon, "was", e.State)
		if r.Copies != nil {
			if err := r.Copies.Settled(ctx, e.RefKey, outcome.NotSent); err != nil {
				r.log().Warn("settled NOT_SENT, but its copy in the unknown queue was not moved", "refkey", e.RefKey, "error", err.Error())
			}
		}
	}
	s.mu.Lock()
	s.logged = pastHorizonKeep(s.logged, pastHorizon)
	s.mu.Unlock()
	r.Metrics.setPastHorizon(st.PastHorizon)
	return st, nil
}

// inDoubt lists the entries Sweep looks at: every UNKNOWN one, then every
// ATTEMPTING one last updated at least Resolver.MinAge before now (a
// younger attempt may still be sending and will write its own outcome),
// each list oldest first. It counts them in st.
func (s *Sweeper) inDoubt(ctx context.Context, now time.Time, st *SweepStats) ([]ledger.Entry, error) {
	unknown, err := s.Resolver.Store.List(ctx, outcome.Unknown, 0)
	if err != nil {
		return nil, fmt.Errorf("sweep unknown entries: %w", err)
	}
	attempting, err := s.Resolver.Store.List(ctx, ledger.Attempting, 0)
	if err != nil {
		return nil, fmt.Errorf("sweep attempting entries: %w", err)
	}
	st.Unknown = len(unknown)
	for _, e := range attempting {
		if now.Sub(e.UpdatedAt) >= s.Resolver.MinAge {
			unknown = append(unknown, e)
			st.Attempting++
		}
	}
	return unknown, nil
}

// logOnce says, once per entry, why it stays UNKNOWN.
func (s *Sweeper) logOnce(e ledger.Entry, horizon time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logged[e.RefKey] {
		return
	}
	if s.logged == nil {
		s.logged = map[string]bool{}
	}
	s.logged[e.RefKey] = true
	s.Resolver.log().Warn("stays UNKNOWN for an operator: no report within the horizon, and the vendor does not promise one for every message (complete: false)",
		"refkey", e.RefKey, "unknown_since", e.UpdatedAt, "horizon", horizon)
}

// pastHorizonKeep forgets the logged entries that are no longer past the
// horizon and UNKNOWN (settled meanwhile).
func pastHorizonKeep(logged, now map[string]bool) map[string]bool {
	for k := range logged {
		if !now[k] {
			delete(logged, k)
		}
	}
	return logged
}

// ClientPuller is the Puller of the worker's vendor client
// (vendorapi.Client.PullReport with Spec).
type ClientPuller struct {
	Client *vendorapi.Client
	Spec   vendorapi.ReportSpec
}

// Pull fetches refkey's report (see vendorapi.Client.PullReport).
func (p ClientPuller) Pull(ctx context.Context, refkey string) (vendorapi.Report, bool, error) {
	return p.Client.PullReport(ctx, p.Spec, refkey)
}
