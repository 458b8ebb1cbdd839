package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

var (
	names = queues.NamesFor("notifications")
	noon  = time.Date(2026, 12, 1, 12, 0, 0, 0, seoul)
)

// cleanView is a history that breaks nothing: m1 sent once and acked, m2
// refused by the vendor and in the failed queue, m3 in doubt and in the
// unknown queue (a vendor without complete reports), m4 invalid and dead.
func cleanView() View {
	return View{
		Truth: map[string]*Truth{
			"m1": {RefKey: "m1", Processed: []Processing{{BodyHash: "m1|hi", PostAt: noon, At: noon, Ad: true}}},
			"m2": {RefKey: "m2", Rejected: []string{"m2|hi"}},
		},
		Ledger: []ledger.Entry{
			{RefKey: "m1", State: outcome.Sent, Attempts: 1},
			{RefKey: "m2", State: outcome.Rejected, Attempts: 1},
			{RefKey: "m3", State: outcome.Unknown, Attempts: 1},
		},
		Doubt: map[string][]string{"m3": {"the request was written and its answer lost"}},
		Messages: map[string]Message{
			"m1/b0": {ID: "m1/b0", RefKey: "m1", Text: "hi", Ad: true, Published: 1},
			"m2/b0": {ID: "m2/b0", RefKey: "m2", Text: "hi", Published: 1},
			"m3/b0": {ID: "m3/b0", RefKey: "m3", Text: "hi", Published: 1},
			"m4/b2": {ID: "m4/b2", RefKey: "m4", Invalid: true, Published: 1},
		},
		Names: names,
		Moves: []Move{{Who: "handler", Queue: names.Unknown, Message: "m3/b0", Outcome: "UNKNOWN"}},
		// Acked once durable: m1 SENT in the ledger, m2 and m3 with their
		// copies enqueued, m1 again while ATTEMPTING once processed (a
		// send whose Finish failed is acked on purpose).
		Acks: []AckFact{{Message: "m1/b0", RefKey: "m1", State: "SENT", Processed: true},
			{Message: "m2/b0", RefKey: "m2", State: "REJECTED", Copied: true},
			{Message: "m3/b0", RefKey: "m3", State: "UNKNOWN", Copied: true},
			{Message: "m1/b0", RefKey: "m1", State: "ATTEMPTING", Processed: true}},
		Copies: []Copy{
			{Queue: names.Failed, Message: "m2/b0", Outcome: "REJECTED", Code: "3018", Attempt: 1},
			{Queue: names.Unknown, Message: "m3/b0", Outcome: "UNKNOWN", Attempt: 1},
			{Queue: names.Dead, Message: "m4/b2", Outcome: "INVALID"},
		},
		MaxAttempts: 5,
	}
}

// TestCheckerPassesACleanHistory is the positive control: a history that
// keeps every promise, and the two kinds of copy allowed beside a
// message's place, break nothing.
func TestCheckerPassesACleanHistory(t *testing.T) {
	v := cleanView()
	if vs := append(CheckStep(v), CheckQuiescent(v)...); len(vs) > 0 {
		t.Fatalf("a clean history broke %v", vs)
	}
	// m1 was sent by one copy; another copy ran out of attempts; a
	// duplicate of m3 came while its outcome was unrecorded.
	v.Copies = append(v.Copies,
		Copy{Queue: names.Dead, Message: "m1/b0", Outcome: "NOT_SENT", Attempt: 5},
		Copy{Queue: names.Dead, Message: "m1/b0", DeathReason: "delivery_limit"},
		Copy{Queue: names.Unknown, Message: "m3/b0", Outcome: "UNKNOWN"})
	if vs := CheckQuiescent(v); len(vs) > 0 {
		t.Fatalf("the allowed side copies broke %v", vs)
	}
}

