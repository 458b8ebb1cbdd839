package worker

import (
	"context"
	"fmt"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

// sharedClosePublisher stands for a publish channel closed by the broker
// while other copies were at the broker beside this one: Publish fails
// with ErrCloseNotAttributed (the 406 as text only), as ConfirmPublisher
// says then. PublishAlone (when solo) answers aloneErr: nil for an
// innocent copy, the broker's 406 for the oversized one.
type sharedClosePublisher struct {
	mu               sync.Mutex
	aloneErr         error
	publishes, alone int
	repairs          int
	landed           []published
}

func (p *sharedClosePublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.publishes++
	return fmt.Errorf("publish to %s: %w: %w (%v)", queue, ErrPublishNacked, ErrCloseNotAttributed, errTooLarge)
}

func (p *sharedClosePublisher) publishAlone(ctx context.Context, queue string, msg amqp.Publishing) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.alone++
	if p.aloneErr != nil {
		return fmt.Errorf("publish to %s: %w: %w", queue, ErrPublishNacked, p.aloneErr)
	}
	p.landed = append(p.landed, published{queue, msg})
	return nil
}

func (p *sharedClosePublisher) Repair(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.repairs++
	return nil
}

// soloShared is a sharedClosePublisher with PublishAlone.
type soloShared struct{ *sharedClosePublisher }

func (p soloShared) PublishAlone(ctx context.Context, queue string, msg amqp.Publishing) error {
	return p.publishAlone(ctx, queue, msg)
}

// TestRepublishAloneAfterUnattributedClose: a copy told
// ErrCloseNotAttributed (the channel closed over some copy beside it) is
// not given up on: its next attempt, on the repaired path, publishes
// alone. An innocent copy then lands and its original is acked; the
// oversized copy is refused alone (the 406 is its own) and given up on as
// before (dead-lettered, REPUBLISH_FAILED). Negative control: without
// PublishAlone, the unattributed closes are not taken as the copy's own:
// the original is requeued, never dead-lettered. Before ConfirmPublisher
// told which close is whose, every copy beside an oversized one got the
// 406 and an innocent one could be dead-lettered.
func TestRepublishAloneAfterUnattributedClose(t *testing.T) {
	for _, tc := range []struct {
		name          string
		solo          bool
		aloneErr      error
		wantPublishes int
		wantAlone     int
		wantAck       bool
		wantRequeue   bool
		wantDeadCode  string
	}{
		{"innocent copy", true, nil, 1, 1, true, false, ""},
		{"oversized copy", true, errTooLarge, 1, DefaultRepublishAttempts - 1, false, false, CodeRepublishFailed},
		{"no PublishAlone", false, nil, DefaultRepublishAttempts, 0, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, outWindow) // an ad outside the window: a copy to the held queue
			sp := &sharedClosePublisher{aloneErr: tc.aloneErr}
			var pub Publisher = sp
			if tc.solo {
				pub = soloShared{sp}
			}
			r.h = r.h.WithPublisher(pub)
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 5, body(t, "r-shared", message.Ad), nil))
			if err != nil {
				t.Fatal(err)
			}
			if sp.publishes != tc.wantPublishes || sp.alone != tc.wantAlone {
				t.Errorf("%d publishes beside others, %d alone; want %d and %d", sp.publishes, sp.alone, tc.wantPublishes, tc.wantAlone)
			}
			acks, nacks := ack.counts()
			switch {
			case tc.wantAck:
				if acks != 1 || nacks != 0 || len(sp.landed) != 1 || sp.landed[0].queue != names.Held {
					t.Errorf("acks %d nacks %d landed %v, want the copy in %s and the original acked", acks, nacks, sp.landed, names.Held)
				}
			case tc.wantRequeue:
				if nacks != 1 || !ack.requeues[0] || !rec.Requeued || rec.Queue == names.Dead {
					t.Errorf("nacks %d requeues %v record queue %q, want one nack with requeue, not dead-lettered", nacks, ack.requeues, rec.Queue)
				}
			default:
				if nacks != 1 || ack.requeues[0] || rec.Queue != names.Dead || rec.Code != tc.wantDeadCode {
					t.Errorf("nacks %d requeues %v record queue %q code %q, want dead-lettered with %s", nacks, ack.requeues, rec.Queue, rec.Code, tc.wantDeadCode)
				}
			}
		})
	}
}
