package worker

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Tests of a Finish the ledger refuses as stale: the entry was settled (a
// delivery report, an operator) while the attempt was under way.

// settleDuringSend makes r's send settle refkey as as (source src, vendor
// code code) through the ledger's Resolve, as worker/reports does, before
// the send answers: the attempt's Finish then finds the entry moved on.
func settleDuringSend(t *testing.T, r *rig, refkey string, as outcome.Outcome, src, code string) {
	t.Helper()
	r.send.during = func() {
		res := ledger.Resolution{By: "vendor", Why: "delivery report", At: inWindow.Add(time.Hour), Source: src, Code: code}
		if err := r.led.(ledger.Store).Resolve(context.Background(), refkey, as, res, ledgertest.MinAge); err != nil {
			t.Errorf("settle %s as %s during the send: %v", refkey, as, err)
		}
	}
}

// TestStaleFinishIsNotALedgerFailure: a report settles the ATTEMPTING
// entry during the send, so the attempt's Finish is refused as stale.
// The ledger answered: Handle returns no error (the session goes on), the
// delivery is routed by its own outcome and acked, the settlement is kept,
// a warning names what the entry holds, a redelivery is a DUPLICATE (no
// second send), and a copy in the unknown queue is moved by the drain as
// the settlement says.
func TestStaleFinishIsNotALedgerFailure(t *testing.T) {
	tests := []struct {
		name      string
		sendErr   error
		settle    outcome.Outcome
		src, code string
		wantOut   outcome.Outcome
		wantQueue string     // "" = acked without a copy
		wantDrain drainStats // the drain of a copy in the unknown queue
	}{
		{name: "unknown, report delivered", sendErr: sendErr(outcome.Unknown, "", errBoom), settle: outcome.Sent, src: ledger.SourceReport,
			wantOut: outcome.Unknown, wantQueue: names.Unknown, wantDrain: drainStats{Acked: 1}},
		{name: "unknown, report failed", sendErr: sendErr(outcome.Unknown, "", errBoom), settle: outcome.Rejected, src: ledger.SourcePull, code: "3015",
			wantOut: outcome.Unknown, wantQueue: names.Unknown, wantDrain: drainStats{Failed: 1}},
		{name: "sent, report delivered", settle: outcome.Sent, src: ledger.SourceReport,
			wantOut: outcome.Sent},
		{name: "rejected, report failed", sendErr: sendErr(outcome.Rejected, "3016", errBoom), settle: outcome.Rejected, src: ledger.SourceReport, code: "3016",
			wantOut: outcome.Rejected, wantQueue: names.Failed},
		{name: "not sent, operator resolved sent", sendErr: sendErr(outcome.NotSent, "", vendorapi.ErrClientClosed), settle: outcome.Sent, src: ledger.SourceOperator,
			wantOut: outcome.NotSent, wantQueue: names.Retry},
	}
	stores := map[string]func(t *testing.T) ledgerGetter{
		"bbolt": func(t *testing.T) ledgerGetter { return openLedger(t) },
		"mem":   func(*testing.T) ledgerGetter { return ledgertest.NewMem() },
	}
	for storeName, open := range stores {
		for _, tc := range tests {
			t.Run(storeName+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				r := newRig(t, open(t), inWindow)
				r.send.err = tc.sendErr
				const key = "r-stale"
				settleDuringSend(t, r, key, tc.settle, tc.src, tc.code)
				b := body(t, key, message.Info)
				ack := &fakeAcker{}
				rec, err := r.h.Handle(ctx, delivery(ack, 1, b, nil))
				if err != nil {
					t.Fatalf("Handle: %v; want nil (a stale Finish is the ledger's answer, not a ledger failure)", err)
				}
				if rec.Outcome != tc.wantOut || rec.Queue != tc.wantQueue || rec.Requeued {
					t.Errorf("outcome %q queue %q requeued %v; want %q %q false", rec.Outcome, rec.Queue, rec.Requeued, tc.wantOut, tc.wantQueue)
				}
				if acks, nacks := ack.counts(); acks != 1 || nacks != 0 {
					t.Errorf("acks %d nacks %d; want the delivery acked once", acks, nacks)
				}
				wantPubs := 0
				if tc.wantQueue != "" {
					wantPubs = 1
				}
				if len(r.pub.pubs) != wantPubs || wantPubs == 1 && r.pub.pubs[0].queue != tc.wantQueue {
					t.Fatalf("copies %v; want %d to %q", r.pub.pubs, wantPubs, tc.wantQueue)
				}
				e, _, err := r.led.Get(ctx, key)
				if err != nil || e.State != tc.settle || e.Resolution == nil || e.Resolution.SourceOf() != tc.src {
					t.Errorf("ledger entry %+v (%v); want the settlement %s by %s kept", e, err, tc.settle, tc.src)
				}
				logs := r.logBuf.String()
				if !strings.Contains(logs, `"level":"WARN","msg":"ledger refused the outcome as stale`) ||
					!strings.Contains(logs, `"ledger_state":"`+string(tc.settle)+`"`) || !strings.Contains(logs, `"settled_by":"`+tc.src+`"`) {
					t.Errorf("no warning naming the stale Finish, the entry's %s and its source %s: %s", tc.settle, tc.src, logs)
				}

				// The broker redelivers the original (its ack lost), and any
				// copy in the main queue meets the same Begin: no second send.
				d := delivery(&fakeAcker{}, 2, b, nil)
				d.Redelivered = true
				rec2, err := r.h.Handle(ctx, d)
				if err != nil || rec2.Outcome != outcome.Duplicate {
					t.Errorf("redelivery: outcome %q err %v; want DUPLICATE", rec2.Outcome, err)
				}
				if n := r.send.calls(); n != 1 {
					t.Errorf("vendor saw %d sends; want 1", n)
				}

				if tc.wantQueue != names.Unknown {
					return
				}
				c := r.pub.pubs[0].p
				a := &fakeAcker{}
				q := &fakeQueue{ds: []amqp.Delivery{{Acknowledger: a, DeliveryTag: 1, Headers: c.Headers, Body: c.Body}}}
				st, err := drainUnknown(ctx, q, &fakePublisher{}, r.led.(ledger.Store), names, 1)
				if err != nil || st != tc.wantDrain {
					t.Errorf("drain of the unknown copy: %+v (%v); want %+v", st, err, tc.wantDrain)
				}
			})
		}
	}
}

