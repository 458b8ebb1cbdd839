package worker

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestPacer: takes as soon as allowed come exactly one interval apart; a
// take late by less than an interval keeps the schedule (the mean rate
// stays 1/interval); after a long pause the schedule restarts at the take
// (no catch-up burst); interval 0 never waits.
func TestPacer(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	const iv = 40 * time.Millisecond
	p := &pacer{interval: iv}
	now := t0
	for i := range 100 {
		if w := p.wait(now); i > 0 && w != iv {
			t.Fatalf("take %d: wait %v, want %v", i, w, iv)
		}
		now = now.Add(p.wait(now))
		p.took(now)
	}
	if got, want := now.Sub(t0), 99*iv; got != want {
		t.Errorf("100 takes span %v, want %v (rate 25/s)", got, want)
	}
	// Late by 10 ms: the next is due 30 ms later, on the old schedule.
	now = now.Add(iv + 10*time.Millisecond)
	p.took(now)
	if w := p.wait(now); w != 30*time.Millisecond {
		t.Errorf("after a take 10 ms late: wait %v, want 30ms", w)
	}
	// A 1 s pause: one take, then a full interval, not a burst of 25.
	now = now.Add(time.Second)
	if w := p.wait(now); w != 0 {
		t.Fatalf("after a pause: wait %v, want 0", w)
	}
	p.took(now)
	if w := p.wait(now); w != iv {
		t.Errorf("second take after a pause: wait %v, want %v", w, iv)
	}
	off := &pacer{}
	off.took(now)
	if w := off.wait(now); w != 0 {
		t.Errorf("interval 0: wait %v, want 0", w)
	}
}

// stampSender records when each Send starts.
type stampSender struct {
	fakeSender
	mu     sync.Mutex
	stamps []time.Time
}

func (s *stampSender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	s.mu.Lock()
	s.stamps = append(s.stamps, time.Now())
	s.mu.Unlock()
	return s.fakeSender.Send(ctx, n)
}

// TestServePaced: at concurrency 4 with SendInterval 80 ms, 6 sends span
// at least 4 intervals (a paced worker cannot exceed 12.5/s even with free
// slots; one interval is left for the test ledger's fsync jitter between
// take and send), and every message is still SENT and acked once; without
// an interval (the negative control) the same 6 go out within 2.5
// intervals (the test ledger serialises its Begins, a few ms each).
func TestServePaced(t *testing.T) {
	const total, iv = 6, 80 * time.Millisecond
	for _, tc := range []struct {
		name     string
		interval time.Duration
		paced    bool
	}{
		{"no interval sends at once (negative control)", 0, false},
		{"send interval 80ms", iv, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, inWindow)
			s := &stampSender{fakeSender: fakeSender{res: vendorapi.Result{Code: "1000", MessageKey: "mk"}}}
			var recs, logs bytes.Buffer
			c := concurrentConsumer(t, r, s, 4, total, &recs, &logs)
			c.pace = pacer{interval: tc.interval}
			gen := c.gens.start()
			ack := &fakeAcker{}
			deliveries := make(chan amqp.Delivery, total)
			for i := 1; i <= total; i++ {
				deliveries <- delivery(ack, uint64(i), body(t, fmt.Sprintf("r-p%02d", i), message.Info), nil)
			}
			got := waitServe(t, serveAsync(context.Background(), c, gen, deliveries, make(chan struct{})))
			if got.err != errStop {
				t.Fatalf("serve: %+v, want errStop after %d messages", got, total)
			}
			assertOncePerTag(t, ack, total)
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.stamps) != total {
				t.Fatalf("%d sends, want %d", len(s.stamps), total)
			}
			first, last := s.stamps[0], s.stamps[0]
			for _, st := range s.stamps {
				first, last = minTime(first, st), maxTime(last, st)
			}
			span := last.Sub(first)
			if floor := time.Duration(total-2) * iv; tc.paced && span < floor {
				t.Errorf("paced: %d sends in %v, want at least %v", total, span, floor)
			}
			if !tc.paced && span >= 5*iv/2 {
				t.Errorf("unpaced: %d sends took %v, want them at once", total, span)
			}
		})
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
