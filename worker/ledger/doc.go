// Package ledger is the worker's durable attempt ledger: one entry per
// refkey, written before a request goes out and updated with its outcome,
// so that a redelivered message never becomes a second send (RabbitMQ
// delivers at least once; the vendor does not de-duplicate on refkey:
// docs/case.md, docs/deployment.md).
//
//	delivery ──> Begin(refkey, BodyHash(body)) ── one durable commit ──┐
//	               │ known with another body -> Conflict: never sent,   │
//	               │   dead-lettered REFKEY_CONFLICT, nothing written   │
//	               │ no entry / NOT_SENT / OUTSIDE_SEND_WINDOW          │
//	               │   -> write ATTEMPTING, Attempts++ : Proceed ──> send ──> Finish(Attempts, outcome)
//	               │ ATTEMPTING (crash or lost channel mid-send, or an
//	               │   attempt still in flight elsewhere)
//	               │   -> Unresolved: do not send, outcome UNKNOWN, write nothing
//	               │ SENT / REJECTED / UNKNOWN / INVALID
//	               │   -> Duplicate: do not send, ack as suppressed duplicate
//
// Two stores satisfy Store; OpenStore picks one from the LEDGER spec:
//
//   - *Ledger, a bbolt file, for one replica: one bucket "attempts", key =
//     refkey, value = Entry as JSON. Every write transaction is fsynced
//     before it returns (bbolt's NoSync is never set: bbolt documents it
//     as unsafe), so a Proceed is on disk before the request goes out.
//     GroupCommit lets a Begin and a Finish share one such transaction
//     (bbolt's DB.Batch): the worker's group of message k's Finish with
//     k+1's Begin at concurrency 1.
//     One process at a time: Open takes bbolt's file lock and gives up
//     after LockTimeout (1 s) with ErrLocked.
//   - *Postgres, shared by every replica: one row per refkey in Table
//     under its primary key. Begin is one INSERT ... ON CONFLICT DO UPDATE
//     ... WHERE statement, so two replicas racing on a refkey never both
//     proceed; the session sets synchronous_commit=on.
//
// Finish closes one attempt: it lands only while the entry is ATTEMPTING
// with the attempt number Begin returned (CheckAttempt), else it writes
// nothing and returns a *StaleAttemptError (ErrStaleAttempt). A late
// writer (a redelivery, a frozen replica) can therefore never overwrite the
// outcome of a live attempt or an operator's verdict.
//
// OUTSIDE_SEND_WINDOW counts as resendable although it is an outcome: the
// held message comes back to the main queue when the window opens and must
// then be sent, not suppressed as a duplicate (docs/outcomes.md).
//
// Operators resolve an UNKNOWN entry (Resolve) after checking with the
// vendor: as NOT_SENT, a re-published copy is sent; as SENT, it is
// suppressed. A vendor's delivery report settles one the same way, through
// the same conditional Resolve (Resolution.Source says who settled it:
// operator, report, pull or horizon; only a report may settle it as
// REJECTED, CheckSettle). PruneEvery deletes entries older than the retention whose
// copies cannot come back (CanPrune: never ATTEMPTING, UNKNOWN, REJECTED or
// resolved ones).
// CheckPlacement refuses a bbolt file that a container would lose.
//
// Package ledgertest holds the in-memory fake and the contract cases that
// every store passes.
package ledger
