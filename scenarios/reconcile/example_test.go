package reconcile_test

import (
	"os"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// Reconcile a run in which "order-2" was sent, its ack was lost, and the
// redelivery was suppressed as a DUPLICATE, while "order-3" reached the
// vendor twice.
func ExampleReconcile() {
	in := reconcile.Input{
		Published: []reconcile.Published{
			{Seq: 1, RefKey: "order-1", Valid: true},
			{Seq: 2, RefKey: "order-2", Valid: true},
			{Seq: 3, RefKey: "order-3", Valid: true},
		},
		Names:  queues.NamesFor("notifications"),
		Queues: map[string][]reconcile.QueuedMessage{},
		Records: []records.Record{
			{Seq: 1, RefKey: "order-1", Outcome: "SENT"},
			{Seq: 2, RefKey: "order-2", Outcome: "SENT"},
			{Seq: 3, RefKey: "order-2", Outcome: "DUPLICATE", Redelivered: true},
			{Seq: 4, RefKey: "order-3", Outcome: "SENT"},
		},
		Journal: []reconcile.JournalEntry{
			{Method: "POST", Path: "/v3/message", RefKey: "order-1", Status: 200},
			{Method: "POST", Path: "/v3/message", RefKey: "order-2", Status: 200},
			{Method: "POST", Path: "/v3/message", RefKey: "order-3", Status: 200},
			{Method: "POST", Path: "/v3/message", RefKey: "order-3", Status: 200},
		},
	}
	r := reconcile.Reconcile(in)
	_ = r.WriteTable(os.Stdout)
	// Output:
	// reconcile      FAILED  (checks: places, route, journal)
	// published      3       (3 refkeys, 0 invalid)
	// lost           0       (published, found nowhere or dead-lettered unsent)
	// duplicates     1       (refkeys that reached the vendor twice without a 4xx)
	// suppressed     1       (DUPLICATE acks, not sent)
	// journal sends  4       (POSTs to the send path the vendor received)
	//
	// outcome  count
	// SENT     3
	//
	// place  count
	// acked  3
	//
	// violations: 1
	// rule       refkey   detail
	// duplicate  order-3  reached the vendor 2 times without a 4xx answer (statuses 200, 200)
}
