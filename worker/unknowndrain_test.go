package worker

import (
	"context"
	"slices"
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
