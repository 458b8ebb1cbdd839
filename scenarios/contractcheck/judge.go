package contractcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// Evidence is what the check saw of one worker from outside and in its
// records file; Gaps judges it.
type Evidence struct {
	// Consumer is "" when the worker consumed QUEUE, else why not.
	Consumer string
	// Queues maps each contract queue to "" (declared with the contract's
	// arguments), "missing" or "arguments differ: ...".
	Queues map[string]string
	// QueueOrder is the contract's queue names in order.
	QueueOrder []string
	// RecordsErr is why the records file could not be read ("" = read).
	RecordsErr string
	// SchemaErrs are the records lines that fail
	// docs/schemas/records-line.schema.json, "line N: why".
	SchemaErrs []string
	Records    []records.Record
	// Sends counts the journal's sends per refkey (a 4xx answer not
	// counted); Logged is the refkeys nginx logged in the correlation
	// header.
	Sends  map[string]int
	Logged map[string]bool
	// DeadOutcomes is the x-notifier-outcome header of each message in
	// QUEUE.dead, by the refkey in its body ("" when none).
	DeadOutcomes map[string]string
	// Valid are the refkeys of the valid messages, Invalid the refkey of
	// the invalid one, Again the refkey published a second time after it
	// was sent.
	Valid          []string
	Invalid, Again string
	// Exit is the worker's exit status after SIGTERM (nil: it did not
	// exit within Grace).
	Exit *int
	// ExitedEarly: the worker had exited by itself before SIGTERM.
	ExitedEarly bool
	Grace       time.Duration
	Header      string // the profile's correlation header
}

// Gap is one part of the contract the worker did not keep: what, and
// where in docs/worker-contract.md it is written.
type Gap struct {
	What string `json:"what"`
	Doc  string `json:"doc"`
}

// Gaps returns every gap in e, in the contract's order: consumer,
// queues, records, sends, routing, re-publish, exit.
func Gaps(e Evidence) []Gap {
	var gaps []Gap
	add := func(doc, format string, args ...any) {
		gaps = append(gaps, Gap{What: fmt.Sprintf(format, args...), Doc: "docs/worker-contract.md#" + doc})
	}
	if e.Consumer != "" {
		add("what-the-lab-gives-the-worker", "did not consume QUEUE: %s", e.Consumer)
	}
	for _, q := range e.QueueOrder {
		switch st := e.Queues[q]; {
		case st == "missing":
			add("queues", "queue %s was never declared", q)
		case st != "":
			add("queues", "queue %s: %s", q, st)
		}
	}
	if e.RecordsErr != "" {
		add("records", "records file: %s", e.RecordsErr)
	}
	for _, s := range e.SchemaErrs {
		add("records", "records %s (docs/schemas/records-line.schema.json)", s)
	}
	byKey := map[string][]outcome.Outcome{}
	for _, r := range e.Records {
		byKey[r.RefKey] = append(byKey[r.RefKey], r.Outcome)
	}
	for _, k := range e.Valid {
		if n := e.Sends[k]; n != 1 {
			add("what-the-worker-must-do", "valid message %s: %d sends in the vendor's journal, want 1 (refkey in the body's refkey field)", k, n)
		}
		if e.RecordsErr == "" && !slices.Contains(byKey[k], outcome.Sent) {
			add("records", "valid message %s: no SENT record (records: %v)", k, byKey[k])
		}
		if e.Sends[k] > 0 && e.Header != "" && !e.Logged[k] {
			add("what-the-worker-must-do", "valid message %s: sent without the correlation header %s (nginx logged none)", k, e.Header)
		}
	}
	if e.Invalid != "" {
		if e.Sends[e.Invalid] > 0 {
			add("what-the-worker-must-do", "invalid message %s (no recipient) was sent to the vendor %d time(s)", e.Invalid, e.Sends[e.Invalid])
		}
		if got := e.DeadOutcomes[e.Invalid]; got != string(outcome.Invalid) {
			what := "not in QUEUE.dead"
			if _, ok := e.DeadOutcomes[e.Invalid]; ok {
				what = fmt.Sprintf("in QUEUE.dead with x-notifier-outcome %q", got)
			}
			add("queues", "invalid message %s: %s, want it dead-lettered with x-notifier-outcome INVALID", e.Invalid, what)
		}
		if e.RecordsErr == "" && !invalidWithReason(e.Records, e.Invalid) {
			add("records", "invalid message %s: no INVALID record with its reason in error or code", e.Invalid)
		}
	}
	if e.Again != "" {
		if n := e.Sends[e.Again]; n > 1 {
			add("what-the-worker-must-do", "message %s published again after it was sent: sent %d times (never twice: the ledger must answer DUPLICATE)", e.Again, n)
		}
		if e.RecordsErr == "" && len(byKey[e.Again]) < 2 {
			add("records", "message %s published again: %d record(s), want a second one (DUPLICATE)", e.Again, len(byKey[e.Again]))
		}
	}
	switch {
	case e.ExitedEarly && e.Exit != nil:
		add("what-the-lab-gives-the-worker", "exited by itself with status %d before SIGTERM (run until SIGTERM with MAX_MESSAGES unset)", *e.Exit)
	case e.Exit == nil:
		add("what-the-lab-gives-the-worker", "did not exit within %s of SIGTERM", e.Grace)
	case *e.Exit != 0 && *e.Exit != 143:
		add("what-the-lab-gives-the-worker", "exited with status %d after SIGTERM, want 0 or 143 (128 + SIGTERM, the JVM's)", *e.Exit)
	}
	return gaps
}

// invalidWithReason reports whether an INVALID record of refkey (or one
// with an empty refkey) carries a reason.
func invalidWithReason(recs []records.Record, refkey string) bool {
	for _, r := range recs {
		if r.Outcome == outcome.Invalid && (r.RefKey == refkey || r.RefKey == "") &&
			(strings.TrimSpace(r.Error) != "" || r.Code != "") {
			return true
		}
	}
	return false
}
