package reconcile

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// deliveryLimited is refkey's copy as RabbitMQ dead-letters it from the
// main quorum queue n when its x-delivery-limit is reached: the headers it
// had (outcome and attempt when a retry brought it back, none for a first
// publish) plus the broker's x-death and x-first-death-reason.
func deliveryLimited(refkey string, o outcome.Outcome, attempt int) QueuedMessage {
	m := queued("n.dead", refkey, "m-"+refkey, o, "")
	if attempt > 0 {
		m.Headers[queues.HeaderAttempt] = int32(attempt)
	}
	m.Headers["x-death"] = []any{amqp.Table{"reason": "delivery_limit", "queue": "n", "count": int64(1)}}
	m.Headers["x-first-death-reason"] = "delivery_limit"
	return m
}

// withAttempt is rec with its Attempt set.
func withAttempt(r records.Record, attempt int) records.Record {
	r.Attempt = attempt
	return r
}

// deadUnsentCase is one case of TestDeadLetteredUnsent.
type deadUnsentCase struct {
	name       string
	in         func() Input
	wantRules  []string
	wantUnsent []string // DeadLetteredUnsentIDs; also Lost
	wantByOut  map[outcome.Outcome]int
	wantDetail string // in the lost violation's detail
}

// deadUnsentCases: a message that sits in the dead-letter queue but was
// never attempted to the end is lost (the first cases, planted); the
// worker's own dead letters (INVALID, REFKEY_CONFLICT, NOT_SENT with its
// attempts exhausted) and a copy that may have reached the vendor are not.
func deadUnsentCases() []deadUnsentCase {
	return []deadUnsentCase{
		{
			name: "first delivery dead-lettered by the delivery limit, never sent",
			in: func() Input {
				// The ledger did not answer: each delivery was requeued
				// (no record) until the quorum queue's limit.
				in := without(clean(), "c")
				in.Queues["n.dead"] = []QueuedMessage{deliveryLimited("c", "", 0)}
				return in
			},
			wantRules:  []string{RuleLost},
			wantUnsent: []string{"c"},
			wantByOut:  map[outcome.Outcome]int{outcome.Sent: 2, outcome.Lost: 1},
			wantDetail: "dead-lettered unsent: in n.dead (x-death reason delivery_limit) after 0 of 5 send attempts",
		},
		{
			name: "NOT_SENT retry copy dead-lettered by the delivery limit with attempts left",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, withAttempt(rec(3, "c", outcome.NotSent, "n.retry"), 1))
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 1))
				in.Queues["n.dead"] = []QueuedMessage{deliveryLimited("c", outcome.NotSent, 1)}
				return in
			},
			wantRules:  []string{RuleLost},
			wantUnsent: []string{"c"},
			wantByOut:  map[outcome.Outcome]int{outcome.Sent: 2, outcome.Lost: 1},
			wantDetail: "after 1 of 5 send attempts",
		},
		{
			name: "attempts left under the run's own max attempts",
			in: func() Input {
				in := without(clean(), "c")
				in.MaxAttempts = 20
				in.Records = append(in.Records, withAttempt(rec(3, "c", outcome.NotSent, "n.retry"), 5))
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 5))
				in.Queues["n.dead"] = []QueuedMessage{deliveryLimited("c", outcome.NotSent, 5)}
				return in
			},
			wantRules:  []string{RuleLost},
			wantUnsent: []string{"c"},
			wantByOut:  map[outcome.Outcome]int{outcome.Sent: 2, outcome.Lost: 1},
			wantDetail: "after 5 of 20 send attempts",
		},
		{
			name: "NOT_SENT with its attempts exhausted is a dead letter, not lost",
			in: func() Input {
				in := without(clean(), "c")
				in.Records = append(in.Records, withAttempt(rec(3, "c", outcome.NotSent, "n.retry"), 4), withAttempt(rec(4, "c", outcome.NotSent, "n.dead"), 5))
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 5))
				m := queued("n.dead", "c", "m-c", outcome.NotSent, "definitely not sent; attempts exhausted (5 of 5)")
				m.Headers[queues.HeaderAttempt] = int32(5)
				in.Queues["n.dead"] = []QueuedMessage{m}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.NotSent: 1},
		},
		{
			name: "exhausted under a lower max attempts",
			in: func() Input {
				in := without(clean(), "c")
				in.MaxAttempts = 2
				in.Records = append(in.Records, withAttempt(rec(3, "c", outcome.NotSent, "n.dead"), 2))
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 2))
				m := queued("n.dead", "c", "m-c", outcome.NotSent, "definitely not sent; attempts exhausted (2 of 2)")
				m.Headers[queues.HeaderAttempt] = int32(2)
				in.Queues["n.dead"] = []QueuedMessage{m}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.NotSent: 1},
		},
		{
			name: "INVALID message in the dead-letter queue",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, invalidPub(4, "bad-1"))
				in.Records = append(in.Records, rec(4, "", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "", "bad-1", outcome.Invalid, "recipient: missing")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Invalid: 1},
		},
		{
			name: "a reused refkey dead-lettered as REFKEY_CONFLICT",
			in: func() Input {
				in := clean()
				p := pub(4, "c")
				p.MessageID = "m-c-2"
				in.Published = append(in.Published, p)
				in.Records = append(in.Records, rec(4, "c", outcome.Invalid, "n.dead"))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "c", "m-c-2", outcome.Invalid, worker.CodeRefKeyConflict+": another body")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 1 + 2, outcome.Invalid: 1},
		},
		{
			name: "dead-lettered by the delivery limit after a send that may have reached the vendor",
			in: func() Input {
				// A worker killed mid-send on every delivery: the ledger
				// has the attempt, the vendor a 200. Not unsent.
				in := without(clean(), "c")
				in.Ledger = append(in.Ledger, entry("c", ledger.Attempting, 1))
				in.Journal = append(in.Journal, sent("c", 200))
				in.Queues["n.dead"] = []QueuedMessage{deliveryLimited("c", "", 0)}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.Dead: 1},
		},
		{
			name: "a second copy dead-lettered after the first was SENT",
			in: func() Input {
				in := clean()
				in.Published = append(in.Published, pub(4, "c"))
				in.Queues["n.dead"] = []QueuedMessage{deliveryLimited("c", "", 0)}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 3, outcome.Dead: 1},
		},
		{
			name: "the worker gave up on a copy the broker refused (REPUBLISH_FAILED)",
			in: func() Input {
				in := without(clean(), "c")
				r := withAttempt(rec(3, "c", outcome.NotSent, "n.dead"), 1)
				r.Code = worker.CodeRepublishFailed
				in.Records = append(in.Records, r)
				in.Ledger = append(in.Ledger, entry("c", outcome.NotSent, 1))
				in.Queues["n.dead"] = []QueuedMessage{queued("n.dead", "c", "m-c", "", "")}
				return in
			},
			wantByOut: map[outcome.Outcome]int{outcome.Sent: 2, outcome.Dead: 1},
		},
	}
}

