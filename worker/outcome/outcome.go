// Package outcome is the one vocabulary of delivery outcomes: where every
// consumed message ends (docs/outcomes.md). The vendor client, the handler,
// the ledger, the reconciler and the scenario loader all use these names;
// no other package declares them.
//
// It has no dependency beyond the standard library, so every reader of the
// records file can import it.
package outcome

import (
	"fmt"
	"slices"
	"strings"
)

// Outcome is where one consumed message ended, as written in a record's
// "outcome" field, the x-notifier-outcome header and the ledger.
type Outcome string

// The outcomes of the delivery table (docs/outcomes.md).
const (
	// Sent: the vendor accepted it. Acked; never sent again.
	Sent Outcome = "SENT"
	// Rejected: the vendor answered and refused it (a 4xx other than the
	// profile's not-sent statuses, or a business code). Failed queue.
	Rejected Outcome = "REJECTED"
	// NotSent: provably never left the worker, or the vendor said it did
	// not process it (429, 408, ...). Retry queue.
	NotSent Outcome = "NOT_SENT"
	// Unknown: the request may have reached the vendor. Unknown queue;
	// never re-sent automatically.
	Unknown Outcome = "UNKNOWN"
	// OutsideSendWindow: an advertising message outside the send window.
	// Held until the window opens; never attempted.
	OutsideSendWindow Outcome = "OUTSIDE_SEND_WINDOW"
	// Invalid: the message cannot be parsed or validated. Dead-letter
	// queue with the reason.
	Invalid Outcome = "INVALID"
	// Duplicate: a redelivered or re-published message whose refkey
	// already has a final outcome and the same body. Acked, not sent.
	Duplicate Outcome = "DUPLICATE"
)

// All lists every outcome a worker writes, in table order.
var All = []Outcome{Sent, Rejected, NotSent, Unknown, OutsideSendWindow, Invalid, Duplicate}

// SendClasses are the outcomes one send attempt can end in (the class of a
// vendorapi.SendError).
var SendClasses = []Outcome{Sent, Rejected, NotSent, Unknown}

// Valid reports whether o is one of All.
func (o Outcome) Valid() bool { return slices.Contains(All, o) }

// Resendable reports whether a refkey whose last outcome is o may be
// attempted again: NOT_SENT (it provably never left, or the vendor did not
// process it) and OUTSIDE_SEND_WINDOW (held, never attempted). Every other
// outcome is final.
func (o Outcome) Resendable() bool { return o == NotSent || o == OutsideSendWindow }

// String returns the outcome's name.
func (o Outcome) String() string { return string(o) }

// Parse returns the outcome named s (exact, upper case). Errors: s is not
// one of All; the message names the allowed values.
func Parse(s string) (Outcome, error) {
	o := Outcome(s)
	if !o.Valid() {
		return "", fmt.Errorf("unknown outcome %q; want one of %s", s, Names(All))
	}
	return o, nil
}

// Names joins outcomes with ", " for messages.
func Names(os []Outcome) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

// Observed are the places the reconciler reports besides the worker's
// outcomes: a published message that has no record yet, or ended nowhere.
const (
	// Pending: still in the main queue (published, not yet handled).
	Pending Outcome = "PENDING"
	// Lost: published and found nowhere.
	Lost Outcome = "LOST"
	// Dead: dead-lettered without an outcome header.
	Dead Outcome = "DEAD"
	// Queued: in a queue the topology does not know.
	Queued Outcome = "QUEUED"
)

// Reconciled lists every name a reconciliation can count a message under:
// All followed by the observed places.
var Reconciled = append(slices.Clone(All), Pending, Lost, Dead, Queued)
