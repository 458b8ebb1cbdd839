package worker

import (
	"context"
	"log/slog"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// staleFinish logs a Finish the ledger refused as stale: the entry moved
// on while the attempt was under way (a delivery report or an operator
// settled the ATTEMPTING entry, typically once the worker had been frozen
// past the worst-case send time, or a later attempt began after a NOT_SENT
// verdict). The ledger answered, so the worker does not stop; it writes
// nothing over the settlement, which is the truth about the message.
//
// The delivery's copy goes where the attempt's own outcome sends it, as
// for any Finish, on purpose: the copy is published and confirmed before
// the Finish (so that a failed copy leaves the entry ATTEMPTING), so the
// refusal is known only once the copy is in its queue; and each queue's
// copy is decided by the entry, never sent on the attempt's word alone. A
// copy in notifications.unknown is moved by the unknown drain as the
// settlement says (SENT acked away, REJECTED to .failed, NOT_SENT back to
// main); one in .retry or .held meets Begin again (a DUPLICATE of a
// settled entry); one in .failed waits for an operator. A stale Finish
// therefore never leads to a second send: a copy is sent again only when
// the entry says NOT_SENT, the verdict of an operator or a complete
// vendor's horizon.
//
// The line is an error when the vendor took the message (the attempt's
// outcome is SENT) but the entry is not final (NOT_SENT, or a newer
// ATTEMPTING): a copy of that refkey could then be sent again, so the
// operator checks it with the vendor. Otherwise it is a warning.
func (h *Handler) staleFinish(se *ledger.StaleAttemptError) {
	level := slog.LevelWarn
	msg := "ledger refused the outcome as stale: the entry was settled meanwhile; the delivery is routed by its own outcome and the entry kept"
	current := outcome.Outcome("none")
	if se.Found {
		current = se.Current.State
	}
	if se.State == outcome.Sent && (!se.Found || current == ledger.Attempting || current.Resendable()) {
		level = slog.LevelError
		msg = "sent, but the ledger entry was settled otherwise meanwhile (stale attempt); a copy could be sent again: check the refkey with the vendor"
	}
	args := []any{"refkey", se.RefKey, "attempt", se.Attempt, "outcome", se.State,
		"ledger_state", current, "ledger_attempts", se.Current.Attempts}
	if r := se.Current.Resolution; se.Found && r != nil {
		args = append(args, "settled_by", r.SourceOf())
	}
	h.c.Logger.Log(context.Background(), level, msg, args...)
}
