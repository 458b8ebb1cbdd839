package reconcile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// unit is what must end in exactly one place: a published refkey (however
// often it was published) or an invalid message without a refkey.
type unit struct {
	id       string // refkey, "msgid:<id>" or "seq:<n>"
	refkey   string
	msgID    string
	pubs     []Published
	invalid  int // publications with Valid == false
	records  []records.Record
	places   []place
	suppress int
	journal  []JournalEntry
}

func (u *unit) allInvalid() bool { return u.invalid == len(u.pubs) }

// clientCalls counts the unit's records that are a call to the worker's
// HTTP client (outcome.SendClasses: SENT, REJECTED, NOT_SENT, UNKNOWN),
// less those marked no_call (an UNKNOWN decided from the ledger without a
// call): one record per call, docs/worker-contract.md.
func (u *unit) clientCalls() int {
	n := 0
	for _, rec := range u.records {
		if slices.Contains(outcome.SendClasses, rec.Outcome) && !rec.NoCall {
			n++
		}
	}
	return n
}

type place struct {
	where   string // PlaceAcked or a queue name
	role    string // role of the queue in Names ("" when unknown)
	outcome outcome.Outcome
	reason  string
	seq     int    // record seq for an acked place
	byCount bool   // matched to an invalid message by counting, not by id
	attempt int    // queues.HeaderAttempt of a queued copy
	death   string // the broker's dead-letter reason of a queued copy (deathReason), "" when none
}

func (p place) String() string {
	if p.where == PlaceAcked {
		return fmt.Sprintf("acked %s (record seq %d)", p.outcome, p.seq)
	}
	return fmt.Sprintf("%s in %s", p.outcome, p.where)
}

// checkInvalid: invalid messages are dead-lettered as INVALID with a
// reason; valid ones never are.
func (u *unit) checkInvalid(v func(rule, format string, args ...any), haveNames bool) {
	if u.invalid == 0 {
		for _, p := range u.places {
			if p.outcome == outcome.Invalid && len(u.pubs) > 1 && strings.HasPrefix(p.reason, worker.CodeRefKeyConflict) {
				// A refkey reused for another body: the worker refuses
				// the second notification (docs/outcomes.md).
				continue
			}
			if p.outcome == outcome.Invalid {
				v(RuleInvalid, "published valid, dead-lettered as INVALID: %s", cmp.Or(p.reason, "(no reason)"))
			}
		}
		return
	}
	if !u.allInvalid() {
		return // a refkey published both ways: the valid copy decides
	}
	for _, p := range u.places {
		switch {
		case p.where == PlaceAcked:
			v(RuleInvalid, "invalid message acked as %s (record seq %d), not dead-lettered", p.outcome, p.seq)
		case haveNames && p.role != roleDead:
			v(RuleInvalid, "invalid message in %s, not the dead-letter queue", p.where)
		case p.outcome != outcome.Invalid && p.outcome != outcome.Dead:
			v(RuleInvalid, "invalid message dead-lettered with outcome %s", p.outcome)
		case p.reason == "":
			v(RuleInvalid, "invalid message dead-lettered without the %s header", queues.HeaderReason)
		}
	}
}

func (u *unit) checkJournal(v func(rule, format string, args ...any), r *Report, ledgerOf map[string]ledger.Entry) {
	reached, ok2xx := 0, false
	for _, e := range u.journal {
		if !is4xx(e.Status) {
			reached++
		}
		ok2xx = ok2xx || is2xx(e.Status)
	}
	if reached > 1 {
		r.Duplicates++
		r.DuplicateRefKeys = append(r.DuplicateRefKeys, u.refkey)
		if calls := u.clientCalls(); u.records != nil && calls > 0 && reached > calls {
			// The worker called its client fewer times than the vendor
			// was reached: the client (or its transport) sent it again
			// on its own (docs/worker-contract.md#the-audit).
			r.ClientReplays++
			r.ClientReplayRefKeys = append(r.ClientReplayRefKeys, u.refkey)
		}
		v(RuleDuplicate, "reached the vendor %d times without a 4xx answer (%s)", reached, statuses(u.journal))
	}
	le, inLedger := ledgerOf[u.refkey]
	said := map[outcome.Outcome]bool{}
	for _, rec := range u.records {
		said[rec.Outcome] = true
	}
	for _, p := range u.places {
		said[p.outcome] = true
	}
	if u.allInvalid() {
		said[outcome.Invalid] = true
	}
	if inLedger {
		said[outcome.Outcome(le.State)] = true
	}
	if said[outcome.Sent] && !ok2xx {
		v(RuleSentNotInJournal, "worker says SENT, the vendor's journal has %s", journalSummary(u.journal))
	}
	if len(u.journal) > 0 && !slices.ContainsFunc(slices.Collect(maps.Keys(said)), reaches) {
		for _, o := range []outcome.Outcome{outcome.NotSent, outcome.OutsideSendWindow, outcome.Invalid} {
			if said[o] {
				v(RuleNotSentInJournal, "worker says %s and nothing says it left, the vendor's journal has %s", o, journalSummary(u.journal))
				break
			}
		}
	}
}

