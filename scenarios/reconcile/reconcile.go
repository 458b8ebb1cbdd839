package reconcile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// PlaceAcked is the Report.ByPlace key of messages the worker acked
// (records.Record.Queue == ""); other keys are queue names.
const PlaceAcked = "acked"

// PlaceSettled is the place of a message whose last record is UNKNOWN
// and whose ledger entry was settled afterwards (a delivery report, a
// pull or an operator, docs/outcomes.md#delivery-reports): its copy in the
// unknown queue was acked away, and it ends as the ledger says.
const PlaceSettled = "settled"

// Rule names carried by Violation.Rule.
const (
	// RuleLost: a published message is acked nowhere and in no queue, or
	// it is dead-lettered unsent (Report.DeadLetteredUnsent; its detail
	// starts "dead-lettered unsent:").
	RuleLost = "lost"
	// RuleMultiplePlaces: a message ends in more places than it was
	// published (acked and queued, or in two queues). Suppressed DUPLICATE
	// acks are never counted as a place.
	RuleMultiplePlaces = "multiple-places"
	// RuleInvalid: an invalid message is not in the dead-letter queue as
	// INVALID with a reason, or a valid one was dead-lettered as INVALID.
	RuleInvalid = "invalid"
	// RuleRoute: a record or a queued message sits in a queue its outcome
	// does not go to (outcome table, docs/outcomes.md#outcome-table).
	RuleRoute = "route"
	// RuleUnpublished: a refkey or message nobody published shows up in the
	// records, a queue or the vendor's journal.
	RuleUnpublished = "unpublished"
	// RuleDuplicate: a refkey reached the vendor more than once without a
	// 4xx answer (docs/vendor-api.md#no-de-duplication: the vendor does not
	// de-duplicate on refkey).
	RuleDuplicate = "duplicate"
	// RuleSentNotInJournal: the worker says SENT, the vendor's journal has
	// no 2xx answer for the refkey.
	RuleSentNotInJournal = "sent-not-in-journal"
	// RuleNotSentInJournal: the worker says the refkey never left it
	// (NOT_SENT, OUTSIDE_SEND_WINDOW, INVALID) and nothing says it could
	// have, yet the vendor's journal has it.
	RuleNotSentInJournal = "not-sent-in-journal"
	// RuleLedger: the ledger's state disagrees with the worker's last
	// record for the refkey.
	RuleLedger = "ledger"
	// RuleAttempts: the vendor received more requests for a refkey than the
	// ledger says were started (a request went out without being written
	// to the ledger first, or the transport replayed it by itself).
	RuleAttempts = "attempts"
)

// Check names listed in Report.Checks, each with the inputs it needs.
const (
	CheckPlaces  = "places"  // Published, Records, Queues: lost, multiple-places, invalid, unpublished
	CheckRoute   = "route"   // Records (and Queues) with Names: route
	CheckJournal = "journal" // Published, Journal (+ Records/Ledger): duplicate, sent/not-sent, unpublished
	CheckLedger  = "ledger"  // Ledger with Records (and Journal): ledger, attempts
)

// Violation is one broken invariant.
type Violation struct {
	RefKey    string `json:"refkey"`               // "" for a message without a refkey
	MessageID string `json:"message_id,omitempty"` // set when the message is known by its id
	Rule      string `json:"rule"`                 // one of the Rule* names
	Detail    string `json:"detail"`               // human-readable evidence
}

