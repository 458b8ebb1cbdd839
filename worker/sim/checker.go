package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// The invariants the checker judges.
const (
	// InvAtMostOnce: the vendor processed each refkey at most once.
	InvAtMostOnce = "at-most-once"
	// InvSendWindow: no ad was processed whose POST left outside the send
	// window (08:00 to 20:50 Asia/Seoul) by the simulated clock.
	InvSendWindow = "send-window"
	// InvLedgerAgrees: SENT entries were processed, NOT_SENT ones were
	// not, REJECTED ones were refused or reported failed, UNKNOWN and
	// ATTEMPTING ones (between steps, nothing is in flight) are in doubt.
	InvLedgerAgrees = "ledger-agrees"
	// InvUnknownNeedsDoubt: the handler routes a message to the unknown
	// queue only after a real in-doubt attempt of its refkey.
	InvUnknownNeedsDoubt = "unknown-needs-doubt"
	// InvLedgerStopNeedsFault: the consume loop stops its session for a
	// broken ledger (worker.ErrLedger) only when a Begin or Finish of the
	// Handler failed since its previous stop.
	InvLedgerStopNeedsFault = "ledger-stop-needs-fault"
	// InvWaitForLedger: once the loop stopped its session for a ledger
	// outage, it takes no delivery until that outage is over: each
	// delivery it took and requeued unsent would cost a quorum queue one
	// of its delivery limit (issue 27: "dead-lettered unsent").
	InvWaitForLedger = "wait-for-ledger"
	// InvForgedRefused: a report with a wrong signature is refused.
	InvForgedRefused = "forged-refused"
	// InvAckAfterOutcome: the broker settles a delivery by an ack (a
	// multiple ack included) only once the message's outcome is durable:
	// the ledger of the replica that acks holds its refkey in a state
	// other than ATTEMPTING, or the worker enqueued a copy of it since it
	// was delivered (retry, held, unknown, failed, dead, a renewed
	// delivery), or the vendor processed the refkey (a send whose Finish
	// failed is acked on purpose: the ATTEMPTING entry keeps every copy
	// from a second send). An ack before that loses the message if the
	// process dies before its handler ends.
	InvAckAfterOutcome = "ack-after-outcome"
	// InvNoChannelError: the worker never makes the broker close a
	// channel with a channel error (406 PRECONDITION_FAILED: an ack, nack
	// or reject of a delivery tag the channel does not hold unsettled,
	// such as a multiple ack naming a tag a nack settled). The redelivered
	// messages are suppressed by the ledger, but every delivery in flight
	// is handled twice and the session is lost.
	InvNoChannelError = "no-channel-error"
	// InvOnePlace (at quiescence): each message ends in exactly one place
	// its vendor truth allows: acked away only if processed; dead only if
	// never processed and INVALID or out of attempts (else "dead-lettered
	// unsent"); failed only if refused or reported failed; unknown only
	// in doubt; nothing left in main, retry or held.
	InvOnePlace = "one-place"
	// InvSettled (at quiescence, a vendor with complete reports, the
	// horizon passed): nothing stays in doubt.
	InvSettled = "settled-after-horizon"
)

// Invariants lists every invariant, step ones first.
var Invariants = []string{InvAtMostOnce, InvSendWindow, InvLedgerAgrees, InvUnknownNeedsDoubt,
	InvLedgerStopNeedsFault, InvWaitForLedger, InvForgedRefused, InvAckAfterOutcome, InvNoChannelError,
	InvOnePlace, InvSettled}

// Violation is one broken invariant.
type Violation struct {
	Invariant string
	Detail    string
	Step      int // the step after which it was seen (-1: at quiescence)
}

func (v Violation) String() string {
	at := fmt.Sprintf("after step %d", v.Step)
	if v.Step < 0 {
		at = "at quiescence"
	}
	return fmt.Sprintf("%s %s: %s", v.Invariant, at, v.Detail)
}

// Message is one message the producer published (its copies carry
// HeaderMessage = ID).
type Message struct {
	ID, RefKey, Text string
	Invalid, Ad      bool
	// Published counts the producer's publishes of it (more than one: an
	// at-least-once producer's duplicates).
	Published int
}

// identity is the vendor's identity of m's send (hashBody).
func (m Message) identity() string { return m.RefKey + "|" + m.Text }