// lastOutcome is the outcome of u's last record that has a final or
// UNKNOWN outcome, "" when none.
func (u *unit) lastOutcome() outcome.Outcome {
	var o outcome.Outcome
	for _, r := range u.records {
		switch r.Outcome {
		case outcome.Sent, outcome.Rejected, outcome.NotSent, outcome.Unknown:
			o = r.Outcome
		}
	}
	return o
}

func (u *unit) checkLedger(v func(rule, format string, args ...any), ledgerOf map[string]ledger.Entry, haveJournal bool) {
	le, inLedger := ledgerOf[u.refkey]
	var last *records.Record
	for i := range u.records {
		switch u.records[i].Outcome {
		case outcome.Sent, outcome.Rejected, outcome.NotSent, outcome.Unknown:
			last = &u.records[i]
		}
	}
	switch {
	case last == nil:
	case !inLedger:
		v(RuleLedger, "record seq %d says %s, the ledger has no entry", last.Seq, last.Outcome)
	case le.State == ledger.Attempting && last.Outcome == outcome.Unknown:
		// An attempt without an outcome is UNKNOWN: both say the same.
	case last.Outcome == outcome.Unknown && le.Resolution != nil:
		// Settled after the record (PlaceSettled): the ledger has the end.
	case outcome.Outcome(le.State) != last.Outcome:
		v(RuleLedger, "record seq %d says %s, the ledger says %s", last.Seq, last.Outcome, le.State)
	}
	// A 4xx answer (a 401 before the token refetch, a rejection) may be
	// followed by a resend inside one attempt: count only the others.
	reached := 0
	for _, e := range u.journal {
		if !is4xx(e.Status) {
			reached++
		}
	}
	if haveJournal && reached > 0 {
		switch {
		case !inLedger:
			v(RuleAttempts, "reached the vendor %d time(s) without a 4xx, the ledger has no attempt", reached)
		case reached > le.Attempts:
			v(RuleAttempts, "reached the vendor %d time(s) without a 4xx, the ledger started %d attempt(s)", reached, le.Attempts)
		}
	}
}

// trace says what is known of a unit, for the detail of a lost message.
func (u *unit) trace(haveJournal bool) string {
	var parts []string
	if len(u.records) == 0 {
		parts = append(parts, "no worker record")
	} else {
		var rs []string
		for _, rec := range u.records {
			rs = append(rs, fmt.Sprintf("seq %d %s -> %s", rec.Seq, rec.Outcome, queueLabel(rec.Queue)))
		}
		parts = append(parts, "records: "+strings.Join(rs, ", "))
	}
	if u.suppress > 0 {
		parts = append(parts, fmt.Sprintf("%d suppressed duplicate(s)", u.suppress))
	}
	if haveJournal && u.refkey != "" {
		parts = append(parts, "journal: "+journalSummary(u.journal))
	}
	return strings.Join(parts, "; ")
}

func queueLabel(q string) string {
	if q == "" {
		return PlaceAcked
	}
	return q
}

func queueLabels(qs []string) string {
	var out []string
	for _, q := range qs {
		out = append(out, queueLabel(q))
	}
	return strings.Join(out, " or ")
}

func joinPlaces(ps []place) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, ", ")
}

func statuses(es []JournalEntry) string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprint(e.Status))
	}
	return "statuses " + strings.Join(out, ", ")
}

func journalSummary(es []JournalEntry) string {
	if len(es) == 0 {
		return "no request"
	}
	return fmt.Sprintf("%d request(s), %s", len(es), statuses(es))
}
