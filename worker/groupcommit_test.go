package worker

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// peakSender answers SENT after a short wait and records the most sends
// in flight at once.
type peakSender struct {
	fakeSender
	mu             sync.Mutex
	inflight, peak int
}

func (s *peakSender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	s.mu.Lock()
	s.inflight++
	s.peak = max(s.peak, s.inflight)
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
	return s.fakeSender.Send(ctx, n)
}

// groupRig is a consumer at concurrency 1 over a real bbolt ledger, with
// group commit as Run sets it (grouped) or without it.
func groupRig(t *testing.T, grouped bool, led Ledger, s Sender, maxMessages int, recs *bytes.Buffer) *consumer {
	t.Helper()
	r := newRig(t, nil, inWindow)
	var logs bytes.Buffer
	c := newTestConsumer(r, recs, &logs, maxMessages)
	c.cfg.Concurrency = 1
	c.handler = NewHandler(HandlerConfig{
		Publisher: r.pub, Sender: s, Ledger: led, Window: r.h.c.Window,
		Clock: r.h.c.Clock, Names: names, MaxAttempts: 5, Logger: newTestLogger(&lockedWriter{w: &logs}),
		ReleaseAfterSend: grouped,
	})
	return c
}

// TestGroupCommitOneTransactionPerMessage: at concurrency 1 with group
// commit, message k's Finish and k+1's Begin share one bbolt write
// transaction (about one per message, not two), while one send at a time,
// the delivery order of the records, one ack per message and every
// message SENT in the ledger still hold. Without it (the code before,
// and Postgres or concurrency above 1 now) it is exactly two per message.
func TestGroupCommitOneTransactionPerMessage(t *testing.T) {
	const total = 30
	for _, grouped := range []bool{true, false} {
		t.Run(fmt.Sprintf("group commit %v", grouped), func(t *testing.T) {
			led := openLedger(t)
			if grouped {
				if !groupCommit(Config{Concurrency: 1}, led) {
					t.Fatal("groupCommit refused concurrency 1 on bbolt")
				}
			}
			s := &peakSender{fakeSender: fakeSender{res: vendorapi.Result{Code: "1000", MessageKey: "mk"}}}
			var recs bytes.Buffer
			c := groupRig(t, grouped, led, s, total, &recs)
			ack := &fakeAcker{}
			deliveries := make(chan amqp.Delivery, total)
			for i := 1; i <= total; i++ {
				deliveries <- delivery(ack, uint64(i), body(t, fmt.Sprintf("g-%02d", i), message.Info), nil)
			}
			tx0, err := led.WriteTxID()
			if err != nil {
				t.Fatal(err)
			}
			got := waitServe(t, serveAsync(context.Background(), c, c.gens.start(), deliveries, make(chan struct{})))
			if got.err != errStop {
				t.Fatalf("serve: %+v, want errStop after %d messages", got, total)
			}
			tx1, _ := led.WriteTxID()
			txs := int(tx1 - tx0)
			if grouped && txs > total*3/2 {
				t.Errorf("%d ledger transactions for %d messages, want about one per message (at most %d)", txs, total, total*3/2)
			}
			if !grouped && txs != 2*total {
				t.Errorf("%d ledger transactions for %d messages without group commit, want %d", txs, total, 2*total)
			}
			if s.peak != 1 {
				t.Errorf("peak sends in flight %d, want 1 at concurrency 1", s.peak)
			}
			assertOncePerTag(t, ack, total)
			rs := readRecords(t, &recs)
			if len(rs) != total {
				t.Fatalf("%d records, want %d", len(rs), total)
			}
			for i, rec := range rs {
				if want := fmt.Sprintf("g-%02d", i+1); rec.RefKey != want || rec.Outcome != outcome.Sent {
					t.Errorf("record %d: %s %s, want %s SENT (the delivery order)", i, rec.RefKey, rec.Outcome, want)
				}
				if st := ledgerState(t, led, rec.RefKey); st != outcome.Sent {
					t.Errorf("ledger %s: %q, want SENT", rec.RefKey, st)
				}
			}
		})
	}
}

// slowFinishLedger holds every Finish for delay (or, when only is set,
// only the Finish of that refkey) before it reaches the ledger, as a slow
// disk would.
type slowFinishLedger struct {
	*ledger.Ledger
	delay time.Duration
	only  string
}