// View is what the checker judges: the vendor's truth, the ledger, the
// refkeys in doubt and why, the step's enqueues and facts and, at
// quiescence, every copy still in a queue. The scheduler fills it from
// the models; the negative-control tests build one by hand.
type View struct {
	Truth    map[string]*Truth
	Ledger   []ledger.Entry
	Doubt    map[string][]string
	Messages map[string]Message
	Names    queues.Names
	// Step facts.
	Moves []Move
	// LedgerStop: the loop stopped its session for worker.ErrLedger in
	// this step; LedgerFailures: the Handler's Begin and Finish that a
	// ledger fault failed before that stop, since the stop before it
	// (the fewest, when it stopped more than once).
	LedgerStop     bool
	LedgerFailures int
	// TookWhileLedgerDown: deliveries the loop took during the ledger
	// outage it had stopped its session for.
	TookWhileLedgerDown []string
	ForgedAccepted      []string
	// Acks: each delivery an ack settled in this step, with what was
	// durable at that moment; ChannelErrors: the channel errors the
	// worker caused.
	Acks          []AckFact
	ChannelErrors []string
	// Quiescence.
	Copies      []Copy
	Complete    bool
	MaxAttempts int
}

// CheckStep judges the invariants that hold after every step.
func CheckStep(v View) []Violation {
	var out []Violation
	bad := func(inv, format string, args ...any) {
		out = append(out, Violation{Invariant: inv, Detail: fmt.Sprintf(format, args...)})
	}
	for _, k := range sortedKeys(v.Truth) {
		t := v.Truth[k]
		if len(t.Processed) > 1 {
			var at []string
			for _, p := range t.Processed {
				at = append(at, p.At.In(seoul).Format("15:04:05.000"))
			}
			bad(InvAtMostOnce, "refkey %s processed %d times (at %s)", k, len(t.Processed), strings.Join(at, ", "))
		}
		for _, p := range t.Processed {
			if p.Ad && !inSendWindow(p.PostAt) {
				bad(InvSendWindow, "ad %s POSTed at %s, outside 08:00-20:50 KST", k, p.PostAt.In(seoul).Format("15:04:05.000"))
			}
		}
	}
	for _, e := range v.Ledger {
		t := v.Truth[e.RefKey]
		processed := t != nil && len(t.Processed) > 0
		switch e.State {
		case outcome.Sent:
			if !processed {
				bad(InvLedgerAgrees, "ledger says %s SENT (%s); the vendor never processed it", e.RefKey, source(e))
			}
		case outcome.NotSent:
			if processed {
				bad(InvLedgerAgrees, "ledger says %s NOT_SENT (%s); the vendor processed it", e.RefKey, source(e))
			}
		case outcome.Rejected:
			if t == nil || len(t.Rejected) == 0 && !(processed && t.ReportFailed) {
				bad(InvLedgerAgrees, "ledger says %s REJECTED (%s); the vendor neither refused it nor reported it failed", e.RefKey, source(e))
			}
		case outcome.Unknown, ledger.Attempting:
			if len(v.Doubt[e.RefKey]) == 0 {
				bad(InvLedgerAgrees, "ledger holds %s %s, but no attempt of it is in doubt (nothing written to the vendor, no crash, no lost ledger answer)", e.RefKey, e.State)
			}
		}
	}
	for _, m := range v.Moves {
		if m.Who != "handler" || m.Queue != v.Names.Unknown {
			continue
		}
		if msg, ok := v.Messages[m.Message]; ok && len(v.Doubt[msg.RefKey]) == 0 {
			bad(InvUnknownNeedsDoubt, "message %s (refkey %s) routed to %s, but no attempt of it is in doubt", m.Message, msg.RefKey, m.Queue)
		}
	}
	if v.LedgerStop && v.LedgerFailures == 0 {
		bad(InvLedgerStopNeedsFault, "the loop stopped its session for a broken ledger, but no ledger operation of the handler failed")
	}
	for _, d := range v.TookWhileLedgerDown {
		bad(InvWaitForLedger, "the loop stopped its session for a ledger outage and took a delivery before it ended: %s", d)
	}
	for _, k := range v.ForgedAccepted {
		bad(InvForgedRefused, "a forged report for %s was accepted", k)
	}
	for _, a := range v.Acks {
		if !a.Copied && !a.Processed && (a.State == "" || a.State == string(ledger.Attempting)) {
			state := cmp.Or(a.State, "no entry")
			bad(InvAckAfterOutcome, "message %s (refkey %s) acked at the broker with no outcome durable: ledger %s, no copy enqueued since its delivery, never processed", a.Message, a.RefKey, state)
		}
	}
	for _, e := range v.ChannelErrors {
		bad(InvNoChannelError, "the broker closed a channel of the worker: %s", e)
	}
	return out
}

// AckFact is one delivery an ack settled at the broker, and what was
// durable at that moment (InvAckAfterOutcome).
type AckFact struct {
	Message, RefKey string
	// State is the refkey's ledger state then ("" no entry); Copied: the
	// worker enqueued a copy of the message since the delivery;
	// Processed: the vendor had processed the refkey.
	State             string
	Copied, Processed bool
}

func source(e ledger.Entry) string {
	if e.Resolution == nil {
		return "the attempt's own outcome"
	}
	return "settled by " + e.Resolution.SourceOf()
}

