package worker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// Tests of the handler with the attempt ledger: redeliveries, reused
// refkeys, crashes mid-send, re-publish and ledger failures.

// beginFinish records a finished attempt in l.
func beginFinish(t *testing.T, l Ledger, refkey string, s outcome.Outcome) {
	t.Helper()
	_, e, err := l.Begin(context.Background(), refkey, "", inWindow)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(context.Background(), refkey, "", e.Attempts, s, "", inWindow); err != nil {
		t.Fatal(err)
	}
}

// TestRefKeyConflict: the same refkey with the same body is a DUPLICATE
// (acked, not sent); with another body it is dead-lettered as INVALID with
// REFKEY_CONFLICT, never sent, and the first entry is left as it was.
func TestRefKeyConflict(t *testing.T) {
	r := newRig(t, nil, inWindow)
	first := body(t, "r-reuse", message.Info)
	other := []byte(strings.Replace(string(first), "your order shipped", "your refund is on its way", 1))
	if string(other) == string(first) {
		t.Fatal("test bodies are equal")
	}
	for i, tc := range []struct {
		body      []byte
		wantOut   outcome.Outcome
		wantQueue string
		wantSends int
	}{
		{first, outcome.Sent, "", 1},
		{first, outcome.Duplicate, "", 1},
		{other, outcome.Invalid, names.Dead, 1},
	} {
		ack := &fakeAcker{}
		npub := len(r.pub.pubs)
		rec, err := r.h.Handle(context.Background(), delivery(ack, uint64(i+1), tc.body, nil))
		if err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
		if rec.Outcome != tc.wantOut || rec.Queue != tc.wantQueue || r.send.calls() != tc.wantSends {
			t.Errorf("delivery %d: outcome %q queue %q sends %d; want %q %q %d",
				i+1, rec.Outcome, rec.Queue, r.send.calls(), tc.wantOut, tc.wantQueue, tc.wantSends)
		}
		if acks, nacks := ack.counts(); acks != 1 || nacks != 0 {
			t.Errorf("delivery %d: acks %d nacks %d; want 1 ack (after the copy was confirmed)", i+1, acks, nacks)
		}
		if tc.wantQueue == "" {
			continue
		}
		if len(r.pub.pubs) != npub+1 {
			t.Fatalf("delivery %d: %d re-publishes; want 1", i+1, len(r.pub.pubs)-npub)
		}
		p := r.pub.pubs[npub]
		if p.queue != names.Dead || p.p.Headers[queues.HeaderCode] != CodeRefKeyConflict ||
			!strings.Contains(fmt.Sprint(p.p.Headers[queues.HeaderReason]), CodeRefKeyConflict) ||
			p.p.Headers[queues.HeaderOutcome] != string(outcome.Invalid) {
			t.Errorf("conflict copy to %s headers %v; want %s with code and reason %s", p.queue, p.p.Headers, names.Dead, CodeRefKeyConflict)
		}
		if rec.Code != CodeRefKeyConflict {
			t.Errorf("record code %q; want %s", rec.Code, CodeRefKeyConflict)
		}
	}
	e, _, err := r.led.Get(context.Background(), "r-reuse")
	if err != nil || e.State != outcome.Sent || e.BodyHash != ledger.BodyHash(first) {
		t.Errorf("ledger entry %+v, %v; want the first message's SENT entry untouched", e, err)
	}
}

