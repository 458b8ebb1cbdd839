package reconcile

import (
	"slices"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// reconcileCase is one case of TestReconcile.
type reconcileCase struct {
	name       string
	in         func() Input
	wantRules  []string // sorted rules of the violations
	wantLost   []string
	wantDups   []string
	wantByOut  map[outcome.Outcome]int // checked when non-nil
	wantSupp   int
	wantChecks []string // checked when non-nil
}

// reconcileCases are TestReconcile's cases: a clean run, then one planted
// fault each.
func reconcileCases() []reconcileCase {
	return []reconcileCase{
		{
			name:       "clean run",
			in:         clean,
			wantByOut:  map[outcome.Outcome]int{outcome.Sent: 3},
			wantChecks: []string{CheckPlaces, CheckRoute, CheckJournal, CheckLedger},
		},
		{
			name: "lost message",
			in: func() Input {
				return without(clean(), "c")
			},
			wantRules: []string{RuleLost},
			wantLost:  []string{"c"},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.Lost: 1},
		},
		{
			name: "lost after its record says it went to the retry queue",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, rec(3, "c", outcome.NotSent, "n.retry"))
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 1))
				return in
			},
			wantRules: []string{RuleLost},
			wantLost:  []string{"c"},
		},
		{
			name: "refkey sent twice",
			in: func() Input {
				in := clean()
				in.Journal = append(in.Journal, sent("b", 200))
				return in
			},
			// The ledger started one attempt: the second request went out
			// without it (the transport's own replay, for example).
			wantRules: []string{RuleAttempts, RuleDuplicate},
			wantDups:  []string{"b"},
		},
		{
			name: "refkey sent twice, the ledger counted both attempts",
			in: func() Input {
				in := clean()
				in.Journal = append(in.Journal, sent("b", 200))
				in.Ledger[1].Attempts = 2
				return in
			},
			wantRules: []string{RuleDuplicate},
			wantDups:  []string{"b"},
		},
		{
			name: "a 401 then a 200 is not a duplicate",
			in: func() Input {
				in := clean()
				in.Journal = append([]JournalEntry{sent("a", 401)}, in.Journal...)
				return in
			},
		},
		{
			name: "a 502 from the proxy then a resend is a duplicate",
			in: func() Input {
				in := clean()
				in.Journal = append([]JournalEntry{sent("a", 502)}, in.Journal...)
				in.Ledger[0].Attempts = 2
				return in
			},
			wantRules: []string{RuleDuplicate},
			wantDups:  []string{"a"},
		},
		{
			name: "SENT refkey missing from the journal",
			in: func() Input {
				in := clean()
				in.Journal = slices.DeleteFunc(in.Journal, func(e JournalEntry) bool { return e.RefKey == "b" })
				return in
			},
			wantRules: []string{RuleSentNotInJournal},
		},
		{
			name: "SENT refkey answered only with a 4xx",
			in: func() Input {
				in := clean()
				in.Journal[2].Status = 400
				return in
			},
			wantRules: []string{RuleSentNotInJournal},
		},
		{
			name: "NOT_SENT refkey present in the journal",
			in: func() Input {
				in := without(clean(), "b")
				in.Records = append(in.Records, rec(2, "b", outcome.NotSent, "n.retry"))
				in.Ledger = append(in.Ledger, entry("b", outcome.NotSent, 1))
				in.Queues["n.retry"] = []QueuedMessage{queued("n.retry", "b", "m-b", outcome.NotSent, "dial tcp: connection refused")}
				in.Journal = append(in.Journal, sent("b", 200))
				return in
			},
			wantRules: []string{RuleNotSentInJournal},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.NotSent: 1},
		},
		{
			name: "held ad in the journal",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, rec(3, "c", outcome.OutsideSendWindow, "n.held"))
				in.Queues["n.held"] = []QueuedMessage{queued("n.held", "c", "m-c", outcome.OutsideSendWindow, "outside 08:00-20:50")}
				in.Journal = append(in.Journal, sent("c", 200))
				return in
			},
			// The window is checked before the ledger, so it has no entry
			// for c: the request went out without an attempt too.
			wantRules: []string{RuleAttempts, RuleNotSentInJournal},
		},
		{
			name: "NOT_SENT, retried, then SENT once",
			in: func() Input {
				in := without(clean(), "b")
				in.Records = append(in.Records, rec(2, "b", outcome.NotSent, "n.retry"), rec(4, "b", outcome.Sent, ""))
				in.Ledger = append(in.Ledger, entry("b", outcome.Sent, 2))
				in.Journal = append(in.Journal, sent("b", 200))
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3},
		},
		{
			name: "message in two queues",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, rec(3, "c", outcome.Unknown, "n.unknown"))
				in.Ledger = append(in.Ledger, entry("c", outcome.Unknown, 1))
				in.Queues["n.unknown"] = []QueuedMessage{queued("n.unknown", "c", "m-c", outcome.Unknown, "read: connection reset by peer")}
				in.Queues["n.failed"] = []QueuedMessage{queued("n.failed", "c", "m-c", outcome.Rejected, "code 3001")}
				in.Journal = append(in.Journal, sent("c", 200))
				return in
			},
			wantRules: []string{RuleMultiplePlaces},
		},
		{
			name: "acked SENT and also in the unknown queue",
			in: func() Input {
				in := clean()
				in.Queues["n.unknown"] = []QueuedMessage{queued("n.unknown", "a", "m-a", outcome.Unknown, "timeout")}
				return in
			},
			wantRules: []string{RuleMultiplePlaces},
		},
		{
			name: "redelivered message suppressed as DUPLICATE is not a violation",
			in: func() Input {
				in := clean()
				r := rec(4, "a", outcome.Duplicate, "")
				r.Redelivered = true
				in.Records = append(in.Records, r)
				return in
			},
			wantSupp:  1,
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3},
		},
		{
			name: "UNKNOWN, ack lost, redelivery suppressed",
			in: func() Input {
				in := without(clean(), "c")
				r := rec(4, "c", outcome.Duplicate, "")
				r.Redelivered = true
				in.Records = append(in.Records, rec(3, "c", outcome.Unknown, "n.unknown"), r)
				in.Ledger = append(in.Ledger, entry("c", outcome.Unknown, 1))
				in.Queues["n.unknown"] = []QueuedMessage{queued("n.unknown", "c", "m-c", outcome.Unknown, "timeout")}
				in.Journal = append(in.Journal, sent("c", 200))
				return in
			},
			wantSupp:  1,
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.Unknown: 1},
		},
		{
			name: "crash mid-send: ledger Attempting, redelivery UNKNOWN",
			in: func() Input {
				in := without(clean(), "c")
				r := rec(3, "c", outcome.Unknown, "n.unknown")
				r.Redelivered = true
				in.Records = append(in.Records, r)
				in.Ledger = append(in.Ledger, entry("c", ledger.Attempting, 1))
				in.Queues["n.unknown"] = []QueuedMessage{queued("n.unknown", "c", "m-c", outcome.Unknown, "attempt without outcome")}
				in.Journal = append(in.Journal, sent("c", 200))
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.Unknown: 1},
		},
		{
			name: "only a DUPLICATE ack is lost",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, rec(3, "c", outcome.Duplicate, ""))
				return in
			},
			wantRules: []string{RuleLost},
			wantLost:  []string{"c"},
			wantSupp:  1,
		},
		{
			name: "refkey published twice: SENT then suppressed",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, pub(4, "a"))
				in.Records = append(in.Records, rec(4, "a", outcome.Duplicate, ""))
				return in
			},
			wantSupp:  1,
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3},
		},
		{
			name: "invalid messages dead-lettered",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"), invalidPub(5, "bad-2"))
				in.Records = append(in.Records, rec(4, "", outcome.Invalid, "n.dead"), rec(5, "", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{
					queued("n.dead", "", "bad-1", outcome.Invalid, "body is not JSON"),
					queued("n.dead", "", "bad-2", outcome.Invalid, "recipient: missing"),
				}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Invalid: 2},
		},
		{
			name: "invalid messages dead-lettered without their message id",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"), invalidPub(5, "bad-2"))
				in.Records = append(in.Records, rec(4, "", outcome.Invalid, "n.dead"), rec(5, "", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{
					queued("n.dead", "", "", outcome.Invalid, "body is not JSON"),
					queued("n.dead", "", "", outcome.Invalid, "recipient: missing"),
				}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Invalid: 2},
		},
		{
			name: "invalid message with a refkey dead-lettered",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, Published{Seq: 4, RefKey: "d", MessageID: "bad-d"})
				in.Records = append(in.Records, rec(4, "d", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "d", "", outcome.Invalid, "category: want info or ad")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Invalid: 1},
		},
		{
			name: "invalid body with a refkey the driver did not record",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"))
				in.Records = append(in.Records, rec(4, "half-valid", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "half-valid", "bad-1", outcome.Invalid, "recipient: missing")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Invalid: 1},
		},
		{
			name: "invalid body with an unrecorded refkey, dead-lettered without its id",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"))
				in.Records = append(in.Records, rec(4, "half-valid", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "half-valid", "", outcome.Invalid, "recipient: missing")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Invalid: 1},
		},
		{
			name: "more dead-lettered INVALID messages than published invalid ones",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"))
				in.Records = append(in.Records, rec(4, "", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{
					queued("n.dead", "", "", outcome.Invalid, "body is not JSON"),
					queued("n.dead", "", "", outcome.Invalid, "body is not JSON"),
				}
				return in
			},
			wantRules: []string{RuleUnpublished},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Invalid: 1},
		},
		{
			name: "invalid message dead-lettered without a reason",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"))
				in.Records = append(in.Records, rec(4, "", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "", "bad-1", outcome.Invalid, "")}
				return in
			},
			wantRules: []string{RuleInvalid},
		},
		{
			name: "invalid message acked",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"))
				in.Records = append(in.Records, rec(4, "", outcome.Invalid, ""))
				return in
			},
			wantRules: []string{RuleLost, RuleRoute},
			wantLost:  []string{"msgid:bad-1"},
		},
		{
			name: "invalid message in the failed queue",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"))
				in.Records = append(in.Records, rec(4, "", outcome.Invalid, "n.failed"))
				in.Queues["n.failed"] = []QueuedMessage{queued("n.failed", "", "bad-1", outcome.Invalid, "body is not JSON")}
				return in
			},
			wantRules: []string{RuleInvalid, RuleRoute, RuleRoute},
		},
		{
			name: "valid message dead-lettered as INVALID",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, rec(3, "c", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "c", "m-c", outcome.Invalid, "text: too long")}
				return in
			},
			wantRules: []string{RuleInvalid},
		},
		{
			name: "REJECTED routed to the unknown queue",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, rec(3, "c", outcome.Rejected, "n.unknown"))
				in.Ledger = append(in.Ledger, entry("c", outcome.Rejected, 1))
				in.Queues["n.unknown"] = []QueuedMessage{queued("n.unknown", "c", "m-c", "", "")}
				in.Journal = append(in.Journal, sent("c", 400))
				return in
			},
			wantRules: []string{RuleRoute},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.Unknown: 1},
		},
		{
			name: "NOT_SENT after the last attempt is dead-lettered",
			in: func() Input {
				in := without(clean(), "c")
				in.MaxAttempts = 2 // the worker's MAX_ATTEMPTS: exhausted at 2
				in.Records = append(in.Records, rec(3, "c", outcome.NotSent, "n.retry"), rec(4, "c", outcome.NotSent, "n.dead"))
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 2))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "c", "m-c", outcome.NotSent, "attempts exhausted")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.NotSent: 1},
		},
		{
			name: "message still in the main queue is pending, not lost",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, rec(3, "c", outcome.NotSent, "n.retry"))
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 1))
				in.Queues["n"] = []QueuedMessage{queued("n", "c", "m-c", outcome.NotSent, "dial: refused")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.Pending: 1},
		},
		{
			name: "ledger disagrees with the record",
			in: func() Input {
				in := clean()
				in.Ledger[2].State = outcome.Unknown
				return in
			},
			wantRules: []string{RuleLedger},
		},
		{
			name: "SENT with no ledger entry",
			in: func() Input {
				in := clean()
				in.Ledger = in.Ledger[:2]
				return in
			},
			wantRules: []string{RuleAttempts, RuleLedger},
		},
		{
			name: "refkey nobody published reached the vendor",
			in: func() Input {
				in := clean()
				in.Journal = append(in.Journal, sent("zzz", 200))
				return in
			},
			wantRules: []string{RuleUnpublished},
		},
		{
			name: "message nobody published in a queue",
			in: func() Input {
				in := clean()
				in.Queues["n.failed"] = []QueuedMessage{queued("n.failed", "old-run-7", "", outcome.Rejected, "code 3001")}
				return in
			},
			wantRules: []string{RuleUnpublished},
		},
		{
			name: "a requeued record is no place",
			in: func() Input {
				in := without(clean(), "c")
				// NOT_SENT, its copy to the retry queue not confirmed: the
				// original was requeued and sent on its redelivery.
				r := rec(3, "c", outcome.NotSent, "n.retry")
				r.Requeued = true
				in.Records = append(in.Records, r, rec(4, "c", outcome.Sent, ""))
				in.Ledger = append(in.Ledger, entry("c", outcome.Sent, 2))
				in.Journal = append(in.Journal, sent("c", 200))
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3},
		},
		{
			name: "unknown outcome in a record",
			in: func() Input {
				in := clean()
				in.Records[0].Outcome = "MAYBE"
				return in
			},
			// Acked with an outcome nobody knows: a route violation; it still
			// counts as its place.
			wantRules: []string{RuleRoute},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, "MAYBE": 1},
		},
		{
			name: "only the journal: the journal check alone runs",
			in: func() Input {
				in := clean()
				in.Records, in.Queues, in.Ledger, in.Names = nil, nil, nil, queues.Names{}
				in.Journal = append(in.Journal, sent("a", 200))
				return in
			},
			wantRules:  []string{RuleDuplicate},
			wantDups:   []string{"a"},
			wantByOut:  map[outcome.Outcome]int{},
			wantChecks: []string{CheckJournal},
		},
		{
			name: "nothing gathered but the published list",
			in: func() Input {
				return Input{Published: clean().Published}
			},
			wantByOut:  map[outcome.Outcome]int{},
			wantChecks: []string{},
		},
	}
}
