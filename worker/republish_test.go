package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// brokenPublisher fails every publish with err until it was repaired
// healAfter times (never when healAfter < 0); it counts publishes and
// repairs. It stands for a session whose target queue was deleted
// (ErrUnroutable until the topology is declared again) or a copy the
// broker refuses for its size (a channel error, whatever is repaired).
type brokenPublisher struct {
	mu        sync.Mutex
	err       error
	healAfter int
	publishes int
	repairs   int
	pubs      []published
}

func (p *brokenPublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.publishes++
	if p.healAfter < 0 || p.repairs < p.healAfter {
		return fmt.Errorf("publish to %s: %w", queue, p.err)
	}
	p.pubs = append(p.pubs, published{queue, msg})
	return nil
}

func (p *brokenPublisher) Repair(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.repairs++
	return nil
}

var errTooLarge = &amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - message size 2048 is larger than configured max size 1024"}

// TestRepublishRepairsDeletedQueue: the unknown queue was deleted while the
// worker ran; the first copy is returned unroutable, the session
// re-declares the topology, and the second copy lands: acked, not
// requeued, the ledger says UNKNOWN.
func TestRepublishRepairsDeletedQueue(t *testing.T) {
	r := newRig(t, nil, inWindow)
	bp := &brokenPublisher{err: ErrUnroutable, healAfter: 1}
	r.h = r.h.WithPublisher(bp)
	r.send.err = sendErr(outcome.Unknown, "", errBoom)
	ack := &fakeAcker{}
	rec, err := r.h.Handle(context.Background(), delivery(ack, 3, body(t, "r-del", message.Info), nil))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Requeued || len(bp.pubs) != 1 || bp.pubs[0].queue != names.Unknown || bp.repairs != 1 {
		t.Fatalf("requeued %v copies %d repairs %d, want one copy in %s after one repair", rec.Requeued, len(bp.pubs), bp.repairs, names.Unknown)
	}
	if acks, nacks := ack.counts(); acks != 1 || nacks != 0 {
		t.Errorf("acks %d nacks %d, want one ack", acks, nacks)
	}
	if got := r.state(t, "r-del"); got != outcome.Unknown {
		t.Errorf("ledger %q, want UNKNOWN", got)
	}
}

// TestRepublishGivesUp: a copy the broker keeps refusing (unroutable after
// every repair, or too large) is published a bounded number of times, then
// the original is rejected without requeue, so the broker dead-letters it
// to the dead queue (the main queue's dead-letter target) instead of
// handing it back forever. The ledger says what really happened: nothing
// for an ad never attempted (a copy moved back is sent once), the send's
// outcome for one that was attempted.
func TestRepublishGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cat       message.Category
		now       bool // in window
		sendErr   error
		pubErr    error
		wantOut   outcome.Outcome
		wantState outcome.Outcome
		wantSends int
	}{
		{"held ad, unroutable", message.Ad, false, nil, ErrUnroutable, outcome.OutsideSendWindow, "", 0},
		{"held ad, too large", message.Ad, false, nil, errTooLarge, outcome.OutsideSendWindow, "", 0},
		{"unknown, too large", message.Info, true, sendErr(outcome.Unknown, "", errBoom), errTooLarge, outcome.Unknown, outcome.Unknown, 1},
		{"not sent, unroutable", message.Info, true, sendErr(outcome.NotSent, "", vendorapi.ErrClientClosed), ErrUnroutable, outcome.NotSent, outcome.NotSent, 1},
		{"rejected, too large", message.Info, true, sendErr(outcome.Rejected, "3016", errBoom), errTooLarge, outcome.Rejected, outcome.Rejected, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := outWindow
			if tc.now {
				now = inWindow
			}
			r := newRig(t, nil, now)
			bp := &brokenPublisher{err: tc.pubErr, healAfter: -1}
			r.h = r.h.WithPublisher(bp)
			r.send.err = tc.sendErr
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 8, body(t, "r-stuck", tc.cat), nil))
			if err != nil {
				t.Fatal(err)
			}
			if bp.publishes != DefaultRepublishAttempts {
				t.Errorf("%d publishes, want %d (bounded)", bp.publishes, DefaultRepublishAttempts)
			}
			if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || ack.requeues[0] {
				t.Fatalf("acks %d nacks %d requeues %v, want one nack WITHOUT requeue (dead-lettered by the broker)", acks, nacks, ack.requeues)
			}
			if rec.Requeued || rec.Outcome != tc.wantOut || rec.Queue != names.Dead || rec.Code != CodeRepublishFailed || rec.PublishError == "" {
				t.Errorf("record requeued %v outcome %q queue %q code %q publish error %q", rec.Requeued, rec.Outcome, rec.Queue, rec.Code, rec.PublishError)
			}
			if got := r.state(t, "r-stuck"); got != tc.wantState {
				t.Errorf("ledger %q, want %q", got, tc.wantState)
			}
			if r.send.calls() != tc.wantSends {
				t.Errorf("sends %d, want %d", r.send.calls(), tc.wantSends)
			}
		})
	}
}

// TestRepublishTransientRequeues: a failure that says nothing about the
// message (a confirm timeout: the broker is slow or blocked) keeps today's
// rule: the original is requeued, never dead-lettered.
func TestRepublishTransientRequeues(t *testing.T) {
	r := newRig(t, nil, outWindow)
	bp := &brokenPublisher{err: context.DeadlineExceeded, healAfter: -1}
	r.h = r.h.WithPublisher(bp)
	ack := &fakeAcker{}
	rec, err := r.h.Handle(context.Background(), delivery(ack, 8, body(t, "r-slow", message.Ad), nil))
	if err != nil {
		t.Fatal(err)
	}
	if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || !ack.requeues[0] || !rec.Requeued {
		t.Errorf("acks %d nacks %d requeues %v, want one nack with requeue", acks, nacks, ack.requeues)
	}
	if rec.Queue == names.Dead {
		t.Errorf("a transient failure was dead-lettered")
	}
}

// TestPermanentPublishError names the errors that say the copy itself can
// never be published as it is.
func TestPermanentPublishError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("publish to q: %w", ErrUnroutable), true},
		{fmt.Errorf("wait confirm: %w: %w", ErrPublishNacked, errTooLarge), true},
		{&amqp.Error{Code: amqp.FrameError, Reason: "FRAME_ERROR"}, true},
		{fmt.Errorf("publish to q: %w", ErrPublishNacked), false},
		{fmt.Errorf("publish to q: %w: %w (%v)", ErrPublishNacked, ErrCloseNotAttributed, errTooLarge), false},
		{context.DeadlineExceeded, false},
		{amqp.ErrClosed, false},
		{errors.New("other"), false},
	} {
		if got := permanentPublishError(tc.err); got != tc.want {
			t.Errorf("permanentPublishError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