// TestRedeliveryOfSentIsNotSentAgain: a message whose ack was lost comes
// back Redelivered; the ledger stops the second send.
func TestRedeliveryOfSentIsNotSentAgain(t *testing.T) {
	r := newRig(t, nil, inWindow)
	b := body(t, "r-once", message.Info)
	lost := &fakeAcker{err: errors.New("channel/connection is not open")}
	rec1, err := r.h.Handle(context.Background(), delivery(lost, 1, b, nil))
	if err != nil || rec1.Outcome != outcome.Sent || rec1.AckError == "" {
		t.Fatalf("first delivery: outcome %q ack error %q err %v; want SENT with a failed ack", rec1.Outcome, rec1.AckError, err)
	}
	ack := &fakeAcker{}
	d := delivery(ack, 1, b, nil)
	d.Redelivered = true
	rec2, err := r.h.Handle(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if rec2.Outcome != outcome.Duplicate || !rec2.Redelivered {
		t.Errorf("redelivery outcome %q redelivered %v, want DUPLICATE true", rec2.Outcome, rec2.Redelivered)
	}
	if n := r.send.calls(); n != 1 {
		t.Errorf("vendor saw %d sends, want 1", n)
	}
	if acks, _ := ack.counts(); acks != 1 {
		t.Errorf("redelivery acked %d times, want 1", acks)
	}
	if len(r.pub.pubs) != 0 {
		t.Errorf("duplicate re-published %d times", len(r.pub.pubs))
	}
}

// TestCrashMidSendBecomesUnknown: the ledger holds Attempting (the worker
// died, or the channel was lost, mid-send); every redelivery is not sent
// and goes to the unknown queue, and the entry is left ATTEMPTING (the
// attempt could be live elsewhere); once an operator resolved it as sent,
// the next copy is a duplicate.
func TestCrashMidSendBecomesUnknown(t *testing.T) {
	r := newRig(t, nil, inWindow)
	b := body(t, "r-crash", message.Info)
	if dec, _, err := r.led.Begin(context.Background(), "r-crash", ledger.BodyHash(b), inWindow); err != nil || dec != ledger.Proceed {
		t.Fatalf("begin: %v %v", dec, err)
	}
	resolve := func() {
		err := r.led.(ledger.Store).Resolve(context.Background(), "r-crash", outcome.Sent,
			ledger.Resolution{By: "ops", Why: "vendor journal", At: inWindow.Add(time.Hour)}, ledgertest.MinAge)
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []outcome.Outcome{outcome.Unknown, outcome.Unknown, outcome.Duplicate} {
		if i == 2 {
			if got := r.state(t, "r-crash"); got != ledger.Attempting {
				t.Fatalf("ledger %s after two unresolved redeliveries; want ATTEMPTING left as it was", got)
			}
			resolve()
		}
		ack := &fakeAcker{}
		d := delivery(ack, uint64(i+1), b, nil)
		d.Redelivered = true
		rec, err := r.h.Handle(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Outcome != want {
			t.Errorf("delivery %d: outcome %q, want %q", i+1, rec.Outcome, want)
		}
	}
	if r.send.calls() != 0 {
		t.Errorf("sent %d times, want 0", r.send.calls())
	}
	if len(r.pub.pubs) != 2 || r.pub.pubs[0].queue != names.Unknown || r.pub.pubs[1].queue != names.Unknown {
		t.Errorf("%d re-publishes, want two to %s", len(r.pub.pubs), names.Unknown)
	}
}

// TestPublishFailureRequeues: when the re-publish fails the original is
// nacked with requeue (never lost) and the handler carries on. A REJECTED
// send keeps Attempting in the ledger so its redelivery goes to the unknown
// queue without a second send; a NOT_SENT one is recorded so its
// redelivery is sent again.
func TestPublishFailureRequeues(t *testing.T) {
	tests := []struct {
		name         string
		sendErr      error
		wantState    outcome.Outcome
		wantRedeliv  outcome.Outcome
		wantSends    int
		wantRedQueue string
	}{
		{"rejected", sendErr(outcome.Rejected, "3016", errBoom), ledger.Attempting, outcome.Unknown, 1, names.Unknown},
		{"unknown", sendErr(outcome.Unknown, "", errBoom), ledger.Attempting, outcome.Unknown, 1, names.Unknown},
		{"not sent", sendErr(outcome.NotSent, "", vendorapi.ErrClientClosed), outcome.NotSent, outcome.Sent, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, inWindow)
			r.send.err = tc.sendErr
			r.pub.err = errors.New("publish not confirmed")
			b := body(t, "r-pubfail", message.Info)
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 3, b, nil))
			if err != nil {
				t.Fatalf("Handle: %v (a publish failure must not stop the worker)", err)
			}
			if !rec.Requeued || rec.PublishError == "" {
				t.Errorf("requeued %v publish error %q", rec.Requeued, rec.PublishError)
			}
			if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || !ack.requeues[0] {
				t.Errorf("acks %d nacks %d requeues %v; want one nack with requeue", acks, nacks, ack.requeues)
			}
			if got := r.state(t, "r-pubfail"); got != tc.wantState {
				t.Errorf("ledger %q, want %q", got, tc.wantState)
			}
			// The broker redelivers it; publishing works again.
			r.pub.err = nil
			r.send.err = nil
			ack2 := &fakeAcker{}
			d := delivery(ack2, 1, b, nil)
			d.Redelivered = true
			rec2, err := r.h.Handle(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if rec2.Outcome != tc.wantRedeliv || rec2.Queue != tc.wantRedQueue {
				t.Errorf("redelivery: outcome %q queue %q, want %q %q", rec2.Outcome, rec2.Queue, tc.wantRedeliv, tc.wantRedQueue)
			}
			if r.send.calls() != tc.wantSends {
				t.Errorf("sends %d, want %d", r.send.calls(), tc.wantSends)
			}
		})
	}
}

