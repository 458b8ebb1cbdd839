package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// A delivery a quorum queue returned before (x-delivery-count >= 1) gets
// a new delivery budget: a copy at the main queue's tail (renewals one
// higher, the broker's count gone), the original acked, nothing sent and
// nothing written to the ledger; the copy is then handled as usual. A
// classic queue, a message renewed MaxDeliveryRenewals times, or a copy
// the broker refuses: handled as it is. Without it, RabbitMQ 3.10's count
// of every return (prefetched deliveries of a lost session included)
// dead-lettered never-sent messages over the delivery limit after a burst
// of the worker's own session losses (the simulator's seed 5403).
func TestRenewReturnedQuorumDelivery(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limit   int
		headers amqp.Table
		pubErr  error
		renewed bool
	}{
		{"returned once, quorum", 5, amqp.Table{queues.HeaderDeliveryCount: int64(1)}, nil, true},
		{"returned four times, renewed twice before", 5, amqp.Table{queues.HeaderDeliveryCount: int64(4), queues.HeaderRenewals: int32(2)}, nil, true},
		{"never returned (control)", 5, nil, nil, false},
		{"classic queue (control)", 0, amqp.Table{queues.HeaderDeliveryCount: int64(3)}, nil, false},
		{"renewed MaxDeliveryRenewals times: the limit applies (poison)", 5, amqp.Table{queues.HeaderDeliveryCount: int64(4), queues.HeaderRenewals: int32(MaxDeliveryRenewals)}, nil, false},
		{"copy refused: handled as it is", 5, amqp.Table{queues.HeaderDeliveryCount: int64(2)}, errors.New("channel closed"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC))
			r.h.c.DeliveryLimit = tc.limit
			r.h.c.RepublishAttempts = 1
			r.pub.err = tc.pubErr
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 1, body(t, "r-renew", message.Info), tc.headers))
			if err != nil {
				t.Fatal(err)
			}
			acks, nacks := ack.counts()
			if !tc.renewed {
				if rec.Requeued || rec.Outcome != outcome.Sent || r.send.calls() != 1 {
					t.Errorf("outcome %q requeued %t sends %d; want handled as usual (SENT, one send)", rec.Outcome, rec.Requeued, r.send.calls())
				}
				return
			}
			if !rec.Requeued || r.send.calls() != 0 || acks != 1 || nacks != 0 {
				t.Fatalf("requeued %t sends %d acks %d nacks %d; want renewed: no send, the original acked", rec.Requeued, r.send.calls(), acks, nacks)
			}
			if _, found, _ := r.led.Get(context.Background(), "r-renew"); found {
				t.Error("the ledger has an entry; a renewal writes nothing")
			}
			if len(r.pub.pubs) != 1 || r.pub.pubs[0].queue != names.Main {
				t.Fatalf("copies %+v; want one to %s", r.pub.pubs, names.Main)
			}
			h := r.pub.pubs[0].p.Headers
			if _, ok := h[queues.HeaderDeliveryCount]; ok {
				t.Error("the copy carries the broker's x-delivery-count")
			}
			if got, want := queues.Renewals(h), queues.Renewals(tc.headers)+1; got != want {
				t.Errorf("copy's renewals = %d; want %d", got, want)
			}
			// The copy comes back (a new message: no count) and is sent once.
			rec2, err := r.h.Handle(context.Background(), delivery(ack, 2, r.pub.pubs[0].p.Body, h))
			if err != nil || rec2.Outcome != outcome.Sent || r.send.calls() != 1 {
				t.Errorf("the copy: outcome %q err %v sends %d; want SENT once", rec2.Outcome, err, r.send.calls())
			}
		})
	}
}