// TestCheckerCatchesPlantedFailures is the negative control of every
// invariant: each case plants one failure in the clean history, and the
// checker must name that invariant.
func TestCheckerCatchesPlantedFailures(t *testing.T) {
	cases := []struct {
		name, inv string
		plant     func(v *View)
	}{
		{"a refkey processed twice", InvAtMostOnce, func(v *View) {
			v.Truth["m1"].Processed = append(v.Truth["m1"].Processed, Processing{BodyHash: "m1|hi", PostAt: noon, At: noon})
		}},
		{"an ad POSTed at 20:50", InvSendWindow, func(v *View) {
			late := time.Date(2026, 12, 1, 20, 50, 0, 0, seoul)
			v.Truth["m1"].Processed[0].PostAt = late
		}},
		{"an ad POSTed at 07:59", InvSendWindow, func(v *View) {
			v.Truth["m1"].Processed[0].PostAt = time.Date(2026, 12, 1, 7, 59, 59, 0, seoul)
		}},
		{"SENT in the ledger, never processed", InvLedgerAgrees, func(v *View) {
			v.Ledger = append(v.Ledger, ledger.Entry{RefKey: "m9", State: outcome.Sent})
		}},
		{"NOT_SENT in the ledger, processed (a horizon settlement)", InvLedgerAgrees, func(v *View) {
			v.Ledger[0].State = outcome.NotSent
			v.Ledger[0].Resolution = &ledger.Resolution{Source: ledger.SourceHorizon, As: outcome.NotSent}
		}},
		{"REJECTED in the ledger, never refused", InvLedgerAgrees, func(v *View) {
			v.Truth["m2"].Rejected = nil
		}},
		{"ATTEMPTING with nothing in doubt", InvLedgerAgrees, func(v *View) {
			v.Ledger = append(v.Ledger, ledger.Entry{RefKey: "m9", State: ledger.Attempting, Attempts: 1})
		}},
		{"routed to unknown with nothing in doubt", InvUnknownNeedsDoubt, func(v *View) {
			v.Doubt = map[string][]string{}
			v.Ledger = v.Ledger[:2]
		}},
		{"session stopped without a ledger failure", InvLedgerStopNeedsFault, func(v *View) {
			v.LedgerStop = true
		}},
		{"a delivery taken during the ledger outage the loop stopped for", InvWaitForLedger, func(v *View) {
			v.TookWhileLedgerDown = []string{"m1/b0 taken at 12:00:01.000"}
		}},
		{"a forged report accepted", InvForgedRefused, func(v *View) {
			v.ForgedAccepted = []string{"m1"}
		}},
		{"acked before its handler began (no entry, no copy)", InvAckAfterOutcome, func(v *View) {
			v.Acks = append(v.Acks, AckFact{Message: "m5/b0", RefKey: "m5"})
		}},
		{"acked while ATTEMPTING, never processed", InvAckAfterOutcome, func(v *View) {
			v.Acks = append(v.Acks, AckFact{Message: "m5/b0", RefKey: "m5", State: "ATTEMPTING"})
		}},
		{"a channel closed by a channel error", InvNoChannelError, func(v *View) {
			v.ChannelErrors = []string{"ack of tag 2: 406 PRECONDITION_FAILED - unknown delivery tag 2"}
		}},
		{"a message lost", InvOnePlace, func(v *View) {
			v.Messages["m5/b0"] = Message{ID: "m5/b0", RefKey: "m5", Text: "hi", Published: 1}
		}},
		{"a message dead-lettered unsent", InvOnePlace, func(v *View) {
			v.Messages["m5/b0"] = Message{ID: "m5/b0", RefKey: "m5", Text: "hi", Published: 1}
			v.Copies = append(v.Copies, Copy{Queue: names.Dead, Message: "m5/b0", Attempt: 1, Outcome: "NOT_SENT"})
		}},
		{"a message dead-lettered over the delivery limit, never sent", InvOnePlace, func(v *View) {
			v.Messages["m5/b0"] = Message{ID: "m5/b0", RefKey: "m5", Text: "hi", Published: 1}
			v.Copies = append(v.Copies, Copy{Queue: names.Dead, Message: "m5/b0", DeathReason: "delivery_limit"})
		}},
		{"a sent message dead-lettered", InvOnePlace, func(v *View) {
			v.Copies = append(v.Copies, Copy{Queue: names.Dead, Message: "m1/b0", Outcome: "INVALID"})
		}},
		{"copies in two places", InvOnePlace, func(v *View) {
			v.Copies = append(v.Copies, Copy{Queue: names.Retry, Message: "m2/b0", Outcome: "NOT_SENT", Attempt: 1})
		}},
		{"a message still in the main queue", InvOnePlace, func(v *View) {
			v.Copies = append(v.Copies, Copy{Queue: names.Main, Message: "m1/b0"})
		}},
		{"a message in failed, never refused", InvOnePlace, func(v *View) {
			v.Copies = append(v.Copies, Copy{Queue: names.Failed, Message: "m1/b0", Outcome: "REJECTED"})
		}},
		{"an invalid message in failed", InvOnePlace, func(v *View) {
			v.Copies[2].Queue = names.Failed
		}},
		{"a message in unknown, nothing in doubt", InvOnePlace, func(v *View) {
			v.Copies = append(v.Copies, Copy{Queue: names.Unknown, Message: "m1/b0", Outcome: "UNKNOWN"})
		}},
		{"in doubt after the horizon of a complete vendor", InvSettled, func(v *View) {
			v.Complete = true
		}},
		{"ATTEMPTING after the horizon of a complete vendor", InvSettled, func(v *View) {
			v.Complete = true
			v.Ledger[2].State = ledger.Attempting
			v.Copies = v.Copies[:1]
			delete(v.Messages, "m3/b0")
			v.Moves = nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := cleanView()
			c.plant(&v)
			vs := append(CheckStep(v), CheckQuiescent(v)...)
			for _, got := range vs {
				if got.Invariant == c.inv {
					return
				}
			}
			t.Errorf("planted %q: checker said %v; want %s", c.name, vs, c.inv)
		})
	}
}

// TestViolationString names the step or quiescence.
func TestViolationString(t *testing.T) {
	if s := (Violation{Invariant: InvAtMostOnce, Detail: "x", Step: 3}).String(); !strings.Contains(s, "after step 3") {
		t.Errorf("%q", s)
	}
	if s := (Violation{Invariant: InvSettled, Detail: "x", Step: -1}).String(); !strings.Contains(s, "at quiescence") {
		t.Errorf("%q", s)
	}
}