// TestStaleFinishOfASendSettledNotSent: the vendor took the message (SENT)
// but an operator resolved the entry NOT_SENT meanwhile: the delivery is
// acked and Handle returns nil as for any stale Finish, the verdict is
// kept (never overwritten by the worker), and the line is an error asking
// for a check with the vendor, since a copy could be sent again. A
// settlement that agrees (SENT) gives a warning only (the control).
func TestStaleFinishOfASendSettledNotSent(t *testing.T) {
	for _, tc := range []struct {
		settle    outcome.Outcome
		wantLevel string
	}{
		{outcome.NotSent, "ERROR"},
		{outcome.Sent, "WARN"},
	} {
		t.Run(string(tc.settle), func(t *testing.T) {
			r := newRig(t, nil, inWindow)
			settleDuringSend(t, r, "r-stale-sent", tc.settle, ledger.SourceOperator, "")
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 1, body(t, "r-stale-sent", message.Info), nil))
			if err != nil || rec.Outcome != outcome.Sent {
				t.Fatalf("Handle: outcome %q err %v; want SENT, nil", rec.Outcome, err)
			}
			if acks, _ := ack.counts(); acks != 1 || r.state(t, "r-stale-sent") != tc.settle {
				t.Errorf("acks %d ledger %s; want 1 and the verdict %s kept", acks, r.state(t, "r-stale-sent"), tc.settle)
			}
			logs := r.logBuf.String()
			if !strings.Contains(logs, `"level":"`+tc.wantLevel+`"`) || !strings.Contains(logs, `"ledger_state":"`+string(tc.settle)+`"`) {
				t.Errorf("want a %s line naming the entry's %s: %s", tc.wantLevel, tc.settle, logs)
			}
			if tc.wantLevel == "WARN" && strings.Contains(logs, `"level":"ERROR"`) {
				t.Errorf("an agreeing settlement logged an error: %s", logs)
			}
		})
	}
}

// TestStaleFinishKeepsTheSession: serve goes on after a delivery whose
// Finish was stale (before, its ErrLedger tore the session down): the next
// delivery is handled and the session ends only when its deliveries end.
func TestStaleFinishKeepsTheSession(t *testing.T) {
	r := newRig(t, nil, inWindow)
	settleDuringSend(t, r, "r-stale-1", outcome.Sent, ledger.SourceReport, "")
	r.send.err = sendErr(outcome.Unknown, "", errBoom)
	var recs, logs bytes.Buffer
	c := newTestConsumer(r, &recs, &logs, 0)
	gen := c.gens.start()
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 2)
	deliveries <- delivery(ack, 1, body(t, "r-stale-1", message.Info), nil)
	deliveries <- delivery(ack, 2, body(t, "r-stale-2", message.Info), nil)
	close(deliveries)
	// The second send neither settles anything nor fails.
	first := r.send.during
	r.send.during = func() {
		if r.send.calls() == 0 {
			first()
			return
		}
		r.send.err = nil
	}
	got := waitServe(t, serveAsync(context.Background(), c, gen, deliveries, make(chan struct{})))
	if got.err != nil || !got.lost {
		t.Fatalf("serve = lost %v, err %v; want the session to end with its deliveries, no error", got.lost, got.err)
	}
	rs := readRecords(t, &recs)
	if len(rs) != 2 || rs[0].Outcome != outcome.Unknown || rs[1].Outcome != outcome.Sent {
		t.Fatalf("records %+v; want UNKNOWN (stale Finish) then SENT", rs)
	}
	if acks, nacks := ack.counts(); acks != 2 || nacks != 0 {
		t.Errorf("acks %d nacks %d; want both acked", acks, nacks)
	}
	if r.state(t, "r-stale-2") != outcome.Sent {
		t.Errorf("second delivery's entry %s; want SENT", r.state(t, "r-stale-2"))
	}
}
