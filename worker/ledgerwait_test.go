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
	if !c.waitLedger(context.Background(), newBackoff(time.Millisecond, 2*time.Millisecond)) {
		t.Fatal("waitLedger = false; want true once the ledger answers")
	}
	if p.calls != 3 {
		t.Errorf("Ping called %d times; want 3 (two failures, then an answer)", p.calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p = &pingSeq{errs: []error{down, down, down, down}}
	c.handler = &Handler{c: HandlerConfig{Ledger: p}}
	if c.waitLedger(ctx, newBackoff(time.Millisecond, 2*time.Millisecond)) {
		t.Error("waitLedger = true with a cancelled context and a ledger that never answers; want false")
	}
}
