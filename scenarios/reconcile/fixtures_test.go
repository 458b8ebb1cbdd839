package reconcile

import (
	"flag"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/reconcile/")

const goldenDir = "../../testdata/reconcile"

// names are the queue names of the tests, written out (not through
// queues.NamesFor) so the pure tests depend on nothing but the contract.
var names = queues.Names{
	Main: "n", Retry: "n.retry", Unknown: "n.unknown", Held: "n.held", Failed: "n.failed", Dead: "n.dead",
}

var t0 = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)

func pub(seq int, refkey string) Published {
	return Published{Seq: seq, RefKey: refkey, MessageID: "m-" + refkey, Valid: true, PublishedAt: t0}
}

func invalidPub(seq int, msgID string) Published {
	return Published{Seq: seq, MessageID: msgID, PublishedAt: t0}
}

func rec(seq int, refkey string, o outcome.Outcome, queue string) records.Record {
	return records.Record{Seq: seq, RefKey: refkey, Outcome: o, Queue: queue}
}

func queued(queue, refkey, msgID string, o outcome.Outcome, reason string) QueuedMessage {
	h := map[string]any{}
	if o != "" {
		h[queues.HeaderOutcome] = string(o)
	}
	if reason != "" {
		h[queues.HeaderReason] = reason
	}
	return QueuedMessage{Queue: queue, RefKey: refkey, MessageID: msgID, Headers: h}
}

func sent(refkey string, status int) JournalEntry {
	return JournalEntry{Method: "POST", Path: DefaultSendPath, RefKey: refkey, Status: status}
}

func entry[S ~string](refkey string, state S, attempts int) ledger.Entry {
	return ledger.Entry{RefKey: refkey, State: outcome.Outcome(state), Attempts: attempts}
}

// clean is a run where a, b and c were SENT once each, and the token call
// is in the journal.
func clean() Input {
	return Input{
		Published: []Published{pub(1, "a"), pub(2, "b"), pub(3, "c")},
		Names:     names,
		Queues:    map[string][]QueuedMessage{},
		Records:   []records.Record{rec(1, "a", outcome.Sent, ""), rec(2, "b", outcome.Sent, ""), rec(3, "c", outcome.Sent, "")},
		Ledger:    []ledger.Entry{entry("a", outcome.Sent, 1), entry("b", outcome.Sent, 1), entry("c", outcome.Sent, 1)},
		Journal: []JournalEntry{
			{Method: "POST", Path: "/v1/token", Status: 200},
			sent("a", 200), sent("b", 200), sent("c", 200),
		},
	}
}

// without returns in's records, ledger and journal minus refkey.
func without(in Input, refkey string) Input {
	in.Records = slices.DeleteFunc(slices.Clone(in.Records), func(r records.Record) bool { return r.RefKey == refkey })
	in.Ledger = slices.DeleteFunc(slices.Clone(in.Ledger), func(e ledger.Entry) bool { return e.RefKey == refkey })
	in.Journal = slices.DeleteFunc(slices.Clone(in.Journal), func(e JournalEntry) bool { return e.RefKey == refkey && e.Path == DefaultSendPath })
	return in
}