// Report is the verdict of Reconcile. Its JSON keys are stable: bench
// results embed it.
type Report struct {
	// OK is true when at least one check ran and no invariant of the
	// checks that ran is broken.
	OK bool `json:"ok"`
	// Checks lists the checks that ran (Check* names); the others lacked
	// input.
	Checks []string `json:"checks"`
	// Published is the number of published messages; PublishedInvalid of
	// them were invalid on purpose; RefKeys is the number of distinct
	// published refkeys.
	Published        int `json:"published"`
	PublishedInvalid int `json:"published_invalid"`
	RefKeys          int `json:"refkeys"`
	// ByOutcome counts where each published refkey (or invalid message)
	// ended, by outcome: the worker's outcomes plus PENDING, LOST, DEAD.
	// Suppressed DUPLICATE acks are not counted here (see Suppressed).
	ByOutcome map[outcome.Outcome]int `json:"by_outcome"`
	// ByPlace counts the same places by where they are: PlaceAcked or a
	// queue name.
	ByPlace map[string]int `json:"by_place"`
	// Suppressed counts deliveries the worker acked as DUPLICATE without
	// sending (a redelivery or a re-publish of a refkey already handled).
	Suppressed int `json:"suppressed"`
	// Lost counts published refkeys (or invalid messages) found nowhere
	// or dead-lettered unsent; LostIDs names them: the refkey, or
	// "msgid:<id>" / "seq:<n>" for an invalid message without a refkey.
	Lost    int      `json:"lost"`
	LostIDs []string `json:"lost_ids"`
	// DeadLetteredUnsent counts those of Lost that sit in the dead-letter
	// queue without an INVALID outcome, with send attempts left and no
	// send that may have reached the vendor: the broker dead-lettered them
	// (a quorum queue's delivery limit) and nobody will send them
	// (docs/outcomes.md#dead-lettered-unsent). DeadLetteredUnsentIDs names
	// them. They count as LOST in ByOutcome and in no ByPlace. Reports
	// written before the count existed lack both keys (read as 0: there,
	// such a message was counted DEAD or NOT_SENT, not lost).
	DeadLetteredUnsent    int      `json:"dead_lettered_unsent"`
	DeadLetteredUnsentIDs []string `json:"dead_lettered_unsent_ids"`
	// Duplicates counts refkeys that reached the vendor more than once
	// without a 4xx answer; DuplicateRefKeys names them.
	Duplicates       int      `json:"duplicates"`
	DuplicateRefKeys []string `json:"duplicate_refkeys"`
	// ClientReplays counts the Duplicates that reached the vendor more
	// times than the worker recorded calls to its client (at least one):
	// the HTTP client sent the request again on its own, e.g. a replay
	// after a connection failure; ClientReplayRefKeys names them.
	// ClientReplayChecked is true when the journal and the records were
	// both read (false in reports written before the count existed: not
	// measured, never 0).
	ClientReplays       int      `json:"client_replays"`
	ClientReplayRefKeys []string `json:"client_replay_refkeys,omitempty"`
	ClientReplayChecked bool     `json:"client_replay_checked"`
	// JournalSends is the number of POSTs to the send path in the vendor's
	// journal (every status), -1 when the journal was not read.
	JournalSends int `json:"journal_sends"`
	// Violations lists every broken invariant, published order first.
	Violations []Violation `json:"violations"`
}

