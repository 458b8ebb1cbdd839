package worker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// gateSender holds every Send until gate is closed and counts how many
// are in flight at once.
type gateSender struct {
	fakeSender
	gate     chan struct{}
	mu       sync.Mutex
	inflight int
	peak     int
	entered  chan struct{}
}

func newGateSender(buf int) *gateSender {
	return &gateSender{
		fakeSender: fakeSender{res: vendorapi.Result{Code: "1000", MessageKey: "mk"}},
		gate:       make(chan struct{}),
		entered:    make(chan struct{}, buf),
	}
}

func (s *gateSender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	s.mu.Lock()
	s.inflight++
	s.peak = max(s.peak, s.inflight)
	s.mu.Unlock()
	s.entered <- struct{}{}
	<-s.gate
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
	return s.fakeSender.Send(ctx, n)
}

func (s *gateSender) peakInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// concurrentConsumer is a consumer at concurrency n over r's ledger and
// publisher, sending through s.
func concurrentConsumer(t *testing.T, r *rig, s Sender, n, maxMessages int, recs, logs *bytes.Buffer) *consumer {
	t.Helper()
	c := newTestConsumer(r, recs, logs, maxMessages)
	c.cfg.Concurrency = n
	log := newTestLogger(&lockedWriter{w: logs})
	c.log = log
	c.handler = NewHandler(HandlerConfig{
		Publisher: r.pub, Sender: s, Ledger: r.led, Window: r.h.c.Window,
		Clock: r.h.c.Clock, Names: names, MaxAttempts: 5, Logger: log,
	})
	return c
}

// lockedWriter serialises writes from the handler goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestConcurrencyNInFlight: at concurrency 4, four sends are in flight at
// once and no fifth starts while they are held; once released, every one
// of 12 deliveries is sent once, acked once on its own tag, recorded once
// with a unique seq, and SENT in the ledger.
func TestConcurrencyNInFlight(t *testing.T) {
	const n, total = 4, 12
	for _, tc := range []struct {
		name        string
		concurrency int
		wantPeak    int
	}{
		{"concurrency 1 keeps one in flight (negative control)", 1, 1},
		{"concurrency 4", n, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, inWindow)
			s := newGateSender(total)
			var recs, logs bytes.Buffer
			c := concurrentConsumer(t, r, s, tc.concurrency, total, &recs, &logs)
			gen := c.gens.start()
			ack := &fakeAcker{}
			deliveries := make(chan amqp.Delivery, total)
			for i := 1; i <= total; i++ {
				deliveries <- delivery(ack, uint64(i), body(t, fmt.Sprintf("r-c%02d", i), message.Info), nil)
			}
			res := serveAsync(context.Background(), c, gen, deliveries, make(chan struct{}))
			for i := 0; i < tc.wantPeak; i++ {
				select {
				case <-s.entered:
				case <-time.After(5 * time.Second):
					t.Fatalf("%d sends in flight after 5 s, want %d", i, tc.wantPeak)
				}
			}
			select {
			case <-s.entered:
				t.Fatalf("send %d started while %d were held", tc.wantPeak+1, tc.wantPeak)
			case <-time.After(50 * time.Millisecond):
			}
			close(s.gate)
			got := waitServe(t, res)
			if got.err != errStop {
				t.Fatalf("serve: %+v, want errStop after %d messages", got, total)
			}
			if p := s.peakInFlight(); p != tc.wantPeak {
				t.Errorf("peak in flight %d, want %d", p, tc.wantPeak)
			}
			assertOncePerTag(t, ack, total)
			rs := readRecords(t, &recs)
			if len(rs) != total {
				t.Fatalf("%d records, want %d", len(rs), total)
			}
			seqs, refs := map[int]bool{}, map[string]bool{}
			for _, rec := range rs {
				if rec.Outcome != outcome.Sent {
					t.Errorf("record %s: outcome %s, want SENT", rec.RefKey, rec.Outcome)
				}
				seqs[rec.Seq], refs[rec.RefKey] = true, true
			}
			if len(seqs) != total || len(refs) != total {
				t.Errorf("%d distinct seqs and %d refkeys in %d records, want %d each", len(seqs), len(refs), total, total)
			}
			for i := 1; i <= total; i++ {
				if st := r.state(t, fmt.Sprintf("r-c%02d", i)); st != outcome.Sent {
					t.Errorf("ledger r-c%02d: %q, want SENT", i, st)
				}
			}
			if s.calls() != total {
				t.Errorf("%d sends, want %d", s.calls(), total)
			}
		})
	}
}