// CheckQuiescent judges where every message ended, once faults stopped
// and every TTL, report and horizon passed.
func CheckQuiescent(v View) []Violation {
	var out []Violation
	bad := func(inv, format string, args ...any) {
		out = append(out, Violation{Invariant: inv, Detail: fmt.Sprintf(format, args...), Step: -1})
	}
	if v.Complete {
		for _, e := range v.Ledger {
			if e.State == outcome.Unknown || e.State == ledger.Attempting {
				bad(InvSettled, "ledger still holds %s %s after the horizon, with a vendor whose reports are complete", e.RefKey, e.State)
			}
		}
	}
	places := map[string][]Copy{}
	for _, c := range v.Copies {
		places[c.Message] = append(places[c.Message], c)
	}
	for _, id := range sortedKeys(v.Messages) {
		m := v.Messages[id]
		copies := places[id]
		t := v.Truth[m.RefKey]
		processed := t != nil && slices.ContainsFunc(t.Processed, func(p Processing) bool { return p.BodyHash == m.identity() })
		// Some copies sit beside a message's place: one in the unknown
		// queue of a refkey in doubt (a duplicate that came while an
		// outcome was unrecorded); one dead-lettered with its attempts
		// exhausted (copies of one message share the refkey's attempts:
		// a copy routed while the original was requeued, after a crash or
		// a lost channel, or a producer's duplicate, can run out while
		// another copy is sent); one of a sent message dead-lettered over
		// the quorum delivery limit (its original redelivered after the
		// send), or of one whose copy waits in the unknown queue (its
		// original was requeued after the copy was routed, by crashes or
		// lost sessions, until the limit dead-lettered it: the copy in
		// doubt is the message's place and is settled like any UNKNOWN).
		// None breaks never twice or never lost; each is the place only
		// when there is no other.
		doubt := len(v.Doubt[m.RefKey]) > 0
		exhausted := func(c Copy) bool { return c.Outcome == string(outcome.NotSent) && c.Attempt >= v.MaxAttempts }
		waitsInUnknown := doubt && slices.ContainsFunc(copies, func(c Copy) bool { return c.Queue == v.Names.Unknown })
		residue := func(c Copy) bool {
			return c.Queue == v.Names.Dead && (exhausted(c) || (processed || waitsInUnknown) && c.DeathReason == "delivery_limit")
		}
		var qs []string
		inUnknown, inDead := false, false
		for _, c := range copies {
			switch {
			case doubt && c.Queue == v.Names.Unknown:
				inUnknown = true
			case residue(c):
				inDead = true
			case !slices.Contains(qs, c.Queue):
				qs = append(qs, c.Queue)
			}
		}
		switch {
		case len(qs) > 0:
		case inUnknown:
			qs = []string{v.Names.Unknown}
		case inDead:
			qs = []string{v.Names.Dead}
		}
		switch {
		case len(qs) > 1:
			bad(InvOnePlace, "message %s has copies in %s", id, strings.Join(qs, " and "))
		case len(qs) == 0:
			if !processed {
				bad(InvOnePlace, "message %s (refkey %s) lost: no copy in any queue, and the vendor never processed it", id, m.RefKey)
			}
		case m.Invalid:
			if qs[0] != v.Names.Dead {
				bad(InvOnePlace, "invalid message %s ended in %s, not %s", id, qs[0], v.Names.Dead)
			}
		case qs[0] == v.Names.Main || qs[0] == v.Names.Retry || qs[0] == v.Names.Held:
			bad(InvOnePlace, "message %s still waits in %s at quiescence", id, qs[0])
		case qs[0] == v.Names.Dead:
			if processed {
				if slices.ContainsFunc(copies, func(c Copy) bool { return c.Queue == v.Names.Dead && !residue(c) }) {
					bad(InvOnePlace, "message %s dead-lettered, but the vendor processed it", id)
				}
				break
			}
			for _, c := range copies {
				if c.Queue != v.Names.Dead {
					continue
				}
				if c.Outcome != string(outcome.Invalid) && !exhausted(c) {
					bad(InvOnePlace, "message %s dead-lettered unsent: never processed, not INVALID, %d of %d attempts (outcome header %q)",
						id, c.Attempt, v.MaxAttempts, c.Outcome)
					break
				}
			}
		case qs[0] == v.Names.Failed:
			refused := t != nil && (slices.Contains(t.Rejected, m.identity()) || processed && t.ReportFailed)
			if !refused {
				bad(InvOnePlace, "message %s in %s, but the vendor neither refused it nor reported it failed", id, qs[0])
			}
		case qs[0] == v.Names.Unknown:
			if !doubt {
				bad(InvOnePlace, "message %s in %s, but no attempt of it was in doubt", id, qs[0])
			}
			if v.Complete {
				bad(InvSettled, "message %s still in %s after the horizon, with a vendor whose reports are complete", id, qs[0])
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