// Reconcile checks, per published refkey (and per invalid message), the
// invariants of docs/outcomes.md#outcome-table against what the run left
// behind:
//
//   - places: every published refkey ends in exactly one place: acked
//     (SENT), or in the failed, retry, unknown, held, dead-letter (or, not
//     yet handled, main) queue. A DUPLICATE ack is a suppressed copy of a
//     refkey already handled and never counts as a place. A refkey
//     published n times may end in up to n places. Invalid messages must be
//     dead-lettered as INVALID with a reason. A valid refkey found only in
//     the dead-letter queue, not INVALID, with fewer than in.MaxAttempts
//     send attempts and nothing saying it reached the vendor is
//     dead-lettered unsent: lost (Report.DeadLetteredUnsent).
//   - journal: no refkey reached the vendor more than once without a 4xx
//     answer; every SENT refkey has a 2xx in the journal; a refkey that
//     never left the worker (NOT_SENT, OUTSIDE_SEND_WINDOW, INVALID) is not
//     in it.
//   - route: every record and queued message is where its outcome goes.
//   - ledger: the ledger agrees with the last record, and the vendor never
//     received more requests for a refkey than the ledger started.
//
// Checks whose input is nil are skipped (Report.Checks lists those that
// ran). Reconcile is pure: it reads nothing but in and never fails.
func Reconcile(in Input) Report {
	r := Report{
		Checks:                []string{},
		ByOutcome:             map[outcome.Outcome]int{},
		ByPlace:               map[string]int{},
		LostIDs:               []string{},
		DeadLetteredUnsentIDs: []string{},
		DuplicateRefKeys:      []string{},
		JournalSends:          -1,
		Violations:            []Violation{},
	}
	sendPath := cmp.Or(in.SendPath, DefaultSendPath)
	maxAttempts := cmp.Or(in.MaxAttempts, queues.DefaultMaxAttempts)
	haveNames := in.Names != (queues.Names{})
	roleOf := roles(in.Names)

	doPlaces := in.Published != nil && in.Records != nil && in.Queues != nil
	doRoute := in.Records != nil && haveNames
	doJournal := in.Published != nil && in.Journal != nil
	doLedger := in.Ledger != nil && in.Records != nil
	r.ClientReplayChecked = doJournal && in.Records != nil
	for _, c := range []struct {
		on   bool
		name string
	}{{doPlaces, CheckPlaces}, {doRoute, CheckRoute}, {doJournal, CheckJournal}, {doLedger, CheckLedger}} {
		if c.on {
			r.Checks = append(r.Checks, c.name)
		}
	}

	// Units, in publish order.
	var units []*unit
	byRef := map[string]*unit{}
	byMsgID := map[string]*unit{}
	for i, p := range in.Published {
		var u *unit
		switch {
		case p.RefKey != "":
			u = byRef[p.RefKey]
		case p.MessageID != "":
			u = byMsgID[p.MessageID]
		}
		if u == nil {
			u = &unit{refkey: p.RefKey, msgID: p.MessageID}
			switch {
			case p.RefKey != "":
				u.id = p.RefKey
				byRef[p.RefKey] = u
				r.RefKeys++
			case p.MessageID != "":
				u.id = "msgid:" + p.MessageID
			default:
				u.id = fmt.Sprintf("seq:%d", cmp.Or(p.Seq, i+1))
			}
			units = append(units, u)
		}
		if p.MessageID != "" {
			if _, ok := byMsgID[p.MessageID]; !ok {
				byMsgID[p.MessageID] = u
			}
		}
		u.pubs = append(u.pubs, p)
		if !p.Valid {
			u.invalid++
			r.PublishedInvalid++
		}
	}
	r.Published = len(in.Published)

	var tail []Violation // violations about things nobody published
	unpublished := map[string]string{}
	notePublished := func(refkey, msgID, what string) {
		key := refkey + "\x00" + msgID
		if _, seen := unpublished[key]; !seen {
			unpublished[key] = what
			tail = append(tail, Violation{RefKey: refkey, MessageID: msgID, Rule: RuleUnpublished, Detail: what})
		}
	}

	// Records, by seq. A requeued delivery (its re-publish failed, the
	// original went back to the main queue) ended in no place: skip it.
	recs := slices.DeleteFunc(slices.Clone(in.Records), func(r records.Record) bool { return r.Requeued })
	slices.SortStableFunc(recs, func(a, b records.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, rec := range recs {
		if rec.RefKey == "" {
			continue
		}
		u := byRef[rec.RefKey]
		if rec.Outcome == outcome.Invalid && (u == nil || u.invalid == 0) {
			// The refkey of an invalid body is a best guess (the worker
			// reads it from a body that failed validation); the driver
			// may know that message by its id only. Its dead-lettered
			// copy is matched by message id; the record proves nothing.
			continue
		}
		if u != nil {
			u.records = append(u.records, rec)
			if rec.Outcome == outcome.Duplicate && rec.Queue == "" {
				u.suppress++
				r.Suppressed++
			}
		} else if in.Published != nil && len(r.Checks) > 0 {
			notePublished(rec.RefKey, "", fmt.Sprintf("worker record seq %d (%s) for a refkey nobody published", rec.Seq, rec.Outcome))
		}
	}
	if doRoute {
		for _, rec := range recs {
			want, known := routeFor(in.Names, rec.Outcome)
			if !known {
				tail = append(tail, Violation{RefKey: rec.RefKey, Rule: RuleRoute,
					Detail: fmt.Sprintf("record seq %d: unknown outcome %q", rec.Seq, rec.Outcome)})
				continue
			}
			if !slices.Contains(want, rec.Queue) {
				tail = append(tail, Violation{RefKey: rec.RefKey, Rule: RuleRoute,
					Detail: fmt.Sprintf("record seq %d: %s went to %s, want %s", rec.Seq, rec.Outcome, queueLabel(rec.Queue), queueLabels(want))})
			}
		}
	}

	// Places.
	if doPlaces {
		for _, u := range units {
			for _, rec := range u.records {
				if rec.Queue != "" {
					continue
				}
				if rec.Outcome == outcome.Duplicate {
					continue // a suppressed copy, never a place
				}
				u.places = append(u.places, place{where: PlaceAcked, outcome: rec.Outcome, seq: rec.Seq})
			}
		}
		type orphan struct {
			m QueuedMessage
			p place
		}
		var orphans []orphan
		for _, q := range slices.Sorted(maps.Keys(in.Queues)) {
			role := roleOf[q]
			for _, m := range in.Queues[q] {
				h := outcome.Outcome(m.Header(queues.HeaderOutcome))
				p := place{where: q, role: role, outcome: placeOutcome(role, h), reason: m.Header(queues.HeaderReason),
					attempt: queues.Attempt(m.Headers), death: deathReason(m.Headers)}
				if haveNames && h != "" && !headerAllowed(role, h) {
					tail = append(tail, Violation{RefKey: m.RefKey, MessageID: m.MessageID, Rule: RuleRoute,
						Detail: fmt.Sprintf("message with %s %s sits in %s", queues.HeaderOutcome, h, q)})
				}
				var u *unit
				if m.MessageID != "" {
					u = byMsgID[m.MessageID]
				}
				if u == nil && m.RefKey != "" {
					u = byRef[m.RefKey]
				}
				if u == nil {
					orphans = append(orphans, orphan{m, p})
					continue
				}
				u.places = append(u.places, p)
			}
		}
		// Invalid messages whose id the worker did not keep: pair the
		// dead-lettered orphans with the unplaced invalid messages, in order.
		var rest []orphan
		next := 0
		for _, o := range orphans {
			if (o.p.role == roleDead && o.p.outcome != outcome.NotSent) || (!haveNames && o.p.outcome == outcome.Invalid) {
				for next < len(units) && !(units[next].allInvalid() && units[next].refkey == "" && len(units[next].places) == 0) {
					next++
				}
				if next < len(units) {
					o.p.byCount = true
					units[next].places = append(units[next].places, o.p)
					continue
				}
			}
			rest = append(rest, o)
		}
		for _, o := range rest {
			notePublished(o.m.RefKey, o.m.MessageID, fmt.Sprintf("%s in %s, published by nobody", o.p.outcome, o.p.where))
		}
	}

	// Journal, per refkey.
	if doJournal {
		r.JournalSends = 0
		byJournalRef := map[string][]JournalEntry{}
		for _, e := range in.Journal {
			if !strings.EqualFold(e.Method, "POST") || e.Path != sendPath {
				continue
			}
			r.JournalSends++
			byJournalRef[e.RefKey] = append(byJournalRef[e.RefKey], e)
		}
		for _, k := range slices.Sorted(maps.Keys(byJournalRef)) {
			if u := byRef[k]; u != nil {
				u.journal = byJournalRef[k]
				continue
			}
			detail := fmt.Sprintf("reached the vendor %d time(s) (%s), published by nobody", len(byJournalRef[k]), statuses(byJournalRef[k]))
			if k == "" {
				detail = fmt.Sprintf("%d send(s) without a refkey reached the vendor (%s)", len(byJournalRef[k]), statuses(byJournalRef[k]))
			}
			notePublished(k, "", detail)
		}
	}

	var ledgerOf map[string]ledger.Entry
	if in.Ledger != nil {
		ledgerOf = make(map[string]ledger.Entry, len(in.Ledger))
		for _, e := range in.Ledger {
			ledgerOf[e.RefKey] = e
		}
	}

	for _, u := range units {
		v := func(rule, format string, args ...any) {
			r.Violations = append(r.Violations, Violation{RefKey: u.refkey, MessageID: u.msgID, Rule: rule, Detail: fmt.Sprintf(format, args...)})
		}
		if le, ok := ledgerOf[u.refkey]; ok && doPlaces && len(u.places) == 0 && le.Resolution != nil && u.lastOutcome() == outcome.Unknown {
			u.places = append(u.places, place{where: PlaceSettled, outcome: le.State, reason: "settled by " + cmp.Or(le.Resolution.Source, "operator")})
		}
		if doPlaces {
			switch n := len(u.places); {
			case n == 0:
				r.Lost++
				r.LostIDs = append(r.LostIDs, u.id)
				r.ByOutcome[outcome.Lost]++
				where := "found nowhere"
				if len(u.records) > 0 && u.suppress == len(u.records) {
					// Its records are there, each a suppressed copy: it
					// was found, not as a place (issue 30).
					where = "found only as suppressed duplicate(s) (DUPLICATE, acked), with no record of its first handling and in no queue"
				}
				v(RuleLost, "published %d time(s), %s; %s", len(u.pubs), where, u.trace(in.Journal != nil))
			case n > len(u.pubs):
				v(RuleMultiplePlaces, "published %d time(s), found in %d places: %s", len(u.pubs), n, joinPlaces(u.places))
			}
			if why, unsent := u.deadUnsent(haveNames, maxAttempts, ledgerOf); unsent {
				// In the dead-letter queue, but never sent nor given up on
				// by the worker: lost, not a place.
				r.Lost++
				r.LostIDs = append(r.LostIDs, u.id)
				r.DeadLetteredUnsent++
				r.DeadLetteredUnsentIDs = append(r.DeadLetteredUnsentIDs, u.id)
				r.ByOutcome[outcome.Lost]++
				v(RuleLost, "dead-lettered unsent: %s; %s", why, u.trace(in.Journal != nil))
			} else {
				for _, p := range u.places {
					r.ByOutcome[p.outcome]++
					r.ByPlace[p.where]++
				}
			}
			u.checkInvalid(v, haveNames)
		}
		if doJournal && u.refkey != "" {
			u.checkJournal(v, &r, ledgerOf)
		}
		if doLedger && u.refkey != "" {
			u.checkLedger(v, ledgerOf, in.Journal != nil)
		}
	}
	r.Violations = append(r.Violations, tail...)
	r.OK = len(r.Violations) == 0 && len(r.Checks) > 0
	return r
}
