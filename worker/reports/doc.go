// Package reports settles UNKNOWN sends from the vendor's delivery reports
// (docs/outcomes.md#delivery-reports, docs/vendor-api.md#delivery-reports).
//
//	vendor POST report ──> Handler: VerifyPush ── forged ──> 401, log, refused{reason="forged"}
//	                                 ParseReport ─ malformed ─> 400, log, refused{reason="malformed"}
//	                                      │
//	Sweep: pull by refkey ──────────────> Resolver.Apply(report, source, now)
//	                                      │ no ledger entry      -> kept in the Journal, logged, nothing trusted
//	                                      │ entry already final  -> recorded, nothing changes
//	                                      │ ATTEMPTING < MinAge  -> kept (its attempt may still be finishing)
//	                                      │ UNKNOWN / ATTEMPTING -> ledger Resolve: delivered -> SENT,
//	                                      │                         interim -> SENT (the vendor has it),
//	                                      │                         failed -> REJECTED with the vendor code;
//	                                      │                         Copies.Settled moves the waiting copy
//	Sweep looks at every UNKNOWN entry and every ATTEMPTING one older than MinAge
//	(a crash mid-send); after the horizon, one with no report:
//	    pull endpoint: only when this Sweep's pull answered "no report"
//	                   (a failed pull, an interim report or a Sweep cut short by ctx never)
//	    profile complete: true  -> ledger Resolve NOT_SENT (source horizon), Copies.Settled: retried
//	    profile complete: false -> stays in doubt for an operator, logged once with the reason
//
// A report Apply could not apply (the ledger or the journal failed; a push
// is answered 503) is held in memory: the next Sweep applies it again, and
// its refkey is never horizon-settled meanwhile (a report exists only for a
// message the vendor accepted). A restart forgets it; the vendor's retry
// of the push settles it then.
//
// Every settlement goes through ledger.Store.Resolve, so it is conditional
// (only an UNKNOWN or ATTEMPTING entry is settled; a late or contradicting
// report finds a final entry and changes nothing) and it carries its
// source (report, pull, horizon) and time in ledger.Resolution. Every
// report that passed authentication is written to the Journal with the
// verdict it got, whatever it changed.
//
// The receiver is an HTTP endpoint of the worker (Handler), not a separate
// process: a bbolt ledger is one process's file (ledger.Open takes its
// lock), and the copies in notifications.unknown are moved by the worker's
// broker session (docs/deployment.md#delivery-reports).
package reports