func (l slowFinishLedger) Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	if l.only == "" || l.only == refkey {
		time.Sleep(l.delay)
	}
	return l.Ledger.Finish(ctx, refkey, bodyHash, attempt, state, detail, now)
}

// TestGroupCommitRecordsKeepDeliveryOrder: at concurrency 1 the records
// stay in the order of delivery when the first message's Finish is slow
// and the next ones, handled after the first released its slot, finish
// before it.
func TestGroupCommitRecordsKeepDeliveryOrder(t *testing.T) {
	led := openLedger(t)
	groupCommit(Config{Concurrency: 1}, led)
	s := &peakSender{fakeSender: fakeSender{res: vendorapi.Result{Code: "1000", MessageKey: "mk"}}}
	var recs bytes.Buffer
	c := groupRig(t, true, slowFinishLedger{Ledger: led, delay: 100 * time.Millisecond, only: "o-1"}, s, 3, &recs)
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 3)
	for i := 1; i <= 3; i++ {
		deliveries <- delivery(ack, uint64(i), body(t, fmt.Sprintf("o-%d", i), message.Info), nil)
	}
	if got := waitServe(t, serveAsync(context.Background(), c, c.gens.start(), deliveries, make(chan struct{}))); got.err != errStop {
		t.Fatalf("serve: %+v, want errStop after 3 messages", got)
	}
	if n := s.calls(); n != 3 {
		t.Fatalf("%d sends, want 3", n)
	}
	rs := readRecords(t, &recs)
	if len(rs) != 3 {
		t.Fatalf("%d records, want 3", len(rs))
	}
	// o-2 and o-3 were sent while o-1's Finish was held: they overlapped.
	if !rs[1].Start.Before(rs[0].End) {
		t.Errorf("o-2 started %s after o-1 ended %s: the slot was not released after the send", rs[1].Start, rs[0].End)
	}
	for i, rec := range rs {
		if want := fmt.Sprintf("o-%d", i+1); rec.RefKey != want || rec.Seq != i+1 {
			t.Errorf("record %d: %s seq %d, want %s seq %d (the delivery order)", i, rec.RefKey, rec.Seq, want, i+1)
		}
	}
	assertOncePerTag(t, ack, 3)
}

// TestGroupCommitSameRefKeyBackToBack: the same notification delivered
// twice in a row (a producer's double publish) is sent once and the
// second is a DUPLICATE, also when the handler released its slot after
// the first send and that Finish is slow: the second delivery's Begin
// waits for the first to finish instead of finding its attempt open
// (which would make it UNKNOWN).
func TestGroupCommitSameRefKeyBackToBack(t *testing.T) {
	led := openLedger(t)
	groupCommit(Config{Concurrency: 1}, led)
	s := &peakSender{fakeSender: fakeSender{res: vendorapi.Result{Code: "1000", MessageKey: "mk"}}}
	var recs bytes.Buffer
	c := groupRig(t, true, slowFinishLedger{Ledger: led, delay: 50 * time.Millisecond}, s, 2, &recs)
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 2)
	b := body(t, "twice", message.Info)
	deliveries <- delivery(ack, 1, b, nil)
	deliveries <- delivery(ack, 2, b, nil)
	if got := waitServe(t, serveAsync(context.Background(), c, c.gens.start(), deliveries, make(chan struct{}))); got.err != errStop {
		t.Fatalf("serve: %+v, want errStop after 2 messages", got)
	}
	rs := readRecords(t, &recs)
	if len(rs) != 2 || rs[0].Outcome != outcome.Sent || rs[1].Outcome != outcome.Duplicate {
		t.Fatalf("records %+v, want SENT then DUPLICATE", rs)
	}
	if n := s.calls(); n != 1 {
		t.Errorf("%d sends, want 1", n)
	}
	assertOncePerTag(t, ack, 2)
}

func ledgerState(t *testing.T, led *ledger.Ledger, refkey string) outcome.Outcome {
	t.Helper()
	e, ok, err := led.Get(context.Background(), refkey)
	if err != nil || !ok {
		t.Fatalf("ledger get %s: %v, found %v", refkey, err, ok)
	}
	return e.State
}
