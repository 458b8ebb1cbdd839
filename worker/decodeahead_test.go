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
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// heldSender holds each send until the test lets it go, and says when
// one is in flight.
type heldSender struct {
	fakeSender
	mu       sync.Mutex
	inflight int
	peak     int
	done     int           // sends answered
	started  chan string   // the refkey of each send as it starts
	proceed  chan struct{} // one value lets one send answer
}

func (s *heldSender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	s.mu.Lock()
	s.inflight++
	s.peak = max(s.peak, s.inflight)
	s.mu.Unlock()
	s.started <- n.RefKey
	<-s.proceed
	s.mu.Lock()
	s.inflight--
	s.done++
	s.mu.Unlock()
	return s.fakeSender.Send(ctx, n)
}

func (s *heldSender) answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// decodeLog wraps message.Decode and notes, per refkey, how many sends
// had been answered when its body was decoded.
type decodeLog struct {
	mu       sync.Mutex
	answered map[string]int
}

func (l *decodeLog) wrap(s *heldSender) func([]byte) (message.Notification, error) {
	return func(b []byte) (message.Notification, error) {
		n, err := message.Decode(b)
		l.mu.Lock()
		l.answered[refKeyOf(b)] = s.answered()
		l.mu.Unlock()
		return n, err
	}
}

func (l *decodeLog) at(refkey string) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.answered[refkey]
	return v, ok
}

// decodeAheadRig is groupRig with a heldSender and a decodeLog.
func decodeAheadRig(t *testing.T, maxMessages int, recs *bytes.Buffer) (*consumer, *heldSender, *decodeLog) {
	t.Helper()
	led := openLedger(t)
	if !groupCommit(Config{Concurrency: 1}, led) {
		t.Fatal("groupCommit refused concurrency 1 on bbolt")
	}
	s := &heldSender{fakeSender: fakeSender{res: vendorapi.Result{Code: "1000", MessageKey: "mk"}},
		started: make(chan string, 16), proceed: make(chan struct{}, 16)}
	c := groupRig(t, true, led, s, maxMessages, recs)
	dl := &decodeLog{answered: map[string]int{}}
	c.handler.c.Decode = dl.wrap(s)
	return c, s, dl
}

func awaitSend(t *testing.T, s *heldSender, want string) {
	t.Helper()
	select {
	case got := <-s.started:
		if got != want {
			t.Fatalf("send of %s started, want %s (the queue's order)", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no send of %s within 10 s", want)
	}
}

// TestDecodeAheadWhileSending: at concurrency 1 with the grouped commit,
// the next delivery's body is decoded before the message before it is
// answered (before, only once that send was over: on the path between
// two sends), yet one send is in flight at a time, in the queue's order;
// an invalid body decoded ahead still ends INVALID in its turn.
func TestDecodeAheadWhileSending(t *testing.T) {
	const total = 4
	var recs bytes.Buffer
	c, s, dl := decodeAheadRig(t, total, &recs)
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, total)
	keys := []string{"a-1", "a-2", "a-bad", "a-4"}
	for i, k := range keys {
		b := body(t, k, message.Info)
		if k == "a-bad" {
			b = []byte(`{"refkey":"a-bad","category":"info"}`) // fields missing: INVALID
		}
		deliveries <- delivery(ack, uint64(i+1), b, nil)
	}
	res := serveAsync(context.Background(), c, c.gens.start(), deliveries, make(chan struct{}))
	for _, k := range []string{"a-1", "a-2", "a-4"} {
		awaitSend(t, s, k)
		// The next delivery is taken and decoded while this send is held.
		deadline := time.Now().Add(5 * time.Second)
		next := map[string]string{"a-1": "a-2", "a-2": "a-bad"}[k]
		for next != "" {
			if _, ok := dl.at(next); ok || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		s.proceed <- struct{}{}
	}
	got := waitServe(t, res)
	if got.err != errStop {
		t.Fatalf("serve: %+v, want errStop after %d messages", got, total)
	}
	// a-2 is decoded before a-1's send is answered, a-bad before a-2's
	// (taken one send earlier than a free slot would take them).
	for k, want := range map[string]int{"a-2": 0, "a-bad": 1} {
		if got, ok := dl.at(k); !ok || got != want {
			t.Errorf("%s decoded after %d answered sends (decoded: %v), want %d: while the send before it was held", k, got, ok, want)
		}
	}
	if s.peak != 1 {
		t.Errorf("peak sends in flight %d, want 1", s.peak)
	}
	rs := readRecords(t, &recs)
	want := []outcome.Outcome{outcome.Sent, outcome.Sent, outcome.Invalid, outcome.Sent}
	if len(rs) != total {
		t.Fatalf("%d records, want %d", len(rs), total)
	}
	for i, r := range rs {
		if r.RefKey != keys[i] || r.Outcome != want[i] {
			t.Errorf("record %d: %s %s, want %s %s", i, r.RefKey, r.Outcome, keys[i], want[i])
		}
	}
	assertOncePerTag(t, ack, total)
}

// TestDecodeAheadLeftToTheBrokerOnStop: a stop while a send is in flight
// finishes that message; the delivery taken ahead of its turn is neither
// handled, acked nor nacked: unacked, the broker gives it back when the
// channel closes, as it does a delivery still in the prefetch buffer.
func TestDecodeAheadLeftToTheBrokerOnStop(t *testing.T) {
	var recs bytes.Buffer
	c, s, dl := decodeAheadRig(t, 0, &recs)
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 2)
	for i, k := range []string{"s-1", "s-2"} {
		deliveries <- delivery(ack, uint64(i+1), body(t, k, message.Info), nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := serveAsync(ctx, c, c.gens.start(), deliveries, make(chan struct{}))
	awaitSend(t, s, "s-1")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := dl.at("s-2"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("s-2 was not taken ahead within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	s.proceed <- struct{}{}
	if got := waitServe(t, res); got.err != errStop {
		t.Fatalf("serve: %+v, want errStop", got)
	}
	acks, nacks := ack.counts()
	if acks != 1 || nacks != 0 {
		t.Errorf("acks %d nacks %d, want s-1 acked and s-2 left unacked", acks, nacks)
	}
	rs := readRecords(t, &recs)
	if len(rs) != 1 || rs[0].RefKey != "s-1" || rs[0].Outcome != outcome.Sent {
		t.Errorf("records %v, want only s-1 SENT", rs)
	}
	if len(s.started) != 0 {
		t.Errorf("a send started after the stop: %s", fmt.Sprint(<-s.started))
	}
}