// assertOncePerTag checks tags 1..total were each acked exactly once and
// nothing was nacked.
func assertOncePerTag(t *testing.T, a *fakeAcker, total int) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := map[uint64]int{}
	for _, tag := range a.acks {
		seen[tag]++
	}
	for tag := uint64(1); tag <= uint64(total); tag++ {
		if seen[tag] != 1 {
			t.Errorf("tag %d acked %d times, want 1", tag, seen[tag])
		}
	}
	if len(a.acks) != total || len(a.nacks) != 0 {
		t.Errorf("%d acks and %d nacks, want %d and 0", len(a.acks), len(a.nacks), total)
	}
}

// TestConcurrencyMaxMessagesNotExceeded: at concurrency 4 with
// MaxMessages 3, exactly 3 messages are taken and handled; the rest stay
// in the queue.
func TestConcurrencyMaxMessagesNotExceeded(t *testing.T) {
	r := newRig(t, nil, inWindow)
	var recs, logs bytes.Buffer
	c := concurrentConsumer(t, r, r.send, 4, 3, &recs, &logs)
	gen := c.gens.start()
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 10)
	for i := 1; i <= 10; i++ {
		deliveries <- delivery(ack, uint64(i), body(t, fmt.Sprintf("r-max%d", i), message.Info), nil)
	}
	got := waitServe(t, serveAsync(context.Background(), c, gen, deliveries, make(chan struct{})))
	if got.err != errStop {
		t.Fatalf("serve: %+v, want errStop", got)
	}
	if n := len(readRecords(t, &recs)); n != 3 {
		t.Errorf("%d records, want 3", n)
	}
	if acks, _ := ack.counts(); acks != 3 || r.send.calls() != 3 {
		t.Errorf("%d acks and %d sends, want 3 each", acks, r.send.calls())
	}
	if len(deliveries) != 7 {
		t.Errorf("%d deliveries left, want 7", len(deliveries))
	}
}

// TestConcurrencySessionLostInFlight: the session is lost while 3 sends are
// in flight: serve waits for all 3, records them, refuses their acks as
// stale (none reaches the old channel), and reports the loss; the
// redeliveries on the next generation are DUPLICATE, acked once each, not
// sent again.
func TestConcurrencySessionLostInFlight(t *testing.T) {
	const n = 3
	r := newRig(t, nil, inWindow)
	s := newGateSender(n)
	var recs, logs bytes.Buffer
	c := concurrentConsumer(t, r, s, n, 0, &recs, &logs)
	g1 := c.gens.start()
	lost := make(chan struct{})
	ack1 := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, n)
	bodies := make([][]byte, n)
	for i := range n {
		bodies[i] = body(t, fmt.Sprintf("r-lost%d", i), message.Info)
		deliveries <- delivery(ack1, uint64(i+1), bodies[i], nil)
	}
	res := serveAsync(context.Background(), c, g1, deliveries, lost)
	for range n {
		<-s.entered
	}
	c.gens.retire(g1)
	close(lost)
	close(s.gate)
	got := waitServe(t, res)
	if !got.lost || got.err != nil {
		t.Fatalf("serve: %+v, want lost", got)
	}
	if acks, nacks := ack1.counts(); acks != 0 || nacks != 0 {
		t.Errorf("stale channel saw %d acks %d nacks, want none", acks, nacks)
	}
	rs := readRecords(t, &recs)
	if len(rs) != n {
		t.Fatalf("%d records, want %d", len(rs), n)
	}
	for _, rec := range rs {
		if rec.Outcome != outcome.Sent || !strings.Contains(rec.AckError, "lost channel") {
			t.Errorf("record %+v, want SENT with a stale-ack error", rec)
		}
	}

	g2 := c.gens.start()
	ack2 := &fakeAcker{}
	redeliveries := make(chan amqp.Delivery, n)
	for i := range n {
		d := delivery(ack2, uint64(i+1), bodies[i], nil)
		d.Redelivered = true
		redeliveries <- d
	}
	close(redeliveries)
	if got := waitServe(t, serveAsync(context.Background(), c, g2, redeliveries, make(chan struct{}))); !got.lost {
		t.Fatalf("serve did not report the closed delivery channel: %+v", got)
	}
	assertOncePerTag(t, ack2, n)
	if s.calls() != n {
		t.Errorf("vendor saw %d sends, want %d (no second send)", s.calls(), n)
	}
	rs = readRecords(t, &recs)
	for _, rec := range rs[n:] {
		if rec.Outcome != outcome.Duplicate {
			t.Errorf("redelivery record %+v, want DUPLICATE", rec)
		}
	}
}