// TestDeadLetteredUnsent: a published message that ends in the
// dead-letter queue without its attempts exhausted and without a send that
// may have reached the vendor is lost (docs/outcomes.md#dead-lettered-unsent);
// the worker's own dead letters are not.
func TestDeadLetteredUnsent(t *testing.T) {
	for _, tt := range deadUnsentCases() {
		t.Run(tt.name, func(t *testing.T) {
			r := Reconcile(tt.in())
			var rules []string
			var details []string
			for _, v := range r.Violations {
				rules = append(rules, v.Rule)
				details = append(details, v.Detail)
			}
			slices.Sort(rules)
			if !slices.Equal(rules, tt.wantRules) {
				t.Errorf("rules = %q, want %q\nviolations: %+v", rules, tt.wantRules, r.Violations)
			}
			if r.OK != (len(tt.wantRules) == 0) {
				t.Errorf("OK = %v with %d violations", r.OK, len(r.Violations))
			}
			if !slices.Equal(r.DeadLetteredUnsentIDs, orEmpty(tt.wantUnsent)) || r.DeadLetteredUnsent != len(tt.wantUnsent) {
				t.Errorf("dead-lettered unsent = %d %q, want %q", r.DeadLetteredUnsent, r.DeadLetteredUnsentIDs, tt.wantUnsent)
			}
			if !slices.Equal(r.LostIDs, orEmpty(tt.wantUnsent)) || r.Lost != len(tt.wantUnsent) {
				t.Errorf("lost = %d %q, want %q", r.Lost, r.LostIDs, tt.wantUnsent)
			}
			if !mapsEqual(r.ByOutcome, tt.wantByOut) {
				t.Errorf("by_outcome = %v, want %v", r.ByOutcome, tt.wantByOut)
			}
			if tt.wantDetail != "" && !strings.Contains(strings.Join(details, "|"), tt.wantDetail) {
				t.Errorf("details %q, want one containing %q", details, tt.wantDetail)
			}
			if len(tt.wantUnsent) > 0 && !strings.Contains(strings.Join(details, "|"), "; journal: ") {
				t.Errorf("details %q carry no journal trace (the audit sorts lost messages by it)", details)
			}
		})
	}
}

// TestDeadLetteredUnsentTable: the terminal table names the count and the
// refkeys, and Err counts them among the lost.
func TestDeadLetteredUnsentTable(t *testing.T) {
	in := without(without(clean(), "b"), "c")
	in.Queues["n.dead"] = []QueuedMessage{deliveryLimited("b", "", 0), deliveryLimited("c", "", 0)}
	r := Reconcile(in)
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "dead-lettered unsent  2") || !strings.Contains(b.String(), "b, c") {
		t.Errorf("table lacks the dead-lettered unsent count and refkeys:\n%s", b.String())
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "2 lost (2 dead-lettered unsent)") {
		t.Errorf("Err() = %v, want it to count 2 lost, 2 dead-lettered unsent", err)
	}
}
