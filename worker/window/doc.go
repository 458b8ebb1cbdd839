// Package window implements the send window for advertising messages and an
// injectable clock.
//
// Rule (from the case in docs/outcomes.md): advertising messages may not go out
// after 20:50 Asia/Seoul; they may go out again from 08:00. Default is
// [08:00, 20:50) Asia/Seoul; Parse builds another from "HH:MM" bounds.
//
//	Clock.Now() ──> t ──> t.In(Loc) ──> wall offset from local midnight
//	                                       │
//	          Start <= offset < End ? ─────┼─ yes: Allowed, send
//	                                       └─ no:  OUTSIDE_SEND_WINDOW, held
//	                                               for UntilOpen(t) = NextOpen(t) - t
//
// Every instant is judged on the window zone's wall clock, whatever the
// host's zone: 11:50 UTC is 20:50 in Seoul and is outside the window.
//
// The worker judges an ad when it takes it, again after its ledger Begin,
// and again inside the vendor call right before each message POST (after a
// token call, and before the resend after a 401), each on a fresh Clock
// reading: the rule holds at the moment of the POST.
//
// Clocks: the worker reads time only through a Clock. System is the host
// clock; StartedAt(start) reads start when created and advances with the
// host's monotonic clock (the lab starts a bulk run at 20:49:50 to cross
// the boundary); Manual moves only when told (tests).
//
// The package imports time/tzdata, so Asia/Seoul and every other IANA zone
// resolve in a FROM scratch image; a main does not need to import it again.
package window