// TestLedgerFailure: a ledger that cannot be written before the send means
// do not send, nack with requeue, stop; after a send, ack and stop.
func TestLedgerFailure(t *testing.T) {
	t.Run("begin fails: not sent, requeued, fatal", func(t *testing.T) {
		led := ledgertest.NewMem()
		led.SetErrors(errors.New("disk full"), nil)
		r := newRig(t, led, inWindow)
		ack := &fakeAcker{}
		rec, err := r.h.Handle(context.Background(), delivery(ack, 9, body(t, "r-lf", message.Info), nil))
		if !errors.Is(err, ErrLedger) {
			t.Fatalf("error %v, want ErrLedger", err)
		}
		if r.send.calls() != 0 {
			t.Errorf("sent %d times with a broken ledger", r.send.calls())
		}
		if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || !ack.requeues[0] {
			t.Errorf("acks %d nacks %d, want one nack with requeue", acks, nacks)
		}
		if !rec.Requeued {
			t.Errorf("record not marked requeued")
		}
	})
	t.Run("finish fails after sent: acked, fatal", func(t *testing.T) {
		led := ledgertest.NewMem()
		led.SetErrors(nil, errors.New("disk full"))
		r := newRig(t, led, inWindow)
		ack := &fakeAcker{}
		rec, err := r.h.Handle(context.Background(), delivery(ack, 9, body(t, "r-lf2", message.Info), nil))
		if !errors.Is(err, ErrLedger) {
			t.Fatalf("error %v, want ErrLedger", err)
		}
		if acks, _ := ack.counts(); acks != 1 || rec.Outcome != outcome.Sent {
			t.Errorf("acks %d outcome %q, want the sent message acked", acks, rec.Outcome)
		}
	})
	t.Run("finish fails after re-publish: acked, fatal", func(t *testing.T) {
		led := ledgertest.NewMem()
		led.SetErrors(nil, errors.New("disk full"))
		r := newRig(t, led, inWindow)
		r.send.err = sendErr(outcome.Unknown, "", errBoom)
		ack := &fakeAcker{}
		_, err := r.h.Handle(context.Background(), delivery(ack, 9, body(t, "r-lf3", message.Info), nil))
		if !errors.Is(err, ErrLedger) {
			t.Fatalf("error %v, want ErrLedger", err)
		}
		if acks, _ := ack.counts(); acks != 1 || len(r.pub.pubs) != 1 {
			t.Errorf("acks %d re-publishes %d, want 1 and 1", acks, len(r.pub.pubs))
		}
	})
}

// TestHandleSendIgnoresCancel: the send of a message in hand is not
// cancelled by the worker's ctx (shutdown finishes it).
func TestHandleSendIgnoresCancel(t *testing.T) {
	r := newRig(t, nil, inWindow)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec, err := r.h.Handle(ctx, delivery(&fakeAcker{}, 1, body(t, "r-cancel", message.Info), nil))
	if err != nil || rec.Outcome != outcome.Sent {
		t.Fatalf("outcome %q err %v", rec.Outcome, err)
	}
	if r.send.ctxErr != nil {
		t.Errorf("send saw a cancelled ctx: %v", r.send.ctxErr)
	}
}

// TestHandleWithRealDecoderLogsNoRecipient: the debug line masks the
// recipient (checked in consumer tests); the handler's warn lines carry no
// recipient either.
func TestHandleLogsNoRecipient(t *testing.T) {
	r := newRig(t, nil, inWindow)
	r.send.err = sendErr(outcome.Unknown, "", errors.New("reset sending to "+testRecipient))
	r.pub.err = errors.New("publish to x: " + testRecipient)
	if _, err := r.h.Handle(context.Background(), delivery(&fakeAcker{}, 1, body(t, "r-log", message.Info), nil)); err != nil {
		t.Fatal(err)
	}
	if r.logBuf.Len() == 0 {
		t.Fatal("no log line for a requeued message")
	}
	if strings.Contains(r.logBuf.String(), testRecipient) {
		t.Errorf("log carries the recipient in clear: %s", r.logBuf)
	}
}

// BenchmarkHandleSent measures the worker's own cost per SENT message
// around the send: decode, window, two synced ledger writes (Begin before
// the send, Finish after), ack. The send itself is a fake.
func BenchmarkHandleSent(b *testing.B) {
	l, err := ledger.Open(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	h := NewHandler(HandlerConfig{
		Publisher: &fakePublisher{}, Sender: &fakeSender{res: vendorapi.Result{Code: "1000"}}, Ledger: l,
		Window: window.Default(), Clock: fixedClock{inWindow}, Names: names,
	})
	t := &testing.T{}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = body(t, fmt.Sprintf("bench-%d", i), message.Info)
	}
	ack := &fakeAcker{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Handle(context.Background(), delivery(ack, uint64(i+1), bodies[i], nil)); err != nil {
			b.Fatal(err)
		}
	}
}
