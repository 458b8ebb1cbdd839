package worker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// stepClock is a worker clock a test moves by hand.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// hookLedger runs beforeBegin / beforeFinish (with the call's ctx) ahead of
// the wrapped ledger's Begin / Finish: a slow, blackholed or clock-moving
// ledger.
type hookLedger struct {
	ledgerGetter
	beforeBegin  func(ctx context.Context) error
	beforeFinish func(ctx context.Context) error
}

func (l hookLedger) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	if l.beforeBegin != nil {
		if err := l.beforeBegin(ctx); err != nil {
			return 0, ledger.Entry{}, err
		}
	}
	return l.ledgerGetter.Begin(ctx, refkey, bodyHash, now)
}

func (l hookLedger) Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	if l.beforeFinish != nil {
		if err := l.beforeFinish(ctx); err != nil {
			return err
		}
	}
	return l.ledgerGetter.Finish(ctx, refkey, bodyHash, attempt, state, detail, now)
}

// blackhole waits for ctx's deadline, or for release (closed by the test's
// cleanup, so a handler without a deadline does not hang the test binary).
func blackhole(release <-chan struct{}) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
			return errors.New("released by the test after it gave up")
		}
	}
}

// handleWithin runs Handle and fails the test when it takes longer than d.
func handleWithin(t *testing.T, h *Handler, d time.Duration, ack *fakeAcker, b []byte) (records.Record, time.Duration, error) {
	t.Helper()
	type result struct {
		rec records.Record
		err error
	}
	out := make(chan result, 1)
	start := time.Now()
	go func() {
		rec, err := h.Handle(context.Background(), delivery(ack, 5, b, nil))
		out <- result{rec, err}
	}()
	select {
	case r := <-out:
		return r.rec, time.Since(start), r.err
	case <-time.After(d):
		t.Fatalf("Handle did not return within %v: a blackholed ledger hangs the worker past its shutdown grace", d)
		return records.Record{}, 0, nil
	}
}

// TestLedgerBeginDeadline: a ledger that never answers Begin is given up
// after the ledger deadline (DefaultLedgerTimeout): nothing is sent, the
// delivery is requeued and the worker stops (ErrLedger).
func TestLedgerBeginDeadline(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := newRig(t, nil, inWindow)
	r.h.c.Ledger = hookLedger{ledgerGetter: r.led, beforeBegin: blackhole(release)}
	ack := &fakeAcker{}
	rec, took, err := handleWithin(t, r.h, DefaultLedgerTimeout+3*time.Second, ack, body(t, "r-bh-begin", message.Info))
	if !errors.Is(err, ErrLedger) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want ErrLedger wrapping the deadline", err)
	}
	if took < DefaultLedgerTimeout {
		t.Errorf("returned after %v, before the ledger deadline %v", took, DefaultLedgerTimeout)
	}
	if r.send.calls() != 0 {
		t.Errorf("sent %d times without a Begin", r.send.calls())
	}
	if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || !ack.requeues[0] || !rec.Requeued {
		t.Errorf("acks %d nacks %d requeues %v requeued %v, want one nack with requeue", acks, nacks, ack.requeues, rec.Requeued)
	}
}

// TestLedgerFinishDeadlineAfterSent: the send went out and the ledger never
// answers Finish: the outcome is not lost (the delivery is acked, the
// Record says SENT with the vendor's message key) and the worker stops.
func TestLedgerFinishDeadlineAfterSent(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := newRig(t, nil, inWindow)
	r.h.c.Ledger = hookLedger{ledgerGetter: r.led, beforeFinish: blackhole(release)}
	ack := &fakeAcker{}
	rec, _, err := handleWithin(t, r.h, DefaultLedgerTimeout+3*time.Second, ack, body(t, "r-bh-finish", message.Info))
	if !errors.Is(err, ErrLedger) {
		t.Errorf("error %v, want ErrLedger", err)
	}
	if rec.Outcome != outcome.Sent || rec.Code != "1000" || r.send.calls() != 1 {
		t.Errorf("outcome %q code %q sends %d, want SENT 1000 once", rec.Outcome, rec.Code, r.send.calls())
	}
	if acks, nacks := ack.counts(); acks != 1 || nacks != 0 {
		t.Errorf("acks %d nacks %d, want the sent message acked", acks, nacks)
	}
	// The ledger keeps the attempt open: a copy becomes UNKNOWN, never a
	// second send.
	if got := r.state(t, "r-bh-finish"); got != ledger.Attempting {
		t.Errorf("ledger %q, want %q", got, ledger.Attempting)
	}
}

