package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// events is the ordered log of what a loop test's fakes saw.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, s)
}

func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.list)
}

// fakeSession is a BrokerSession whose deliveries the test puts in a
// buffered channel; end loses it (as the broker closing it would).
type fakeSession struct {
	ev         *events
	deliveries chan amqp.Delivery
	lost       chan struct{}
	ended      func(error)
	once       sync.Once
}

func (s *fakeSession) Consume(tag string, ended func(error)) (<-chan amqp.Delivery, error) {
	s.ev.add("consume " + tag)
	s.ended = ended
	return s.deliveries, nil
}

func (s *fakeSession) Publisher() Publisher  { return &fakePublisher{} }
func (s *fakeSession) Lost() <-chan struct{} { return s.lost }

func (s *fakeSession) Close() {
	s.ev.add("close")
	s.end(nil)
}

func (s *fakeSession) end(err error) {
	s.once.Do(func() {
		s.ended(err)
		close(s.lost)
	})
}

// fakeDialer hands out the sessions open makes, in turn (n is the dial's
// number, from 1).
type fakeDialer struct {
	ev   *events
	n    int
	open func(n int, s *fakeSession)
}

func (d *fakeDialer) Dial(prefetch int) (BrokerSession, error) {
	d.n++
	d.ev.add("dial")
	s := &fakeSession{ev: d.ev, deliveries: make(chan amqp.Delivery, prefetch), lost: make(chan struct{})}
	d.open(d.n, s)
	return s, nil
}

// outageLedger fails every Begin, and every CheckWrite until it has
// refused refusals of them: a ledger that comes back after an outage.
type outageLedger struct {
	ev       *events
	refusals int
	checks   int
}

func (l *outageLedger) Begin(context.Context, string, string, time.Time) (ledger.Decision, ledger.Entry, error) {
	l.ev.add("begin")
	return 0, ledger.Entry{}, errors.New("dial tcp: i/o timeout")
}

func (l *outageLedger) Finish(context.Context, string, string, int, outcome.Outcome, string, time.Time) error {
	return errors.New("dial tcp: i/o timeout")
}

func (l *outageLedger) CheckWrite(context.Context) error {
	l.ev.add("check")
	l.checks++
	if l.checks <= l.refusals {
		return errors.New("dial tcp: i/o timeout")
	}
	return nil
}

// loopRig is a consumer wired by newConsumer (as Run wires it) on
// dialer and led, whose waits are logged and end at once.
func loopRig(ev *events, d BrokerDialer, led Ledger, logs io.Writer) *consumer {
	cfg := Config{Concurrency: 1, WorkerID: "test"}.WithDefaults()
	c := newConsumer(cfg, newTestLogger(logs), consumerParts{
		sender: &fakeSender{res: vendorapi.Result{Code: "1000"}}, ledger: led, window: window.Default(),
		clock: fixedClock{time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}, records: records.NewWriter(io.Discard), dialer: d})
	c.sleeper = func(ctx context.Context, _ time.Duration, _ <-chan struct{}) bool {
		ev.add("sleep")
		return ctx.Err() == nil
	}
	c.jitter = func() float64 { return 0.5 }
	return c
}

// After a ledger failure the loop closes its session and takes no
// delivery again before the ledger has taken a write: the wait reaches
// the store's CheckWrite through timedLedger (newConsumer wraps the
// ledger as Run does), backing off before every try. Before issue 27's
// fix timedLedger hid the check: the loop slept one delay and dialled
// again while the ledger still failed.
func TestLoopWaitsForTheLedgerToTakeWrites(t *testing.T) {
	ev := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &fakeDialer{ev: ev, open: func(n int, s *fakeSession) {
		if n == 1 {
			s.deliveries <- delivery(&fakeAcker{}, 1, body(t, "r-1", message.Info), nil)
			return
		}
		cancel() // the second session ends the test
	}}
	led := &outageLedger{ev: ev, refusals: 2}
	var logs bytes.Buffer
	if err := loopRig(ev, d, led, &logs).loop(ctx); err != nil {
		t.Fatalf("loop: %v", err)
	}
	want := []string{"dial", "consume notifier-worker-1", "begin", "sleep", // the pause after the requeue
		"close", "sleep", "check", "sleep", "check", "sleep", "check", // refused twice, then a write
		"dial", "consume notifier-worker-2", "close"}
	if got := ev.get(); !slices.Equal(got, want) {
		t.Errorf("the loop did\n  %v\nwant\n  %v", got, want)
	}
	if !strings.Contains(logs.String(), "ledger takes writes again") {
		t.Errorf("no line says the ledger takes writes again:\n%s", logs.String())
	}
}

// A session the broker closes ends serve once the delivery in hand is
// accounted; its generation is retired (a late ack is refused), and the
// loop backs off before it dials the next node with a new consumer tag.
func TestLoopReconnectsAfterTheSessionIsLost(t *testing.T) {
	ev := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ack := &fakeAcker{}
	var first *fakeSession
	d := &fakeDialer{ev: ev, open: func(n int, s *fakeSession) {
		if n == 1 {
			first = s
			s.deliveries <- delivery(ack, 1, body(t, "r-1", message.Info), nil)
			return
		}
		cancel()
	}}
	var logs bytes.Buffer
	c := loopRig(ev, d, ledgertest.NewMem(), &logs)
	var late amqp.Delivery
	c.idle = func(inflight int, _ bool) {
		if acks, _ := ack.counts(); inflight == 0 && acks == 1 && d.n == 1 && late.Acknowledger == nil {
			ev.add("idle")
			late = amqp.Delivery{Acknowledger: genAcker{gen: 1, gens: &c.gens, inner: ack}, DeliveryTag: 9}
			first.end(&amqp.Error{Code: amqp.ConnectionForced, Reason: "broker shut down"})
		}
	}
	if err := c.loop(ctx); err != nil {
		t.Fatalf("loop: %v", err)
	}
	want := []string{"dial", "consume notifier-worker-1", "idle", "close", "sleep", "dial", "consume notifier-worker-2", "close"}
	if got := ev.get(); !slices.Equal(got, want) {
		t.Errorf("the loop did\n  %v\nwant\n  %v", got, want)
	}
	if acks, _ := ack.counts(); acks != 1 {
		t.Errorf("%d acks; want the delivery in hand acked before the loss", acks)
	}
	if err := late.Ack(false); !errors.Is(err, ErrStaleDelivery) {
		t.Errorf("ack of the lost generation: %v; want ErrStaleDelivery", err)
	}
	if !strings.Contains(logs.String(), `"msg":"broker session lost"`) {
		t.Errorf("no line says the session was lost:\n%s", logs.String())
	}
}
