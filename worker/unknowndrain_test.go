package worker

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// fakeQueue hands out its deliveries one Get at a time.
type fakeQueue struct {
	ds   []amqp.Delivery
	gets []string
}

func (q *fakeQueue) Get(queue string, autoAck bool) (amqp.Delivery, bool, error) {
	q.gets = append(q.gets, queue)
	if autoAck || len(q.ds) == 0 {
		return amqp.Delivery{}, false, nil
	}
	d := q.ds[0]
	q.ds = q.ds[1:]
	return d, true, nil
}

// TestDrainUnknownMovesSettledCopies: each copy in the unknown queue goes
// where its refkey's ledger state says, and only a settled one leaves.
func TestDrainUnknownMovesSettledCopies(t *testing.T) {
	ctx := context.Background()
	store := ledgertest.NewMem()
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	settle := func(refkey string, as outcome.Outcome, src, code string) {
		_, e, _ := store.Begin(ctx, refkey, "", t0)
		if err := store.Finish(ctx, refkey, "", e.Attempts, outcome.Unknown, "timeout", t0); err != nil {
			t.Fatal(err)
		}
		if as == outcome.Unknown {
			return
		}
		r := ledger.Resolution{By: "t", Why: "t", At: t0.Add(time.Minute), Source: src, Code: code}
		if err := store.Resolve(ctx, refkey, as, r, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	settle("sent", outcome.Sent, ledger.SourceReport, "")
	settle("failed", outcome.Rejected, ledger.SourcePull, "3015")
	settle("horizon", outcome.NotSent, ledger.SourceHorizon, "")
	settle("open", outcome.Unknown, "", "")
	a := &fakeAcker{}
	hdr := func() amqp.Table {
		return queues.WithAttempt(amqp.Table{queues.HeaderOutcome: "UNKNOWN", queues.HeaderReason: "TIMEOUT"}, 1)
	}
	q := &fakeQueue{}
	for i, k := range []string{"sent", "failed", "horizon", "open", "stranger"} {
		q.ds = append(q.ds, delivery(a, uint64(i+1), body(t, k, message.Info), hdr()))
	}
	q.ds = append(q.ds, delivery(a, 99, body(t, "beyond-the-limit", message.Info), hdr()))
	pub := &fakePublisher{}
	names := queues.NamesFor("notifications")
	st, err := drainUnknown(ctx, q, pub, store, names, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := (drainStats{Acked: 1, Failed: 1, Resent: 1, Kept: 2}); st != want {
		t.Errorf("stats = %+v; want %+v", st, want)
	}
	if len(q.ds) != 1 || len(q.gets) != 5 {
		t.Errorf("%d gets, %d left; want 5 gets (the limit) and the 6th untouched", len(q.gets), len(q.ds))
	}
	if !slices.Equal(a.acks, []uint64{1, 2, 3, 4, 5}) || len(a.nacks) != 0 {
		t.Errorf("acks %v nacks %v; want every one acked after its copy", a.acks, a.nacks)
	}
	var got []string
	for _, p := range pub.pubs {
		got = append(got, p.queue)
	}
	want := []string{names.Failed, names.Main, names.Unknown, names.Unknown}
	if !slices.Equal(got, want) {
		t.Fatalf("copies to %v; want %v (SENT acked away, no copy)", got, want)
	}
	if h := pub.pubs[0].p.Headers; h[queues.HeaderOutcome] != "REJECTED" || h[queues.HeaderCode] != "3015" || h[queues.HeaderReason] != "SETTLED_PULL" {
		t.Errorf("failed copy headers = %v; want REJECTED, code 3015, SETTLED_PULL", h)
	}
	if h := pub.pubs[1].p.Headers; h[queues.HeaderOutcome] != nil || queues.Attempt(h) != 1 {
		t.Errorf("resent copy headers = %v; want no outcome, attempt 1 kept", h)
	}
	if h := pub.pubs[2].p.Headers; h[queues.HeaderOutcome] != "UNKNOWN" {
		t.Errorf("kept copy headers = %v; want unchanged", h)
	}
}

func TestDrainUnknownKeepsTheMessageWhenACopyFails(t *testing.T) {
	ctx := context.Background()
	store := ledgertest.NewMem()
	_, e, _ := store.Begin(ctx, "k", "", time.Now())
	_ = store.Finish(ctx, "k", "", e.Attempts, outcome.Unknown, "", time.Now())
	a := &fakeAcker{}
	q := &fakeQueue{ds: []amqp.Delivery{delivery(a, 1, body(t, "k", message.Info), amqp.Table{})}}
	_, err := drainUnknown(ctx, q, &fakePublisher{err: errBoom}, store, queues.NamesFor("n"), 10)
	if err == nil {
		t.Fatal("drain returned nil although the copy was not published")
	}
	if len(a.acks) != 0 || !slices.Equal(a.requeues, []bool{true}) {
		t.Errorf("acks %v requeues %v; want the original nacked with requeue, never acked", a.acks, a.requeues)
	}
}

// TestDrainUnknownRepairsADeletedQueue: the failed queue was deleted
// while the worker ran (found by the simulator, seed 4684 of the fixed
// set): the copy of a settled REJECTED message is returned unroutable, the
// drain declares the topology again through its publisher's repair and
// the second copy lands, so the message leaves the unknown queue. Without
// the repair every later pass stopped at the same message, and the
// settled messages behind it (a NOT_SENT one to be sent again among them)
// waited in the unknown queue for as long as the queue stayed deleted.
func TestDrainUnknownRepairsADeletedQueue(t *testing.T) {
	ctx := context.Background()
	store := ledgertest.NewMem()
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	_, e, _ := store.Begin(ctx, "k", "", t0)
	_ = store.Finish(ctx, "k", "", e.Attempts, outcome.Unknown, "", t0)
	r := ledger.Resolution{By: "t", Why: "t", At: t0.Add(time.Minute), Source: ledger.SourceReport, Code: "RF"}
	if err := store.Resolve(ctx, "k", outcome.Rejected, r, time.Minute); err != nil {
		t.Fatal(err)
	}
	a := &fakeAcker{}
	q := &fakeQueue{ds: []amqp.Delivery{delivery(a, 1, body(t, "k", message.Info), amqp.Table{})}}
	bp := &brokenPublisher{err: ErrUnroutable, healAfter: 1}
	names := queues.NamesFor("n")
	st, err := drainUnknown(ctx, q, bp, store, names, 10)
	if err != nil {
		t.Fatalf("drain: %v (publishes %d, repairs %d)", err, bp.publishes, bp.repairs)
	}
	if st.Failed != 1 || bp.repairs != 1 || len(bp.pubs) != 1 || bp.pubs[0].queue != names.Failed {
		t.Errorf("stats %+v, %d repairs, copies %v; want one copy in %s after one repair", st, bp.repairs, bp.pubs, names.Failed)
	}
	if !slices.Equal(a.acks, []uint64{1}) || len(a.nacks) != 0 {
		t.Errorf("acks %v nacks %v; want the original acked once its copy landed", a.acks, a.nacks)
	}
	// A queue that stays unroutable after every repair: the message stays.
	a2 := &fakeAcker{}
	q2 := &fakeQueue{ds: []amqp.Delivery{delivery(a2, 1, body(t, "k", message.Info), amqp.Table{})}}
	never := &brokenPublisher{err: ErrUnroutable, healAfter: -1}
	if _, err := drainUnknown(ctx, q2, never, store, names, 10); !errors.Is(err, ErrUnroutable) || len(a2.acks) != 0 ||
		never.publishes != DefaultRepublishAttempts {
		t.Errorf("never routable: err %v, acks %v, %d publishes; want ErrUnroutable, no ack, %d publishes", err, a2.acks, never.publishes, DefaultRepublishAttempts)
	}
}

// brokerNodes is a fake dial of unknownDrain over three nodes: the first
// a closed port on 127.0.0.1 (a real refused dial), the others refused by
// the fake except up, whose dial succeeds. tried lists every URL dialled.
type brokerNodes struct {
	closed, second, third string
	up                    string
	tried                 []string
}

var errNodeDown = errors.New("node down")

func newBrokerNodes(t *testing.T) *brokerNodes {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &brokerNodes{closed: "amqp://u:secret1@" + ln.Addr().String() + "/",
		second: "amqp://u:secret2@rabbit-2:5672/%2F", third: "amqp://u:secret3@rabbit-3:5672/"}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *brokerNodes) drain() *unknownDrain {
	return &unknownDrain{
		cfg: Config{AMQPURL: b.closed + ", " + b.second + "," + b.third, DialTimeout: time.Second},
		log: slog.New(slog.DiscardHandler),
		dial: func(url string, c amqp.Config) (*amqp.Connection, error) {
			b.tried = append(b.tried, url)
			switch url {
			case b.closed:
				return amqp.DialConfig(url, c) // refused: nothing listens there
			case b.up:
				return &amqp.Connection{}, nil // never used: the tests only dial
			}
			return nil, errNodeDown
		},
	}
}

// TestUnknownDrainDialsEveryBroker: the drain dials the nodes of
// Config.AMQPURL in turn until one answers, and when none does its error
// names every URL tried, passwords redacted.
func TestUnknownDrainDialsEveryBroker(t *testing.T) {
	b := newBrokerNodes(t)
	_, err := b.drain().drainOnce(context.Background())
	if want := []string{b.closed, b.second, b.third}; !slices.Equal(b.tried, want) {
		t.Fatalf("dialled %q; want every node in turn %q", b.tried, want)
	}
	if err == nil || !errors.Is(err, errNodeDown) {
		t.Fatalf("drain error %v; want one wrapping every dial's error", err)
	}
	for _, url := range []string{b.closed, b.second, b.third} {
		if !strings.Contains(err.Error(), RedactURL(url)) {
			t.Errorf("drain error %q does not name %s", err, RedactURL(url))
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("drain error prints a password: %q", err)
	}
}

// TestUnknownDrainStartsAtTheNodeThatAnswered: after the third node
// answered, the next drain dials it first, not the refused first node
// again; a stopped worker dials no node at all (negative control).
func TestUnknownDrainStartsAtTheNodeThatAnswered(t *testing.T) {
	b := newBrokerNodes(t)
	u := b.drain()
	b.up = b.third
	if _, err := u.dialBroker(context.Background()); err != nil || !slices.Equal(b.tried, []string{b.closed, b.second, b.third}) {
		t.Fatalf("dial tried %q (%v); want the three nodes in turn, the third answering", b.tried, err)
	}
	b.tried = nil
	if _, err := u.dialBroker(context.Background()); err != nil || !slices.Equal(b.tried, []string{b.third}) {
		t.Errorf("next dial tried %q (%v); want the node that answered last, %q, first", b.tried, err, b.third)
	}
	b.tried = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := u.dialBroker(ctx); !errors.Is(err, context.Canceled) || len(b.tried) != 0 {
		t.Errorf("dial after stop tried %q (%v); want none and an error", b.tried, err)
	}
}
