package worker

import (
	"context"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Tests of two deliveries of one refkey in flight at once (CONCURRENCY > 1
// and a producer that published twice, or a frozen replica whose message
// the standby took): the late delivery finds the live attempt's ATTEMPTING
// entry and must write nothing over it.

// gatedPublisher is a fakePublisher whose publishes to queue wait: each
// one signals started, then waits for release.
type gatedPublisher struct {
	*fakePublisher
	queue            string
	started, release chan struct{}
}

func (p *gatedPublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	if queue == p.queue {
		p.started <- struct{}{}
		<-p.release
	}
	return p.fakePublisher.Publish(ctx, queue, msg)
}

type handleResult struct {
	rec records.Record
	err error
}

// TestLateRedeliveryKeepsLiveOutcome: delivery A proceeds and is held in
// the send; delivery B of the same refkey finds ATTEMPTING (Unresolved)
// and goes to the unknown queue. Whichever of the two finishes first, the
// ledger ends with A's outcome, and A's own Finish is never refused. With
// the old unconditional Finish(UNKNOWN), B landing after A turned a live
// NOT_SENT into UNKNOWN (the retry copy then suppressed as a DUPLICATE,
// never sent) and a SENT into UNKNOWN (open to a "not sent" resolution).
func TestLateRedeliveryKeepsLiveOutcome(t *testing.T) {
	for _, live := range []struct {
		name string
		err  error
	}{
		{"live NOT_SENT", sendErr(outcome.NotSent, "", vendorapi.ErrClientClosed)},
		{"live SENT", nil},
	} {
		for _, lateLast := range []bool{true, false} {
			order := "late redelivery finishes after the live attempt"
			if !lateLast {
				order = "late redelivery finishes before the live attempt"
			}
			t.Run(live.name+"/"+order, func(t *testing.T) {
				testLateRedelivery(t, live.err, lateLast)
			})
		}
	}
}

func testLateRedelivery(t *testing.T, liveErr error, lateLast bool) {
	r := newRig(t, nil, inWindow)
	r.send.started, r.send.release = make(chan struct{}), make(chan struct{})
	gate := &gatedPublisher{fakePublisher: r.pub, queue: names.Unknown,
		started: make(chan struct{}), release: make(chan struct{})}
	r.h = r.h.WithPublisher(gate)
	b := body(t, "r-twice", message.Info)
	wantLive := outcome.Sent
	if liveErr != nil {
		wantLive = outcome.NotSent
	}

	run := func(d amqp.Delivery) <-chan handleResult {
		done := make(chan handleResult, 1)
		go func() {
			rec, err := r.h.Handle(context.Background(), d)
			done <- handleResult{rec, err}
		}()
		return done
	}
	ackA, ackB := &fakeAcker{}, &fakeAcker{}
	aDone := run(delivery(ackA, 1, b, nil))
	<-r.send.started // A holds ATTEMPTING and is in the send
	dB := delivery(ackB, 2, b, nil)
	dB.Redelivered = true
	bDone := run(dB)
	<-gate.started // B decided Unresolved and is re-publishing to the unknown queue

	var a, late handleResult
	r.send.err = liveErr // read by Send after release
	if lateLast {
		close(r.send.release)
		a = <-aDone
		close(gate.release)
		late = <-bDone
	} else {
		close(gate.release)
		late = <-bDone
		close(r.send.release)
		a = <-aDone
	}
	if a.err != nil || a.rec.Outcome != wantLive {
		t.Fatalf("live attempt: outcome %q err %v; want %s, nil", a.rec.Outcome, a.err, wantLive)
	}
	if late.err != nil || late.rec.Outcome != outcome.Unknown || late.rec.Queue != names.Unknown {
		t.Fatalf("late redelivery: outcome %q queue %q err %v; want UNKNOWN to %s", late.rec.Outcome, late.rec.Queue, late.err, names.Unknown)
	}
	if !late.rec.NoCall || a.rec.NoCall {
		t.Errorf("no_call: late redelivery %v, live attempt %v; want true (decided without a call), false", late.rec.NoCall, a.rec.NoCall)
	}
	if acks, _ := ackB.counts(); acks != 1 {
		t.Errorf("late redelivery acked %d times; want 1 (after its copy was confirmed)", acks)
	}
	if got := r.state(t, "r-twice"); got != wantLive {
		t.Fatalf("ledger says %s after both deliveries; want the live attempt's %s", got, wantLive)
	}
	if liveErr == nil {
		return
	}
	// The live attempt's retry copy comes back: it must be sent, not
	// suppressed.
	var retryCopy *published
	for i := range r.pub.pubs {
		if r.pub.pubs[i].queue == names.Retry {
			retryCopy = &r.pub.pubs[i]
		}
	}
	if retryCopy == nil {
		t.Fatalf("no retry copy among %d re-publishes", len(r.pub.pubs))
	}
	r.send.err = nil
	r.send.started, r.send.release = nil, nil
	rec, err := r.h.Handle(context.Background(), delivery(&fakeAcker{}, 3, retryCopy.p.Body, retryCopy.p.Headers))
	if err != nil || rec.Outcome != outcome.Sent {
		t.Errorf("retry copy: outcome %q err %v; want SENT (%q is a lost message)", rec.Outcome, err, outcome.Duplicate)
	}
	if n := r.send.calls(); n != 2 {
		t.Errorf("vendor saw %d sends; want 2 (the NOT_SENT one and its retry)", n)
	}
}
