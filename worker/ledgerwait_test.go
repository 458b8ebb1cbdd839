package worker

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// pingSeq answers Ping with errs in turn, then nil.
type pingSeq struct {
	Ledger
	errs  []error
	calls int
}

func (p *pingSeq) Ping(context.Context) error {
	p.calls++
	if p.calls <= len(p.errs) {
		return p.errs[p.calls-1]
	}
	return nil
}

// A ledger that stops answering pauses the consume loop until it answers
// again, instead of stopping the worker (a restarted worker meets the same
// ledger: a crash loop; the ledger-blackhole and ledger-frozen scenarios
// show it end to end).
func TestWaitLedgerUntilItAnswers(t *testing.T) {
	down := errors.New("dial tcp: i/o timeout")
	p := &pingSeq{errs: []error{down, down}}
	c := &consumer{cfg: Config{LedgerTimeout: time.Second}, log: slog.New(slog.DiscardHandler),
		handler: &Handler{c: HandlerConfig{Ledger: p}}}
	if !c.waitLedger(context.Background(), newBackoff(time.Millisecond, 2*time.Millisecond, nil)) {
		t.Fatal("waitLedger = false; want true once the ledger answers")
	}
	if p.calls != 3 {
		t.Errorf("Ping called %d times; want 3 (two failures, then an answer)", p.calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p = &pingSeq{errs: []error{down, down, down, down}}
	c.handler = &Handler{c: HandlerConfig{Ledger: p}}
	if c.waitLedger(ctx, newBackoff(time.Millisecond, 2*time.Millisecond, nil)) {
		t.Error("waitLedger = true with a cancelled context and a ledger that never answers; want false")
	}
}

// countingBackoff counts the delays asked for; each is 1 µs.
type countingBackoff struct{ n int }

func (b *countingBackoff) NextBackOff() time.Duration { b.n++; return time.Microsecond }

// writeSeq answers Ping at once but CheckWrite with errs in turn, then
// nil: a ledger that reads but cannot commit yet.
type writeSeq struct {
	Ledger
	errs          []error
	pings, checks int
}

func (w *writeSeq) Ping(context.Context) error { w.pings++; return nil }

func (w *writeSeq) CheckWrite(context.Context) error {
	w.checks++
	if w.checks <= len(w.errs) {
		return w.errs[w.checks-1]
	}
	return nil
}

// The worker wraps its ledger in timedLedger (run.go); the wait must reach
// the store's Ping through it. Before issue 27's fix the wrapper hid Ping:
// waitLedger found no Pinger, slept one delay and reconnected while the
// ledger was still down, and on quorum queues every such cycle dead-lettered
// the head message a step closer (ledger-blackhole-quorum).
func TestWaitLedgerReachesThroughTimedLedger(t *testing.T) {
	down := errors.New("dial tcp: i/o timeout")
	p := &pingSeq{errs: []error{down, down}}
	c := &consumer{cfg: Config{LedgerTimeout: time.Second}, log: slog.New(slog.DiscardHandler),
		handler: &Handler{c: HandlerConfig{Ledger: timedLedger{Ledger: p, m: NewMetrics()}}}}
	if !c.waitLedger(context.Background(), &countingBackoff{}) {
		t.Fatal("waitLedger = false; want true once the ledger answers")
	}
	if p.calls != 3 {
		t.Errorf("Ping reached the store %d times through timedLedger; want 3 (two failures, then an answer)", p.calls)
	}
}

// A ledger that answers a read but cannot commit (a read-only standby, a
// writer lock held) is not taken as back: the wait asks for a write.
func TestWaitLedgerProvesAWrite(t *testing.T) {
	readOnly := errors.New("cannot assign TransactionIds during recovery")
	w := &writeSeq{errs: []error{readOnly, readOnly}}
	c := &consumer{cfg: Config{LedgerTimeout: time.Second}, log: slog.New(slog.DiscardHandler),
		handler: &Handler{c: HandlerConfig{Ledger: timedLedger{Ledger: w, m: NewMetrics()}}}}
	if !c.waitLedger(context.Background(), &countingBackoff{}) {
		t.Fatal("waitLedger = false; want true once a write commits")
	}
	if w.checks != 3 {
		t.Errorf("CheckWrite called %d times; want 3 (two refused, then committed)", w.checks)
	}
}

// The wait backs off before every try, the first included: a ledger that
// answers at once still costs the loop one delay, so a ledger that passes
// its check and fails the next Begin cannot spin the queue's head message
// through its delivery limit.
func TestWaitLedgerAlwaysBacksOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		led  Ledger
	}{
		{"answers at once", &pingSeq{}},
		{"no check at all", fakeLedgerNoCheck{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bo := &countingBackoff{}
			c := &consumer{cfg: Config{LedgerTimeout: time.Second}, log: slog.New(slog.DiscardHandler),
				handler: &Handler{c: HandlerConfig{Ledger: tc.led}}}
			if !c.waitLedger(context.Background(), bo) {
				t.Fatal("waitLedger = false; want true")
			}
			if bo.n != 1 {
				t.Errorf("%d backoff delays before reconnecting; want 1", bo.n)
			}
		})
	}
}

// fakeLedgerNoCheck has neither Ping nor CheckWrite.
type fakeLedgerNoCheck struct{ Ledger }
