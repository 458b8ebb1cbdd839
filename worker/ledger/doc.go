// Package ledger is the worker's durable attempt ledger: one record per
// refkey, written before a request goes out and updated with its outcome,
// so that a redelivered message never becomes a second send (DESIGN.md:
// RabbitMQ delivers at least once; the vendor does not de-duplicate on
// refkey).
//
//	delivery ──> Begin(refkey) ── one bbolt Update tx, fsynced ──┐
//	               │ no entry / NOT_SENT / OUTSIDE_SEND_WINDOW   │
//	               │   -> write ATTEMPTING, Attempts++ : Proceed ──> send ──> Finish(outcome)
//	               │ ATTEMPTING (crash or lost channel mid-send)
//	               │   -> Unresolved: do not send, outcome UNKNOWN
//	               │ SENT / REJECTED / UNKNOWN / INVALID
//	               │   -> Duplicate: do not send, ack as suppressed duplicate
//
// Storage: one bbolt file, one bucket "attempts", key = refkey bytes, value
// = Entry as JSON (readable with any bbolt tool; the reconciler reads it
// with All). bbolt fsyncs every write transaction before Update returns, so
// a Proceed is on disk before the request goes out: after a crash between
// Begin and Finish the reopened ledger says Unresolved, never Proceed.
//
// OUTSIDE_SEND_WINDOW counts as resendable although it is an outcome: the
// held message comes back to the main queue when the window opens and must
// then be sent, not suppressed as a duplicate.
//
// One process at a time: Open takes bbolt's file lock and gives up after
// LockTimeout (1 s) with ErrLocked, so a second worker on the same ledger
// fails at start instead of racing the first.
package ledger