// TestNoSendFromLostSession: a delivery whose channel generation was
// retired while it waited for Begin is not sent; the ledger records
// NOT_SENT (it provably did not leave), so the broker's redelivery is sent.
func TestNoSendFromLostSession(t *testing.T) {
	r := newRig(t, nil, inWindow)
	var gens generations
	gen := gens.start()
	r.h.c.Ledger = hookLedger{ledgerGetter: r.led, beforeBegin: func(context.Context) error {
		gens.retire(gen) // the connection drops during Begin
		return nil
	}}
	inner := &fakeAcker{}
	b := body(t, "r-lost", message.Info)
	d := delivery(genAcker{gen: gen, gens: &gens, inner: inner}, 4, b, nil)
	rec, err := r.h.Handle(context.Background(), d)
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if r.send.calls() != 0 {
		t.Fatalf("sent %d times from a lost session", r.send.calls())
	}
	if !rec.Requeued || len(r.pub.pubs) != 0 {
		t.Errorf("requeued %v re-publishes %d, want requeued by the broker, no copy", rec.Requeued, len(r.pub.pubs))
	}
	if got := r.state(t, "r-lost"); got != outcome.NotSent {
		t.Errorf("ledger %q, want %q", got, outcome.NotSent)
	}
	// The broker's redelivery on the next session is sent once.
	gen2 := gens.start()
	rec2, err := r.h.Handle(context.Background(), delivery(genAcker{gen: gen2, gens: &gens, inner: inner}, 1, b, nil))
	if err != nil || rec2.Outcome != outcome.Sent || r.send.calls() != 1 {
		t.Errorf("redelivery: outcome %q err %v sends %d, want SENT once", rec2.Outcome, err, r.send.calls())
	}
}

// TestSendFence: a worker frozen (or a Begin slowed) between Begin and the
// request for longer than the fence does not send; the attempt is closed
// NOT_SENT and the message goes to the retry queue. A normal Begin (well
// within the fence) sends: the negative control.
func TestSendFence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pause    time.Duration
		wantSent int
		wantOut  outcome.Outcome
		wantQ    string
	}{
		{"frozen past the fence", DefaultSendFence + time.Second, 0, outcome.NotSent, names.Retry},
		{"frozen a minute", time.Minute, 0, outcome.NotSent, names.Retry},
		{"normal begin", DefaultLedgerTimeout / 2, 1, outcome.Sent, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, inWindow)
			clk := &stepClock{t: inWindow}
			r.h.c.Clock = clk
			r.h.c.Ledger = hookLedger{ledgerGetter: r.led, beforeBegin: func(context.Context) error {
				clk.set(inWindow.Add(tc.pause))
				return nil
			}}
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 2, body(t, "r-fence", message.Info), nil))
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if r.send.calls() != tc.wantSent || rec.Outcome != tc.wantOut || rec.Queue != tc.wantQ {
				t.Errorf("sends %d outcome %q queue %q, want %d %q %q", r.send.calls(), rec.Outcome, rec.Queue, tc.wantSent, tc.wantOut, tc.wantQ)
			}
			want := tc.wantOut
			if got := r.state(t, "r-fence"); got != want {
				t.Errorf("ledger %q, want %q", got, want)
			}
		})
	}
}

// lateLedger is a real ledger whose Begin starts only once the test closes
// release, whatever its ctx says: a Begin queued behind bbolt's writer
// lock (a long Prune, a slow commit) past the handler's deadline. done
// gets each inner Begin's error when it returns.
type lateLedger struct {
	ledgerGetter
	release chan struct{}
	done    chan error
}

func (l lateLedger) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	<-l.release
	d, e, err := l.ledgerGetter.Begin(ctx, refkey, bodyHash, now)
	l.done <- err
	return d, e, err
}

// TestLedgerBeginPastDeadlineLeavesNoAttempt: a Begin that reaches the
// bbolt file only after the handler gave up on it (LedgerTimeout 50 ms)
// writes nothing. The delivery is requeued unsent, the file has no
// ATTEMPTING entry for its refkey, and the redelivery is sent once
// instead of going to the unknown queue as a false UNKNOWN.
func TestLedgerBeginPastDeadlineLeavesNoAttempt(t *testing.T) {
	const refkey = "r-late-begin"
	led := openLedger(t)
	r := newRig(t, led, inWindow)
	late := lateLedger{ledgerGetter: led, release: make(chan struct{}), done: make(chan error, 1)}
	r.h.c.Ledger, r.h.c.LedgerTimeout = late, 50*time.Millisecond
	b := body(t, refkey, message.Info)
	ack := &fakeAcker{}
	rec, err := r.h.Handle(context.Background(), delivery(ack, 1, b, nil))
	if !errors.Is(err, ErrLedgerDeadline) || r.send.calls() != 0 {
		t.Fatalf("Handle = %v, sends %d; want ErrLedgerDeadline and no send", err, r.send.calls())
	}
	if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || !ack.requeues[0] || !rec.Requeued {
		t.Errorf("acks %d nacks %d requeues %v requeued %v, want one nack with requeue", acks, nacks, ack.requeues, rec.Requeued)
	}
	close(late.release) // the writer lock is free: the abandoned Begin runs now
	if berr := <-late.done; !errors.Is(berr, context.DeadlineExceeded) {
		t.Errorf("the abandoned Begin returned %v; want it refused with its deadline", berr)
	}
	if got := r.state(t, refkey); got != "" {
		t.Errorf("ledger %q after the abandoned Begin; want no entry (nothing left the worker)", got)
	}

	ack2 := &fakeAcker{}
	d := delivery(ack2, 2, b, nil)
	d.Redelivered = true
	rec2, err := r.h.Handle(context.Background(), d)
	<-late.done
	if err != nil || rec2.Outcome != outcome.Sent || rec2.Queue != "" || r.send.calls() != 1 {
		t.Errorf("redelivery: outcome %q queue %q err %v sends %d; want SENT once, not routed to %s",
			rec2.Outcome, rec2.Queue, err, r.send.calls(), names.Unknown)
	}
	if got := r.state(t, refkey); got != outcome.Sent {
		t.Errorf("ledger %q after the redelivery; want %q", got, outcome.Sent)
	}
}
