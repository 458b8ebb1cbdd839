package sim

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
)

// ctxStore records the context its Begin was given.
type ctxStore struct {
	*ledgertest.Mem
	err error
}

func (s *ctxStore) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	s.err = ctx.Err()
	return s.Mem.Begin(ctx, refkey, bodyHash, now)
}

// TestLedgerFaults: each fault answers at once with what it promises:
// what it writes, what it returns, how far it moves the clock, and what
// it leaves in doubt.
func TestLedgerFaults(t *testing.T) {
	cases := []struct {
		fault, op  string
		wrote      bool
		fails      bool
		deadline   bool // the error wraps context.DeadlineExceeded
		expiredCtx bool // the store was handed a context already past its deadline
		moved      time.Duration
		doubt      bool
	}{
		{"", "", true, false, false, false, 0, false},
		{"error", "begin", false, true, false, false, 0, false},
		{"timeout", "", false, true, true, false, 0, false},
		{"commit-timeout", "begin", true, true, true, false, 0, true},
		{"slow", "begin", true, false, false, false, time.Second, false},
		{"pause", "", true, false, false, false, time.Second, false},
		{"past-deadline", "begin", false, true, true, true, DeadlineModel, false}, // Mem honours its ctx (issue 27): nothing written
		{"error", "finish", true, false, false, false, 0, false},                  // armed for another op
	}
	for _, c := range cases {
		t.Run(c.fault+"/"+c.op, func(t *testing.T) {
			clock := NewClock(noon)
			inner := &ctxStore{Mem: ledgertest.NewMem()}
			doubted := false
			l := &Ledger{inner: inner, clock: clock, Faults: map[string]int{}, doubt: func(string, string) { doubted = true }}
			l.Arm(c.fault, c.op, time.Second)
			_, _, err := l.Begin(context.Background(), "m1", "h", noon)
			_, wrote, _ := inner.Get(context.Background(), "m1")
			if wrote != c.wrote || (err != nil) != c.fails || errors.Is(err, context.DeadlineExceeded) != c.deadline {
				t.Errorf("wrote %t, err %v; want wrote %t, fails %t, deadline %t", wrote, err, c.wrote, c.fails, c.deadline)
			}
			if (inner.err != nil) != c.expiredCtx {
				t.Errorf("store's ctx error %v; want expired %t", inner.err, c.expiredCtx)
			}
			if moved := clock.Now().Sub(noon); moved != c.moved {
				t.Errorf("clock moved %s; want %s", moved, c.moved)
			}
			if doubted != c.doubt {
				t.Errorf("doubt %t; want %t", doubted, c.doubt)
			}
		})
	}
}

// TestLedgerFinishFailureLeavesDoubt: a Finish that fails while the entry
// stays ATTEMPTING puts the refkey in doubt; a Begin whose ctx has passed
// its deadline writes nothing on a store that honours it.
func TestLedgerFinishFailureLeavesDoubt(t *testing.T) {
	var why string
	l := &Ledger{inner: ledgertest.NewMem(), clock: NewClock(noon), Faults: map[string]int{}, doubt: func(_, w string) { why = w }}
	if _, _, err := l.Begin(context.Background(), "m1", "h", noon); err != nil {
		t.Fatal(err)
	}
	l.Arm("timeout", "finish", 0)
	if err := l.Finish(context.Background(), "m1", "h", 1, "SENT", "", noon); err == nil || why == "" || l.Failed != 1 {
		t.Errorf("finish err %v, doubt %q, failed %d", err, why, l.Failed)
	}
}

// TestLedgerCrashLosesTheLastBegin: the planted lost write puts the bbolt
// file back as it was before the last Begin when the process crashes.
func TestLedgerCrashLosesTheLastBegin(t *testing.T) {
	for _, lose := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "ledger.db")
		open := func() (ledger.Store, error) { return ledger.Open(path) }
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		l := &Ledger{inner: st, clock: NewClock(noon), open: open, path: path, loseBegin: lose, Faults: map[string]int{}, doubt: func(string, string) {}}
		if _, _, err := l.Begin(context.Background(), "m1", "h", noon); err != nil {
			t.Fatal(err)
		}
		if err := l.Crash(); err != nil {
			t.Fatal(err)
		}
		_, found, err := l.Inner().Get(context.Background(), "m1")
		if err != nil || found == lose {
			t.Errorf("lose=%t: entry found %t after the crash (err %v)", lose, found, err)
		}
		_ = l.Close()
	}
}

// TestLedgerOutage: "down" refuses every operation, Ping and CheckWrite
// included, until its end by the clock, writing nothing; an outage armed
// during one extends it (same Outage), one armed after it is the next;
// "" ends it.
func TestLedgerOutage(t *testing.T) {
	clock := NewClock(noon)
	l := &Ledger{inner: ledgertest.NewMem(), clock: clock, Faults: map[string]int{}, doubt: func(string, string) {}}
	ctx := context.Background()
	refused := func(what string) {
		t.Helper()
		_, _, berr := l.Begin(ctx, "m1", "h", noon)
		perr, cerr := l.Ping(ctx), l.CheckWrite(ctx)
		if !errors.Is(berr, ErrLedgerFault) || !errors.Is(perr, ErrLedgerFault) || !errors.Is(cerr, ErrLedgerFault) || !l.Down() {
			t.Errorf("%s: begin %v, ping %v, check write %v, down %t; want all refused", what, berr, perr, cerr, l.Down())
		}
		if _, found, _ := l.Inner().Get(ctx, "m1"); found {
			t.Errorf("%s: a refused Begin wrote its entry", what)
		}
	}
	answers := func(what string) {
		t.Helper()
		if err := l.CheckWrite(ctx); err != nil || l.Down() {
			t.Errorf("%s: check write %v, down %t; want the ledger back", what, err, l.Down())
		}
	}
	l.Arm("down", "", 30*time.Second)
	refused("at its start")
	first := l.Outage()
	clock.Advance(20 * time.Second)
	l.Arm("down", "", 30*time.Second) // extends it to 50 s
	clock.Advance(29 * time.Second)
	refused("29 s into the extension")
	if l.Outage() != first {
		t.Errorf("an outage armed during one is number %d; want %d (the same)", l.Outage(), first)
	}
	clock.Advance(time.Second)
	answers("at its end")
	l.Arm("down", "", time.Minute)
	if l.Outage() != first+1 {
		t.Errorf("the next outage is number %d; want %d", l.Outage(), first+1)
	}
	l.Arm("", "", 0)
	answers("disarmed")
	if l.Faults["down"] != 3 {
		t.Errorf("Faults[down] = %d; want 3", l.Faults["down"])
	}
}
